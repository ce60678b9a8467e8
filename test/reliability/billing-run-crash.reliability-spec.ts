import { baseLines, type BillingRun } from '../support/billing-run-factory';
import request from 'supertest';
import { bearer } from '../support/factories';
import { type BillingRunServer, killInBatch, startBillingRunServer } from '../support/billing-run-process';
import { suiteDatabaseUrl } from '../support/server-process';
import { createTenantWithToken, uniqueSlug } from '../support/test-app';
import { waitUntil, waitFor } from '../support/wait-for';
import { listAllAt, postMany, queryAt, repeats } from '../support/remote';

/**
 * Issue #16: a bill run survives the crash of the process carrying it out. The server runs as a child process
 * (src/main.ts, preloaded by support/billing-run-process.ts so a batch of this suite's tenant is held open inside its
 * transaction), is killed with SIGKILL in the middle of a batch after some batches committed, and is started again on
 * the same database: once the dead process' lease (BILLING_RUN_LEASE_MS) runs out, the restarted worker takes the run
 * up and bills who is left. Every subscriber ends up billed exactly once, the invoice numbers have no gap, and the
 * run's figures count the batches committed before the kill.
 *
 * The database, as in provisioning-crash.reliability-spec.ts: always DATABASE_URL — on the embedded database the
 * global setup serves PGlite on a socket, in CI's reliability pass it is the Postgres server — so the state the crash
 * left is read with a plain `pg` client on the same URL while no server runs.
 */

interface Invoice {
  id: string;
  number: string;
  sequence: number | null;
  subscriber_id: string;
  currency: string;
  status: string;
  total: number;
  due_date: string;
  lines: { description: string; quantity: number; unit_amount: number; amount: number }[];
}
interface LedgerEntry {
  type: string;
  amount: number;
  balance_after: number;
  source_id: string;
  currency: string;
}

const SUBSCRIBERS = 60;
const BATCH_SIZE = 5;
const PRICE = 4900;
const PLAN_NAME = 'Fibre 300';
/** A billing day (the profile's billing_day is 1); the run names it, so no clock is involved. */
const AS_OF = '2026-03-01';
const PERIOD_LINE = `${PLAN_NAME}, 2026-03-01 to 2026-03-31`;
const DUE_DATE = '2026-03-15'; // as_of + payment_terms_days 14
/** How long each held batch of this suite's tenant stays open inside its transaction, in the first process. */
const HOLD_MS = 400;

/**
 * The scheduler off, small batches, a short lease (so the restarted process takes the run up again quickly), quick
 * workers; no network driver, so activations complete without RADIUS tables.
 */
const ENV: Record<string, string> = {
  BILLING_SCHEDULER_ENABLED: 'false',
  BILLING_RUN_BATCH_SIZE: String(BATCH_SIZE),
  BILLING_RUN_LEASE_MS: '1000',
  AUTOMATION_POLL_MS: '100',
  PROVISIONING_POLL_MS: '50',
  PROVISIONING_RETRY_DELAYS_S: '0.05,0.05',
  NETWORK_DRIVER: 'none',
};

async function getRun(url: string, token: string, id: string): Promise<BillingRun> {
  const res = await request(url).get(`/api/v1/billing-runs/${id}`).set(bearer(token));
  expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({
    status: 200,
    body: null,
  });
  return res.body.data as BillingRun;
}

async function startRun(url: string, token: string, asOf: string): Promise<BillingRun> {
  const res = await request(url).post('/api/v1/billing-runs').set(bearer(token)).send({ as_of: asOf });
  expect({ status: res.status, body: res.status === 202 ? null : res.body }).toEqual({
    status: 202,
    body: null,
  });
  expect(res.body.data).toMatchObject({ as_of: asOf, status: 'running', dry_run: false, trigger: 'api' });
  return res.body.data as BillingRun;
}

