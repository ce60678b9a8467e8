/**
 * Runs the embedded database (src/database/embedded-postgres.ts) in a process of its own, as the server does, for
 * the suites that look at it from outside: on DATA_DIR (EMBEDDED_DIR) or in memory. It counts the fsync calls on the
 * write-ahead log, and on `{type: 'commit'}` inserts one row through its URL and reports how many happened before
 * the INSERT was acknowledged. Reports {type: 'ready', url} over IPC; SIGTERM stops it, and so does the end of the
 * process that started it. test/support/global-setup.ts runs one per jest worker.
 */
import fs from 'node:fs';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';

let walFsyncs = 0;
const fsyncSync = fs.fsyncSync;
fs.fsyncSync = (fd: number): void => {
  const path = fs.readlinkSync(`/proc/self/fd/${fd}`);
  if (path.includes('/pg_wal/')) {
    walFsyncs++;
  }
  fsyncSync(fd);
};

async function commitOneRow(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE TABLE IF NOT EXISTS durability_probe (id serial PRIMARY KEY, note text)');
    const before = walFsyncs;
    await client.query("INSERT INTO durability_probe (note) VALUES ('committed')");
    return walFsyncs - before;
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const db = await startEmbeddedPostgres(process.env.EMBEDDED_DIR || null);
  process.on('message', (message: { type: string }) => {
    if (message.type !== 'commit') {
      return;
    }
    commitOneRow(db.url).then(
      (fsyncs) => process.send?.({ type: 'committed', walFsyncs: fsyncs }),
      (error: Error) => process.send?.({ type: 'error', message: error.message }),
    );
  });
  process.on('SIGTERM', () => void db.stop().then(() => process.exit(0)));
  // The process that started it has gone (a test run ended without its teardown): nobody can reach it any more.
  process.on('disconnect', () => void db.stop().then(() => process.exit(0)));
  process.send?.({ type: 'ready', url: db.url });
}

main().catch((error: unknown) => {
  process.stderr.write(`embedded database failed to start: ${String(error)}\n`);
  process.exit(1);
});
