import type { WorkerDatabases } from './global-setup';

/** Stops the workers' embedded databases of test/support/global-setup.ts, if it started any. */
export default async function globalTeardown(): Promise<void> {
  const embedded = (globalThis as { __EMBEDDED_PG__?: WorkerDatabases }).__EMBEDDED_PG__;
  if (embedded) {
    await embedded.stop();
    delete (globalThis as { __EMBEDDED_PG__?: WorkerDatabases }).__EMBEDDED_PG__;
    delete process.env.DATABASE_URL;
    delete process.env.EMBEDDED_DATABASE_URLS;
  }
}
