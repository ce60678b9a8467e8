/**
 * For `npm run bench -- --embedded`: PGlite (the app's own embedded Postgres, src/database/embedded-postgres.ts) in a
 * process of its own, served on a loopback port, so the server under test, baseline (a) and the seeding all reach the
 * same embedded database, and its WASM work does not stall the load generator's event loop.
 * Env: BENCH_PGLITE_DIR. Reports {type:'ready', url} over IPC; SIGTERM stops it cleanly.
 */
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';

async function main(): Promise<void> {
  const db = await startEmbeddedPostgres(process.env.BENCH_PGLITE_DIR ?? null);
  process.send?.({ type: 'ready', url: db.url });
  process.on('SIGTERM', () => {
    db.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`embedded database failed to start: ${String(error)}\n`);
  process.exit(1);
});
