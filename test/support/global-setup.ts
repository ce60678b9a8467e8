import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** What the global teardown stops (the same process runs both hooks). */
export interface WorkerDatabases {
  stop(): Promise<void>;
}

/**
 * One in-memory embedded database (test/support/embedded-host.ts) in a Node process of its own. Its own process,
 * because PGlite is Postgres compiled to WASM and runs on the thread that loaded it: beside the jest worker that
 * queries it, it would take turns with the application instead of using the second core.
 */
function startDatabaseProcess(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'test', 'support', 'embedded-host.ts')],
    { cwd: ROOT, env: { ...process.env, EMBEDDED_DIR: '' }, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((ready, fail) => {
    child.once('exit', (code) => fail(new Error(`embedded test database ended (${code}): ${stderr.trim()}`)));
    child.once('message', (message: { url: string }) => {
      child.removeAllListeners('exit');
      // Not waited for by the jest process: the teardown ends it, and so does the end of this process (IPC).
      child.unref();
      child.channel?.unref();
      ready({ url: message.url, child });
    });
  });
}

function stopDatabaseProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((stopped) => {
    child.once('exit', () => stopped());
    // Referenced again while it stops: an unreferenced child's exit does not keep this process alive, so without it
    // the jest process ran out of work while awaiting here, ended with code 0 before jest set its own, and a run with
    // failed tests passed (npm test and CI answered 0).
    child.ref();
    child.kill('SIGTERM');
  });
}

/**
 * Without DATABASE_URL, each jest worker gets an in-memory embedded database of its own, each in a process of its
 * own, so that the workers' database work runs in parallel (PGlite serves one connection's transaction at a time).
 * EMBEDDED_DATABASE_URLS lists them; test/support/worker-database.ts points each worker's DATABASE_URL at the one of
 * its JEST_WORKER_ID. DATABASE_URL itself is the first, for a run in band and for callers without a config (the
 * reliability setup). Suites make their own tenants, so the suites sharing a worker's database never see each
 * other's rows. With DATABASE_URL set, every worker runs on that server instead.
 */
export default async function globalSetup(globalConfig?: { maxWorkers?: number }): Promise<void> {
  if (process.env.DATABASE_URL) {
    return;
  }
  const count = Math.max(1, globalConfig?.maxWorkers ?? 1);
  const started = await Promise.allSettled(Array.from({ length: count }, () => startDatabaseProcess()));
  const children = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value.child] : []));
  const databases: WorkerDatabases = {
    stop: async () => {
      await Promise.all(children.map(stopDatabaseProcess));
    },
  };
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) {
    await databases.stop();
    throw failure.reason;
  }
  const urls = started.map((result) => (result.status === 'fulfilled' ? result.value.url : ''));
  (globalThis as { __EMBEDDED_PG__?: WorkerDatabases }).__EMBEDDED_PG__ = databases;
  process.env.EMBEDDED_DATABASE_URLS = JSON.stringify(urls);
  process.env.DATABASE_URL = urls[0];
  process.env.DATABASE_POOL_MAX = '1'; // what the app itself uses on an embedded database
  process.env.TEST_EMBEDDED_DATABASE = 'true';
}
