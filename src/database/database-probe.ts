import { Client } from 'pg';
import { StartupError } from '../common/startup-error';

const CONNECT_TIMEOUT_MS = 10_000;

/** host:port (or the socket) a Postgres URL names, with pg's defaults, and never its password. */
function addressOf(url: string): { where: string; user: string; database: string } {
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host') ?? (decodeURIComponent(parsed.hostname) || 'localhost');
  const port = parsed.searchParams.get('port') ?? (parsed.port || '5432');
  return {
    where: host.startsWith('/') ? `${host}/.s.PGSQL.${port}` : `${host}:${port}`,
    user: decodeURIComponent(parsed.username) || process.env.USER || 'postgres',
    database: decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username),
  };
}

/** The one line an operator needs for a database that refuses the connection; null for anything unexpected. */
export function describeConnectionError(url: string, error: unknown): StartupError | null {
  const { where, user, database } = addressOf(url);
  const { code = '', message = '' } = (error ?? {}) as { code?: string; message?: string };
  const unreachable = `check that PostgreSQL is running there and that DATABASE_URL names the right host and port`;
  switch (code) {
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
    case 'ECONNRESET':
    case 'ENOENT': // no socket file in that folder
      return new StartupError(`Cannot reach the database at ${where} (${code}): ${unreachable}.`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        `Cannot resolve the database host in DATABASE_URL (${where}, ${code}): check the host name.`,
      );
    case '28P01': // invalid_password
    case '28000': // invalid_authorization_specification: no pg_hba.conf entry, unknown role
      return new StartupError(
        `The database at ${where} refused user "${user}": ${message}. Check the user and password in DATABASE_URL.`,
      );
    case '3D000': // invalid_catalog_name
      return new StartupError(
        `The database "${database}" does not exist at ${where}: create it, or fix its name in DATABASE_URL.`,
      );
    default:
  }
  if (/terminated unexpectedly/i.test(message)) {
    return new StartupError(
      `The database at ${where} closed the connection while connecting: ${unreachable}, and that it is PostgreSQL.`,
    );
  }
  if (/timeout/i.test(message)) {
    return new StartupError(
      `The database at ${where} did not answer within ${CONNECT_TIMEOUT_MS / 1000} s: ${unreachable}, ` +
        'and that no firewall is in the way.',
    );
  }
  if (/password/i.test(message)) {
    return new StartupError(
      `The database at ${where} asks user "${user}" for a password (${message}): put it in DATABASE_URL.`,
    );
  }
  return null;
}

/**
 * Connects once before the application is built, so an unreachable or misconfigured DATABASE_URL stops the boot
 * with one line saying where it tried and what to check, instead of a driver error deep inside Nest's start-up.
 */
export async function probeDatabase(url: string): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined); // a connection dropped after connecting is the pool's business, not ours
  try {
    await client.connect();
  } catch (error) {
    throw describeConnectionError(url, error) ?? error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
