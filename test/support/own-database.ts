import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startEmbeddedHost } from './server-process';

/** A database of a suite's own: the environment that points an app at it, and how to drop it afterwards. */
export interface OwnDatabase {
  env: Record<string, string>;
  drop: () => Promise<void>;
}

/**
 * A database of the suite's own, for apps whose bill scheduler is on. The scheduler bills every tenant with services
 * in its database: on the database the other suites share it would start a run per day for each of their hundreds of
 * tenants (the days caught up included), and the suite's own runs would wait behind them. So: on the embedded
 * database, a private in-memory one; on a Postgres, a fresh database on the same server (dropped at the end), or
 * DATABASE_URL itself when its user may not create one.
 */
export async function ownDatabase(prefix: string): Promise<OwnDatabase> {
  if (process.env.TEST_EMBEDDED_DATABASE === 'true' || !process.env.DATABASE_URL) {
    const db = await startEmbeddedHost(null);
    return { env: { DATABASE_URL: db.url, DATABASE_POOL_MAX: '1' }, drop: db.stop };
  }
  const shared = process.env.DATABASE_URL;
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const onServer = async (sql: string) => {
    const client = new Client({ connectionString: shared });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  try {
    await onServer(`CREATE DATABASE ${name}`);
  } catch {
    return { env: {}, drop: () => Promise.resolve() };
  }
  const url = new URL(shared);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    drop: () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
