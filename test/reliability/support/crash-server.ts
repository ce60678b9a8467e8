/**
 * Server processes and database access for the crash suite (test/reliability/crash.reliability-spec.ts).
 *
 * The server is `src/main.ts` in its own Node process, on the embedded database in a data folder (DATA_DIR, as `npm
 * start` runs without DATABASE_URL) or on a Postgres URL, so it can be killed with SIGKILL. It is preloaded with
 * test/support/provisioning-process.ts and test/support/billing-run-process.ts, which do nothing unless their
 * variables are set: with TEST_PROVISIONING_HOLD (`<ms>:<tenant slug>`) every radius-sql apply prints
 * `provisioning-test applied <order id>` and that tenant's orders are held after their network write; with
 * TEST_BILLING_RUN_HOLD every bill-run batch of that tenant prints `billing-test batch <subscriber ids>` and holds its
 * transaction open. Its output goes to the run's log folder (log-capture.ts) at LOG_LEVEL=info.
 *
 * `openDatabase` gives a `pg` URL on the same data while no server runs: the Postgres URL itself, or, for a data
 * folder, test/support/embedded-host.ts serving that folder in a process of its own (the server holds the folder's
 * lock while it runs, and PGlite loads its files with a dynamic import jest's sandbox refuses).
 */
import { join } from 'node:path';
import { tracedBatches } from '../../support/billing-run-process';
import { tracedApplies } from '../../support/provisioning-process';
import {
  type EmbeddedHost,
  ROOT,
  SERVER_DEFAULTS,
  type ServerChild,
  startEmbeddedHost,
  startServer,
} from '../../support/server-process';
import { pipeChildLogs } from './log-capture';

const PRELOADS = [
  join(ROOT, 'test', 'support', 'provisioning-process.ts'),
  join(ROOT, 'test', 'support', 'billing-run-process.ts'),
];

/** Where a crash suite's server keeps its data. */
export type CrashDatabase = { kind: 'embedded'; dataDir: string } | { kind: 'postgres'; url: string };

export type CrashServer = ServerChild & {
  /** The order ids this process' radius-sql driver applied (one per apply, repeats kept), in order. */
  applied(): string[];
  /** The subscribers of each held bill-run batch this process started writing, in order. */
  batches(): string[][];
};

/**
 * Starts the server on `db` with `env` on top of the suite's defaults (LOG_LEVEL=info, roomy rate limits, the
 * bootstrap token); its output goes to the run's log `logName`. Resolves once it answers /health/live; rejects with
 * its output when it ends before listening.
 */
export async function startCrashServer(
  db: CrashDatabase,
  logName: string,
  env: Record<string, string>,
): Promise<CrashServer> {
  const traces = { applied: (): string[] => [], batches: (): string[][] => [] };
  const server = await startServer({
    // On a data folder: one process on its own data, nothing to share, as server-process.ts' startServerProcess runs it.
    unset:
      db.kind === 'embedded'
        ? ['DATABASE_URL', 'REDIS_URL', 'TEST_EMBEDDED_DATABASE', 'DATABASE_POOL_MAX']
        : ['TEST_EMBEDDED_DATABASE', 'DATABASE_POOL_MAX'],
    env: {
      ...SERVER_DEFAULTS,
      LOG_LEVEL: 'info',
      ...(db.kind === 'embedded' ? { DATA_DIR: db.dataDir } : { DATABASE_URL: db.url }),
      ...env,
    },
    preloads: PRELOADS,
    onSpawn: (spawned) => {
      pipeChildLogs(logName, spawned.child);
      traces.applied = tracedApplies(spawned);
      traces.batches = tracedBatches(spawned);
    },
  });
  return Object.assign(server, traces);
}

export type OpenDatabase = Pick<EmbeddedHost, 'url'> & { close(): Promise<void> };

/** A `pg` URL on `db` while no server runs on it (see above); close it before a server opens the folder again. */
export async function openDatabase(db: CrashDatabase): Promise<OpenDatabase> {
  if (db.kind === 'postgres') {
    return { url: db.url, close: () => Promise.resolve() };
  }
  const host = await startEmbeddedHost(db.dataDir);
  return { url: host.url, close: () => host.stop() };
}
