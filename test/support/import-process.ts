/**
 * Server processes for the import crash suite (test/reliability/import-crash.reliability-spec.ts).
 *
 * This file is also preloaded into those server processes (`node -r <this file> src/main.ts`). There, and only when
 * the process was started with TEST_IMPORT_HOLD (`<ms>`), it wraps the subscribers' and the services' import batch:
 * once a batch has written its records and their events (inside the batch's transaction, nothing committed yet), the process
 * prints `import-test batch <first row>-<last row>` and holds the transaction open that long before the batch's
 * figures and cursor are written and it commits. A SIGKILL sent right after such a line lands inside that batch's
 * open transaction. Nothing of src/ changes; the jest process never sets the variable.
 */
import type { Tx } from '../../src/database/transaction-runner';
import { ServiceImportsService } from '../../src/provisioning';
import { SubscriberImportsService } from '../../src/subscribers';
import { SERVER_DEFAULTS, type ServerChild, startServer, traced } from './server-process';

const BATCH = /^import-test batch (\d+)-(\d+)$/;

const HOLD = /^(\d+)$/.exec(process.env.TEST_IMPORT_HOLD ?? '');
/** `importBatch`, then the batch's line and the hold, before the worker writes the figures and commits. */
function held<Row extends { row: number }, R>(
  importBatch: (tx: Tx, tenantId: string, rows: readonly Row[]) => Promise<R>,
  holdMs: number,
) {
  return async function (this: unknown, tx: Tx, tenantId: string, rows: readonly Row[]): Promise<R> {
    const results = await importBatch.call(this, tx, tenantId, rows);
    if (rows.length > 0) {
      process.stdout.write(`import-test batch ${rows[0].row}-${rows[rows.length - 1].row}\n`);
      await new Promise((resolve) => setTimeout(resolve, holdMs));
    }
    return results;
  };
}

if (HOLD) {
  const holdMs = Number(HOLD[1]);
  SubscriberImportsService.prototype.importBatch = held(
    SubscriberImportsService.prototype.importBatch,
    holdMs,
  );
  ServiceImportsService.prototype.importBatch = held(ServiceImportsService.prototype.importBatch, holdMs);
}

export type ImportServer = ServerChild & {
  /** The [first, last] rows of each held batch this process started writing, in order. */
  batches(): [number, number][];
};

/** `src/main.ts` on `databaseUrl`, its import batches held `holdMs` inside their transaction (0: not held). */
export async function startImportServer(
  databaseUrl: string,
  holdMs: number,
  env: Record<string, string> = {},
): Promise<ImportServer> {
  let batches: () => [number, number][] = () => [];
  const server = await startServer({
    onSpawn: (spawned) =>
      (batches = traced(spawned, BATCH, (match) => [Number(match[1]), Number(match[2])] as [number, number])),
    preloads: [__filename],
    env: { ...SERVER_DEFAULTS, DATABASE_URL: databaseUrl, TEST_IMPORT_HOLD: String(holdMs), ...env },
  });
  return Object.assign(server, { batches });
}

/** SIGKILLs `server` the moment it prints its held batch number `after + 1`; resolves with that batch's rows. */
export function killInBatch(
  server: ImportServer,
  after: number,
  timeoutMs = 60_000,
): Promise<[number, number]> {
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(
      () => finish(() => reject(new Error(`no batch past ${after} in ${timeoutMs} ms`))),
      timeoutMs,
    );
    const finish = (end: () => void) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        end();
      }
    };
    server.onLine(() => {
      const batches = server.batches();
      if (batches.length > after) {
        finish(() => {
          server.child.kill('SIGKILL');
          resolve(batches[batches.length - 1]);
        });
      }
    });
    void server.exited.then((how) =>
      finish(() => reject(new Error(`server ended (${how}) before batch ${after + 1}: ${server.stderr()}`))),
    );
  });
}
