import { QueryFailedError } from 'typeorm';

interface DriverError {
  code?: string;
  constraint?: string;
}

/** True when the error is Postgres' unique_violation, optionally on the named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as DriverError;
  return driverError.code === '23505' && (constraint === undefined || driverError.constraint === constraint);
}
