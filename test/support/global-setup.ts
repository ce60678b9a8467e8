import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';

/**
 * Without DATABASE_URL the suites share one in-memory embedded Postgres for the run; each suite makes its own
 * tenants, so they never see each other's rows. With DATABASE_URL they run on that server instead.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) {
    return;
  }
  const embedded = await startEmbeddedPostgres(null);
  (globalThis as { __EMBEDDED_PG__?: { stop(): Promise<void> } }).__EMBEDDED_PG__ = embedded;
  process.env.DATABASE_URL = embedded.url;
  process.env.DATABASE_POOL_MAX = '1'; // what the app itself uses on an embedded database
  process.env.TEST_EMBEDDED_DATABASE = 'true';
}
