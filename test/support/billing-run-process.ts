/**
 * Server processes for the bill-run crash suite (test/billing-run-crash.e2e-spec.ts).
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
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import type { EntityManager } from 'typeorm';
import { InvoicesRepository } from '../../src/billing/invoices/invoices.repository';
import type { InvoiceRow } from '../../src/billing/invoices/invoices.repository';
import { BOOTSTRAP_TOKEN } from './test-app';

const ROOT = join(__dirname, '..', '..');
const LISTENING = /listening on (http:\/\/\S+)/;
const BATCH = /^billing-test batch (\S+)$/gm;

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

export interface BillingRunServer {
  url: string;
  child: ChildProcess;
  /** Resolves once the process has gone, with its signal (or exit code). */
  exited: Promise<string>;
  /** The subscribers of each held batch this process started writing (one array per printed line), in order. */
  batches(): string[][];
  /** Sends `signal` unless the process has already gone, and resolves with how it ended. */
  stop(signal: NodeJS.Signals): Promise<string>;
  /**
   * SIGKILLs the process the moment it prints a held batch beyond the first `seen` (so the kill lands inside that
   * batch's open transaction), and resolves with that batch's subscribers.
   */
  killInNextBatch(seen: number): Promise<string[]>;
  /** What the process wrote to stderr so far (for failure messages). */
  stderr(): string;
}

/**
 * `src/main.ts` in its own Node process on `databaseUrl` (as test/support/provisioning-process.ts starts it), its bill
 * run batches of tenant `hold.tenantSlug` held `hold.ms` inside their transaction (see above; 0: not held). Resolves
 * once it answers /health/live; rejects with its output when it ends before listening.
 */
export function startBillingRunServer(
  databaseUrl: string,
  hold: { ms: number; tenantSlug: string },
  env: Record<string, string> = {},
): Promise<BillingRunServer> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', __filename, join(ROOT, 'src', 'main.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: '0',
        LOG_LEVEL: 'silent',
        API_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        RATE_LIMIT_MAX: '1000000',
        ABUSE_AUTH_FAILURES_MAX: '1000000',
        TEST_BILLING_RUN_HOLD: `${hold.ms}:${hold.tenantSlug}`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  const server: BillingRunServer = {
    url: '',
    child,
    exited,
    batches: () => [...stdout.matchAll(BATCH)].map((match) => match[1].split(',')),
    stop: (signal) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
      }
      return exited;
    },
    stderr: () => stderr,
    killInNextBatch: (seen) =>
      new Promise<string[]>((resolve, reject) => {
        const check = () => {
          const batches = server.batches();
          if (batches.length > seen) {
            child.kill('SIGKILL');
            child.stdout?.off('data', check);
            resolve(batches[seen]);
          }
        };
        child.stdout?.on('data', check);
        check();
        void exited.then((how) => reject(new Error(`server ended (${how}) before a held batch ${seen + 1}`)));
      }),
  };
  return new Promise<BillingRunServer>((resolve, reject) => {
    const onData = () => {
      const match = LISTENING.exec(stdout);
      if (!match) {
        return;
      }
      child.stdout?.off('data', onData);
      server.url = match[1];
      request(server.url)
        .get('/health/live')
        .then(() => resolve(server), reject);
    };
    child.stdout?.on('data', onData);
    void exited.then((how) =>
      reject(new Error(`server ended (${how}) before listening: ${stderr.trim() || stdout.trim()}`)),
    );
  });
}