async function runEnded(url: string, token: string, id: string, timeoutMs: number): Promise<BillingRun> {
  let last: BillingRun | undefined;
  return waitFor(
    async () => {
      last = await getRun(url, token, id);
      return last.status === 'running' ? undefined : last;
    },
    { timeout: timeoutMs, interval: 50, what: `bill run ${id} ended` },
  ).catch((error: Error) => {
    throw new Error(`${error.message} (last seen: ${JSON.stringify(last)})`);
  });
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('A bill run across a crash of its worker', () => {
  const started: BillingRunServer[] = [];

  const start = async (url: string, hold: { ms: number; tenantSlug: string }) => {
    const server = await startBillingRunServer(url, hold, ENV);
    started.push(server);
    return server;
  };

  afterAll(async () => {
    for (const server of started) {
      await server.stop('SIGKILL');
    }
  });

  it('should bill every subscriber exactly once, numbers without gaps, after the process is SIGKILLed mid-batch and restarted', async () => {
    const db = suiteDatabaseUrl();
    const slug = uniqueSlug('brun');
    const first = await start(db, { ms: HOLD_MS, tenantSlug: slug });
    const tenant = await createTenantWithToken(first.url, ['admin'], slug);

    // One tenant: a default profile billing on the 1st, one plan, 60 subscribers with one service each, all active.
    const profile = await request(first.url).post('/api/v1/billing-profiles').set(bearer(tenant.token)).send({
      name: 'Residential monthly',
      currency: 'EUR',
      billing_day: 1,
      payment_terms_days: 14,
      auto_suspend_after_days: null,
      is_default: true,
    });
    expect({ status: profile.status, is_default: profile.body.data?.is_default }).toEqual({
      status: 201,
      is_default: true,
    });
    const plan = await request(first.url)
      .post('/api/v1/service-plans')
      .set(bearer(tenant.token))
      .send({ name: PLAN_NAME, download_kbps: 300_000, upload_kbps: 50_000, price: PRICE, currency: 'EUR' });
    expect(plan.status).toBe(201);
    const planId = plan.body.data.id as string;
    const subscribers = await postMany(
      [first.url],
      tenant.token,
      SUBSCRIBERS,
      20,
      (i) => ({
        path: '/api/v1/subscribers',
        body: { full_name: `Billed ${i}`, status: 'active', external_id: `${slug}-${i}` },
      }),
      201,
    );
    const subscriberIds = subscribers.map((subscriber) => subscriber.id as string).sort();
    await postMany(
      [first.url],
      tenant.token,
      SUBSCRIBERS,
      20,
      (i) => ({
        path: `/api/v1/subscribers/${subscriberIds[i]}/services`,
        body: {
          plan_id: planId,
          pppoe_username: `bill${String(i).padStart(3, '0')}`,
          pppoe_password: 'secret-pw-1',
        },
      }),
      202,
    );
    await waitFor(
      async () => {
        const active = await listAllAt<{ id: string }>(first.url, tenant.token, '/api/v1/services', {
          status: 'active',
        });
        return active.length === SUBSCRIBERS ? true : undefined;
      },
      { timeout: 30_000, interval: 50, what: `all ${SUBSCRIBERS} services active` },
    );

    // The run: wait until some batches have committed, then kill the process inside the next batch's transaction.
    const run = await startRun(first.url, tenant.token, AS_OF);
    const progressed = await waitUntil(
      () => getRun(first.url, tenant.token, run.id),
      (seen) => seen.status !== 'running' || seen.subscribers_billed > 0,
      { interval: 20, what: 'a committed batch of the run' },
    );
    if (progressed.status !== 'running') {
      // Not meant to happen: the run is held 400 ms a batch for 12 batches. Say why it ended.
      const failed = await listAllAt(first.url, tenant.token, '/api/v1/events', {
        type: 'billing_run.failed',
      });
      throw new Error(
        `the run ended before the kill: ${JSON.stringify(progressed)}; events: ${JSON.stringify(failed)}`,
      );
    }
    expect(progressed.subscribers_billed).toBeLessThan(SUBSCRIBERS);
    const heldAtKill = await killInBatch(first, first.batches().length);
    expect(await first.exited).toBe('SIGKILL');
    expect(heldAtKill.length).toBe(BATCH_SIZE);

    // The state the crash left, read from the database while no server runs.
    const [runAtKill] = await queryAt<{
      status: string;
      subscribers_billed: number;
      invoices_created: number;
    }>(db, 'SELECT status, subscribers_billed, invoices_created FROM billing_runs WHERE id = $1', [run.id]);
    const atKill = await queryAt<{ subscriber_id: string; number: number }>(
      db,
      'SELECT subscriber_id, sequence AS number FROM invoices WHERE tenant_id = $1 ORDER BY sequence',
      [tenant.tenantId],
    );
    const [counterAtKill] = await queryAt<{ last_number: number }>(
      db,
      `SELECT max(last_sequence) AS last_number FROM document_counters WHERE tenant_id = $1 AND series = 'invoice'`,
      [tenant.tenantId],
    );
    const billedAtKill = atKill.map((row) => row.subscriber_id);
    expect(runAtKill.status).toBe('running');
    // Whole batches committed, and the run's figures were written with them.
    expect(billedAtKill.length).toBeGreaterThanOrEqual(progressed.subscribers_billed);
    expect(billedAtKill.length % BATCH_SIZE).toBe(0);
    expect(billedAtKill.length).toBeLessThan(SUBSCRIBERS);
    expect({ billed: runAtKill.subscribers_billed, invoices: runAtKill.invoices_created }).toEqual({
      billed: billedAtKill.length,
      invoices: billedAtKill.length,
    });
    expect(atKill.map((row) => Number(row.number))).toEqual(range(1, billedAtKill.length));
    // The held batch's writes (its invoices, its reserved numbers) went with the process.
    expect(billedAtKill.filter((id) => heldAtKill.includes(id))).toEqual([]);
    expect(Number(counterAtKill.last_number)).toBe(billedAtKill.length);

    // Restarted on the same database, unheld: the lease of the dead process runs out and the run is taken up.
    const second = await start(db, { ms: 0, tenantSlug: slug });
    const ended = await runEnded(second.url, tenant.token, run.id, 30_000);
    expect(ended).toMatchObject({
      status: 'completed',
      as_of: AS_OF,
      subscribers_due: SUBSCRIBERS,
      subscribers_billed: SUBSCRIBERS,
      invoices_created: SUBSCRIBERS,
      credits_created: 0,
      amount_total: [{ currency: 'EUR', amount: SUBSCRIBERS * PRICE }],
      errors: [],
    });
    expect(ended.completed_at).not.toBeNull();
    // The restarted process billed exactly the subscribers left at the kill (the held batch's among them), each once.
    const billedBySecond = second.batches().flat();
    expect(repeats(billedBySecond)).toEqual({});
    expect([...billedBySecond].sort()).toEqual(subscriberIds.filter((id) => !billedAtKill.includes(id)));
    expect(heldAtKill.filter((id) => !billedBySecond.includes(id))).toEqual([]);
    // The run's figures, over all runs of the tenant: one run, 60 billed.
    const runs = await listAllAt<BillingRun>(second.url, tenant.token, '/api/v1/billing-runs');
    expect(runs.map((each) => each.id)).toEqual([run.id]);
    expect(runs.reduce((total, each) => total + each.subscribers_billed, 0)).toBe(SUBSCRIBERS);

    // One invoice per subscriber for the period, numbered 1..60 in the invoice series without a gap or a repeat
    // (issue 29: INV-{YYYY}-{seq:6}, the year of the run's day).
    const invoices = await listAllAt<Invoice>(second.url, tenant.token, '/api/v1/invoices');
    expect(repeats(invoices.map((invoice) => invoice.subscriber_id))).toEqual({});
    expect(invoices.map((invoice) => invoice.subscriber_id).sort()).toEqual(subscriberIds);
    expect(repeats(invoices.map((invoice) => invoice.number))).toEqual({});
    expect(invoices.map((invoice) => invoice.sequence!).sort((a, b) => a - b)).toEqual(range(1, SUBSCRIBERS));
    for (const invoice of invoices) {
      expect(invoice.number).toBe(`INV-${AS_OF.slice(0, 4)}-${String(invoice.sequence).padStart(6, '0')}`);
    }
    // Those committed before the kill kept their numbers.
    for (const row of atKill) {
      expect(invoices.find((invoice) => invoice.subscriber_id === row.subscriber_id)?.sequence).toBe(
        Number(row.number),
      );
    }
    for (const invoice of invoices) {
      expect({
        subscriber_id: invoice.subscriber_id,
        currency: invoice.currency,
        status: invoice.status,
        total: invoice.total,
        due_date: invoice.due_date,
        lines: baseLines(invoice.lines),
      }).toEqual({
        subscriber_id: invoice.subscriber_id,
        currency: 'EUR',
        status: 'open',
        total: PRICE,
        due_date: DUE_DATE,
        lines: [{ description: PERIOD_LINE, quantity: 1, unit_amount: PRICE, amount: PRICE }],
      });
    }

    // Each subscriber's invoices filtered by subscriber_id: exactly its one; its balance and ledger carry it once.
    for (const subscriberId of subscriberIds) {
      const own = await listAllAt<Invoice>(second.url, tenant.token, '/api/v1/invoices', {
        subscriber_id: subscriberId,
      });
      expect({ subscriberId, invoices: own.length }).toEqual({ subscriberId, invoices: 1 });
      const balance = await request(second.url)
        .get(`/api/v1/subscribers/${subscriberId}/balance`)
        .set(bearer(tenant.token));
      expect(balance.status).toBe(200);
      const eur = (balance.body.data.balances as { currency: string; balance: number }[]).find(
        (row) => row.currency === 'EUR',
      );
      expect({ subscriberId, balance: eur?.balance }).toEqual({ subscriberId, balance: own[0].total });
      const ledger = await listAllAt<LedgerEntry>(
        second.url,
        tenant.token,
        `/api/v1/subscribers/${subscriberId}/ledger`,
      );
      expect({
        subscriberId,
        ledger: ledger.map((e) => [e.type, e.amount, e.balance_after, e.source_id]),
      }).toEqual({
        subscriberId,
        ledger: [['invoice', PRICE, PRICE, own[0].id]],
      });
    }

    // The event log: one invoice.created and one invoice.finalized per invoice, one billing_run.completed.
    const invoiceIds = invoices.map((invoice) => invoice.id).sort();
    for (const type of ['invoice.created', 'invoice.finalized']) {
      const events = await listAllAt<{ subject_id: string }>(second.url, tenant.token, '/api/v1/events', {
        type,
      });
      expect({ type, subjects: events.map((event) => event.subject_id).sort() }).toEqual({
        type,
        subjects: invoiceIds,
      });
    }
    const completed = await listAllAt<{ subject_id: string }>(second.url, tenant.token, '/api/v1/events', {
      type: 'billing_run.completed',
    });
    expect(completed.map((event) => event.subject_id)).toEqual([run.id]);

    // A second run for the same day bills nobody.
    const again = await startRun(second.url, tenant.token, AS_OF);
    const againEnded = await runEnded(second.url, tenant.token, again.id, 30_000);
    expect(againEnded).toMatchObject({
      status: 'completed',
      subscribers_due: 0, // due: not yet billed for the period when the run starts
      subscribers_billed: 0,
      invoices_created: 0,
      credits_created: 0,
      errors: [],
    });
    const allRuns = await listAllAt<BillingRun>(second.url, tenant.token, '/api/v1/billing-runs');
    expect(allRuns.reduce((total, each) => total + each.subscribers_billed, 0)).toBe(SUBSCRIBERS);
    expect(await listAllAt<Invoice>(second.url, tenant.token, '/api/v1/invoices')).toHaveLength(SUBSCRIBERS);

    expect(await second.stop('SIGTERM')).toBe('0');
  }, 90_000);
});
