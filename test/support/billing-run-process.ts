/**
 * Server processes for the bill-run crash suite (test/reliability/billing-run-crash.reliability-spec.ts).
 *
 * This file is also preloaded into those server processes (`node -r <this file> src/main.ts`). There, and only when
 * the process was started with TEST_BILLING_RUN_HOLD (`<ms>:<tenant slug>`), it wraps the bill run's batch write: once
 * a batch of that tenant has inserted its invoices (inside the batch's transaction, with its invoice numbers reserved
 * and its billed periods claimed, nothing committed yet), the process prints `billing-test batch <subscriber ids>` on
 * stdout and holds the transaction open for that many milliseconds before the batch goes on (ledger, events, the
 * run's figures) and commits. A SIGKILL sent right after such a line lands inside that batch's open transaction, so
 * the suite knows which subscribers were being billed when the process died. Batches of other tenants (runs other
 * suites left in the shared database) are not held. Nothing of src/ changes; the jest process never sets the
 * variable, so importing the helpers patches nothing.
 */
import type { EntityManager } from 'typeorm';
import { InvoicesRepository } from '../../src/billing/invoices/invoices.repository';
import type { InvoiceRow } from '../../src/billing/invoices/invoices.repository';
import { SERVER_DEFAULTS, type ServerChild, startServer, traced } from './server-process';

const BATCH = /^billing-test batch (\S+)$/;

const HOLD = /^(\d+):(\S+)$/.exec(process.env.TEST_BILLING_RUN_HOLD ?? '');
if (HOLD) {
  const [, holdMs, tenantSlug] = HOLD;
  let tenantId: string | undefined;
  const insertInvoices = InvoicesRepository.prototype.insertMany;
  InvoicesRepository.prototype.insertMany = async function (
    this: InvoicesRepository,
    manager: EntityManager,
    invoices: InvoiceRow[],
  ) {
    await insertInvoices.call(this, manager, invoices);
    if (invoices.length === 0) {
      return;
    }
    if (tenantId === undefined) {
      const rows: { id: string }[] = await manager.query('SELECT id FROM tenants WHERE slug = $1', [
        tenantSlug,
      ]);
      tenantId = rows[0]?.id;
    }
    if (invoices[0].tenantId === tenantId) {
      process.stdout.write(
        `billing-test batch ${invoices.map((invoice) => invoice.subscriberId).join(',')}\n`,
      );
      await new Promise((resolve) => setTimeout(resolve, Number(holdMs)));
    }
  };
}

/** The subscribers of each held `billing-test batch` line `server` printed from now on, one array per line, in order. */
export function tracedBatches(server: ServerChild): () => string[][] {
  return traced(server, BATCH, (match) => match[1].split(','));
}

/**
 * SIGKILLs `server` the moment it prints a held batch numbered past `after` while nothing is `missing()`, so the kill
 * lands inside that batch's open transaction; resolves with that batch's subscribers. Rejects when the process ends
 * first or, given `timeoutMs`, when that passes first, naming what was still missing.
 */
export function killInBatch(
  server: ServerChild & { batches(): string[][] },
  after: number,
  options: { missing?: () => string[]; timeoutMs?: number } = {},
): Promise<string[]> {
  const missing = options.missing ?? (() => []);
  return new Promise<string[]>((resolve, reject) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (end: () => void) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        end();
      }
    };
    if (options.timeoutMs) {
      const waited = `no kill within ${options.timeoutMs} ms`;
      timer = setTimeout(
        () =>
          finish(() => reject(new Error(`${waited}; missing: ${missing().join(', ') || 'a held batch'}`))),
        options.timeoutMs,
      );
    }
    let seen = server.batches().length;
    server.onLine(() => {
      const batches = server.batches();
      if (done || batches.length === seen) {
        return;
      }
      seen = batches.length;
      if (seen > after && missing().length === 0) {
        finish(() => {
          server.child.kill('SIGKILL');
          resolve(batches[seen - 1]);
        });
      }
    });
    void server.exited.then((how) =>
      finish(() =>
        reject(new Error(`server ended (${how}) before a held batch past ${after}: ${server.stderr()}`)),
      ),
    );
  });
}

export type BillingRunServer = ServerChild & {
  /** The subscribers of each held batch this process started writing (one array per printed line), in order. */
  batches(): string[][];
};

/**
 * `src/main.ts` in its own Node process on `databaseUrl` (as test/support/provisioning-process.ts starts it), its bill
 * run batches of tenant `hold.tenantSlug` held `hold.ms` inside their transaction (see above; 0: not held). Resolves
 * once it answers /health/live; rejects with its output when it ends before listening.
 */
export async function startBillingRunServer(
  databaseUrl: string,
  hold: { ms: number; tenantSlug: string },
  env: Record<string, string> = {},
): Promise<BillingRunServer> {
  let batches: () => string[][] = () => [];
  const server = await startServer({
    onSpawn: (spawned) => (batches = tracedBatches(spawned)),
    preloads: [__filename],
    env: {
      ...SERVER_DEFAULTS,
      DATABASE_URL: databaseUrl,
      TEST_BILLING_RUN_HOLD: `${hold.ms}:${hold.tenantSlug}`,
      ...env,
    },
  });
  return Object.assign(server, { batches });
}
