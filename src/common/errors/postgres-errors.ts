import { QueryFailedError } from 'typeorm';
import { ApiError } from './api-error';

interface DriverError {
  code?: string;
  constraint?: string;
}

/** True when the error is Postgres' unique_violation, optionally on the named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof QueryFailedError)) {
    return false;
  }
  const driverError = error.driverError as DriverError;
  return driverError.code === '23505' && (constraint === undefined || driverError.constraint === constraint);
}

/** True when the error is Postgres' foreign_key_violation on the named constraint. */
export function isForeignKeyViolation(error: unknown, constraint: string): boolean {
  if (!(error instanceof QueryFailedError)) {
    return false;
  }
  const driverError = error.driverError as DriverError;
  return driverError.code === '23503' && driverError.constraint === constraint;
}

/**
 * Postgres codes of a database that cannot serve right now: a statement cancelled by statement_timeout (57014), a
 * session ended by idle_in_transaction_session_timeout (25P03), a server shutting down or starting (57P01–57P03),
 * out of connections (53300), or a broken connection (class 08, and the socket's own errors).
 */
const UNAVAILABLE_CODES = new Set([
  '57014',
  '25P03',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'ECONNREFUSED',
  'ECONNRESET',
]);

/** What pg and pg-pool say when no connection could be had in time or the connection broke. */
const UNAVAILABLE_MESSAGES = [
  'timeout exceeded when trying to connect', // pg-pool: no pooled connection within connectionTimeoutMillis
  'Connection terminated', // the server or the network ended the connection (pg)
];

/** True when the failure is the database being stuck, overloaded or away: 503, not a bug. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const causes = [error, (error as { driverError?: unknown } | null)?.driverError];
  return causes.some((cause) => {
    if (!(cause instanceof Error)) {
      return false;
    }
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) {
      return true;
    }
    // Any system error of the socket to the database (ENOENT: a Unix socket's file gone with its server; EAGAIN, its
    // backlog full; ETIMEDOUT, EHOSTUNREACH, EPIPE, a DNS failure of the database's host...): it cannot be reached.
    const syscall = (cause as { syscall?: unknown }).syscall;
    if (typeof syscall === 'string' && ['connect', 'read', 'write', 'getaddrinfo'].includes(syscall)) {
      return true;
    }
    return UNAVAILABLE_MESSAGES.some((message) => cause.message.startsWith(message));
  });
}

/** The answer to a database that cannot serve now: 503 service_unavailable, retry in a second. */
export function databaseUnavailableError(
  message = 'The database is busy or unreachable; retry shortly.',
): ApiError {
  return new ApiError('service_unavailable', message, null, { 'Retry-After': '1' });
}

/**
 * Postgres codes of a transaction that lost a race it can win when run again from the start: deadlock_detected
 * (40P01) and serialization_failure (40001). TransactionRunner retries these; one that escapes it answers 503.
 */
const CONFLICT_CODES = new Set(['40P01', '40001']);

/** True when the error is a deadlock or a serialization failure (TypeORM's QueryFailedError or pg's own error). */
export function isTransactionConflict(error: unknown): boolean {
  const causes = [error, (error as { driverError?: unknown } | null)?.driverError];
  return causes.some((cause) => {
    const code = (cause as { code?: unknown } | null)?.code;
    return typeof code === 'string' && CONFLICT_CODES.has(code);
  });
}

/** The answer to a transaction that kept losing races after its retries: 503, retry in a second. */
export function transactionConflictError(): ApiError {
  return databaseUnavailableError('The request kept colliding with concurrent changes; retry shortly.');
}
