import request from 'supertest';
import { createInvoice, createTransaction, getInvoice } from '../support/billing-factory';
import { expectError, expectList, expectSuccess, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import type { ServicePlan } from '../support/provisioning-factory';
import {
  actOnService,
  addDays,
  addMonths,
  at,
  balanceOf,
  baseLines,
  type BillingRun,
  chargeLine,
  createActiveService,
  createBilledSubscriber,
  createCustomer,
  createEurPlan,
  createProfile,
  createRunTenant,
  creditLine,
  type Customer,
  daysBetween,
  invoicesOf,
  listRuns,
  patchProfile,
  periodLine,
  postRun,
  prorate,
  type RunApp,
  runToCompletion,
  transactionsOf,
  waitForRun,
  runAppSuite,
  schedulerAppSuite,
} from '../support/billing-run-factory';
import type { TestApp } from '../support/test-app';
import { letTimePass, waitUntil } from '../support/wait-for';

/**
 * Issue #28 from the outside: what each defect of the issue looked like to an ISP, replayed on a TestClock. Every test
 * here fails on the bill run before #28 (it inferred the previous period as [as_of − 1 month, as_of), had no charges,
 * no catch-up, no items and no preview).
 */

type Body = Record<string, unknown>;

/** An invoice line as the API answers it, with the references a bill run adds. */
interface Line {
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  service_id?: string;
  plan_id?: string;
  charge_id?: string;
  period_start?: string;
  period_end?: string;
}

interface Charge {
  id: string;
  subscriber_id: string;
  service_id: string | null;
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  currency: string;
  status: 'pending' | 'invoiced';
  source: string;
  source_id: string | null;
  period_start: string | null;
  period_end: string | null;
  invoice_id: string | null;
  credit_id: string | null;
  invoiced_at: string | null;
  created_at: string;
}

interface RunItem {
  id: string;
  billing_run_id: string;
  subscriber_id: string;
  currency: string;
  lines: Line[];
  total: number;
  invoice_id: string | null;
  credit_id: string | null;
  error: string | null;
  created_at: string;
}

interface Upcoming {
  subscriber_id: string;
  currency: string | null;
  as_of: string | null;
  due_date: string | null;
  lines: Line[];
  total: number;
  credit_to_apply: number;
  amount_due: number;
}

const UNKNOWN_SUBSCRIBER = 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB';
const UNKNOWN_RUN = 'brun_01JD3Z6W3R4T5Y6U7I8O9P0QAB';

function api(t: TestApp, token: string) {
  return {
    get: (path: string, query: Record<string, string> = {}) =>
      request(t.http).get(path).query(query).set(bearer(token)),
    post: (path: string, body: Body) => request(t.http).post(path).set(bearer(token)).send(body),
    patch: (path: string, body: Body) => request(t.http).patch(path).set(bearer(token)).send(body),
    delete: (path: string) => request(t.http).delete(path).set(bearer(token)),
  };
}

async function chargesOf(t: TestApp, token: string, subscriberId: string, status?: 'pending' | 'invoiced') {
  const res = await api(t, token).get(
    `/api/v1/subscribers/${subscriberId}/charges`,
    status ? { status, limit: '100' } : { limit: '100' },
  );
  expectList(res);
  return res.body.data as Charge[];
}

async function postCharge(t: TestApp, token: string, subscriberId: string, body: Body): Promise<Charge> {
  const res = await api(t, token).post(`/api/v1/subscribers/${subscriberId}/charges`, body);
  expectSuccess(res, 201);
  return res.body.data as Charge;
}

async function itemsOf(t: TestApp, token: string, runId: string): Promise<RunItem[]> {
  const res = await api(t, token).get(`/api/v1/billing-runs/${runId}/items`, { limit: '100' });
  expectList(res);
  return res.body.data as RunItem[];
}

async function upcomingOf(t: TestApp, token: string, subscriberId: string): Promise<Upcoming> {
  const res = await api(t, token).get(`/api/v1/subscribers/${subscriberId}/upcoming-invoice`);
  expectSuccess(res, 200);
  return res.body.data as Upcoming;
}

/** The balance of the subscriber in EUR (0 with no ledger entry yet). */
async function eurBalance(t: TestApp, token: string, subscriberId: string): Promise<number> {
  const { balances } = await balanceOf(t, token, subscriberId);
  return (
    (balances as { currency: string; balance: number }[]).find((row) => row.currency === 'EUR')?.balance ?? 0
  );
}

/** What an untaxed line carries (issue 29): no rates, its amount its net, no tax. */
const untaxed = (amount: number) => ({ tax_rate_ids: [], net_amount: amount, tax_amount: 0, taxes: [] });

describe('Billing through a real life: bill runs (issue #28)', () => {
  let app: RunApp;
  /** Each test bills days of years of its own (two), later than every earlier test's: the clock only moves forward. */
  let year = 2068;
  const nextYears = () => (year += 2);

  runAppSuite((started) => (app = started), {}, '2070-01-01T00:00:00.000Z');

  /** A real run on `day` at 10:00 (the clock set there first). */
  async function runOn(day: string, token: string): Promise<BillingRun> {
    app.clock.set(at(day, '10:00'));
    const run = await runToCompletion(app.t, token, { as_of: day });
    expect({ day, status: run.status, errors: run.errors }).toEqual({ day, status: 'completed', errors: [] });
    return run;
  }

  describe('defect 1: a billing-day change bills each day once', () => {
    /**
     * The issue's Business customer: billing day 1, billed Dec 1–31 and Jan 1–31, then billed on the 15th. Before
     * #28 the Jan 15 run charged Dec 15–Jan 14 and Jan 15–Feb 14 again (days billed twice).
     */
    it.each([
      ['its profile’s billing_day is PATCHed to 15', 'patch-day'],
      ['it is moved to another profile billing on the 15th', 'move'],
    ])(
      'should bill only the bridge Feb 1–14 on Jan 15 when %s, nothing on Feb 1, then Feb 15–Mar 14',
      async (_, how) => {
        const { t } = app;
        const y = nextYears();
        const next = y + 1;
        const price = 4999;
        app.clock.set(at(`${y}-12-01`, '09:00'));
        const c = await createCustomer(t, { name: 'Business', billing_day: 1 });
        const token = c.tenant.token;
        const plan = await createEurPlan(t, token, price);
        const service = await createActiveService(t, token, c.subscriberId, plan.id);

        await runOn(`${y}-12-01`, token);
        await runOn(`${next}-01-01`, token);
        let invoices = await invoicesOf(t, token, c.subscriberId);
        expect(invoices.map((invoice) => baseLines(invoice.lines))).toEqual([
          [periodLine(plan.name, price, `${y}-12-01`)],
          [periodLine(plan.name, price, `${next}-01-01`)],
        ]);

        app.clock.set(at(`${next}-01-10`, '12:00'));
        if (how === 'patch-day') {
          expectSuccess(await patchProfile(t, token, c.profile.id, { billing_day: 15 }), 200);
        } else {
          const other = await createProfile(t, token, { name: 'Business mid-month', billing_day: 15 });
          expectSuccess(
            await api(t, token).patch(`/api/v1/subscribers/${c.subscriberId}`, {
              billing_profile_id: other.id,
            }),
            200,
          );
        }

        const jan15 = await runOn(`${next}-01-15`, token);
        expect(jan15).toMatchObject({ subscribers_billed: 1, invoices_created: 1, credits_created: 0 });
        invoices = await invoicesOf(t, token, c.subscriberId);
        expect(invoices).toHaveLength(3);
        const bridge = prorate(price, 14, 31);
        expect(bridge).toBe(2258); // 4999 × 14 / 31 = 2257.6
        expect(invoices[2].lines).toEqual([
          {
            description: `${plan.name}, ${next}-02-01 to ${next}-02-14 (14 of 31 days)`,
            quantity: 1,
            unit_amount: bridge,
            amount: bridge,
            service_id: service.id,
            plan_id: plan.id,
            period_start: `${next}-02-01`,
            period_end: `${next}-02-14`,
            ...untaxed(bridge),
          },
        ]);
        expect(invoices[2]).toMatchObject({ total: bridge, due_date: addDays(`${next}-01-15`, 14) });

        // Feb 1 is no longer its billing day: nothing for it.
        const feb1 = await runOn(`${next}-02-01`, token);
        expect(feb1).toMatchObject({ subscribers_billed: 0, invoices_created: 0, credits_created: 0 });
        expect(await invoicesOf(t, token, c.subscriberId)).toHaveLength(3);

        // Feb 15: the full period, no adjustment (every earlier day was billed once).
        await runOn(`${next}-02-15`, token);
        invoices = await invoicesOf(t, token, c.subscriberId);
        expect(invoices).toHaveLength(4);
        expect(baseLines(invoices[3].lines)).toEqual([periodLine(plan.name, price, `${next}-02-15`)]);
        expect(invoices[3].lines[0]).toMatchObject({
          description: `${plan.name}, ${next}-02-15 to ${next}-03-14`,
          period_start: `${next}-02-15`,
          period_end: `${next}-03-14`,
        });
        // Dec 1 to Mar 14 billed: three whole months and 14 days of February.
        expect(invoices.map((invoice) => invoice.total)).toEqual([price, price, bridge, price]);
      },
    );

    it('should bridge a move back from the 15th to the 1st with the days from Feb 15 to the month’s end', async () => {
      const { t } = app;
      const y = nextYears();
      const next = y + 1;
      const price = 3100;
      app.clock.set(at(`${y}-12-15`, '09:00'));
      const c = await createCustomer(t, { name: 'Business', billing_day: 15 });
      const token = c.tenant.token;
      const plan = await createEurPlan(t, token, price);
      await createActiveService(t, token, c.subscriberId, plan.id);
      await runOn(`${y}-12-15`, token);
      await runOn(`${next}-01-15`, token);

      app.clock.set(at(`${next}-01-20`, '12:00'));
      expectSuccess(await patchProfile(t, token, c.profile.id, { billing_day: 1 }), 200);

      await runOn(`${next}-02-01`, token);
      let invoices = await invoicesOf(t, token, c.subscriberId);
      expect(invoices).toHaveLength(3);
      const february = daysBetween(`${next}-02-01`, `${next}-03-01`);
      const days = daysBetween(`${next}-02-15`, `${next}-03-01`);
      expect(baseLines(invoices[2].lines)).toEqual([
        {
          description: `${plan.name}, ${next}-02-15 to ${addDays(`${next}-03-01`, -1)} (${days} of ${february} days)`,
          quantity: 1,
          unit_amount: prorate(price, days, february),
          amount: prorate(price, days, february),
        },
      ]);

      const feb15 = await runOn(`${next}-02-15`, token);
      expect(feb15).toMatchObject({ subscribers_billed: 0, invoices_created: 0 });
      await runOn(`${next}-03-01`, token);
      invoices = await invoicesOf(t, token, c.subscriberId);
      expect(invoices).toHaveLength(4);
      expect(baseLines(invoices[3].lines)).toEqual([periodLine(plan.name, price, `${next}-03-01`)]);
    });
  });

  describe('defect 2: a real run bills only days that have come', () => {
    it('should refuse a real run of tomorrow (422 as_of) and let a dry run look ahead 62 days, not 63', async () => {
      const { t } = app;
      const y = nextYears();
      const today = `${y}-05-20`;
      app.clock.set(at(today, '10:00'));
      const tenant = await createRunTenant(t);
      const token = tenant.token;

      const tomorrow = await postRun(t, token, { as_of: addDays(today, 1) });
      expectError(tomorrow, 422, 'validation_failed', 'as_of');
      expectError(
        await postRun(t, token, { as_of: addDays(today, 1), dry_run: false }),
        422,
        'validation_failed',
        'as_of',
      );
      expectError(
        await postRun(t, token, { as_of: addDays(today, 63), dry_run: true }),
        422,
        'validation_failed',
        'as_of',
      );
      expect(await listRuns(t, token)).toEqual([]);

      const ahead = await postRun(t, token, { as_of: addDays(today, 62), dry_run: true });
      expectSuccess(ahead, 202);
      expect(await waitForRun(t, token, ahead.body.data.id as string)).toMatchObject({
        as_of: addDays(today, 62),
        dry_run: true,
        status: 'completed',
      });
      const now = await postRun(t, token, { as_of: today });
      expectSuccess(now, 202);
      await waitForRun(t, token, now.body.data.id as string);
    });
  });

  describe('defect 4: one-off charges are pending invoice items', () => {
    let c: Customer;
    let token: string;
    let plan: ServicePlan;
    let y: number;

    beforeAll(async () => {
      y = nextYears();
      app.clock.set(at(`${y}-03-01`, '09:00'));
      c = await createCustomer(app.t, { billing_day: 1 });
      token = c.tenant.token;
      plan = await createEurPlan(app.t, token, 2500);
      await createActiveService(app.t, token, c.subscriberId, plan.id);
    });

    it('should record, list and delete a pending charge, and refuse another currency or an unknown subscriber', async () => {
      const { t } = app;
      const charge = await postCharge(t, token, c.subscriberId, {
        description: 'Installation visit',
        amount: 1500,
        currency: 'EUR',
        quantity: 2,
      });
      expect(charge).toMatchObject({
        subscriber_id: c.subscriberId,
        service_id: null,
        description: 'Installation visit',
        quantity: 2,
        unit_amount: 1500,
        amount: 3000,
        currency: 'EUR',
        status: 'pending',
        source: 'api',
        invoice_id: null,
        credit_id: null,
        invoiced_at: null,
      });
      expect((await chargesOf(t, token, c.subscriberId)).map((each) => each.id)).toEqual([charge.id]);

      const deleted = await api(t, token).delete(
        `/api/v1/subscribers/${c.subscriberId}/charges/${charge.id}`,
      );
      expectSuccess(deleted, 200);
      expect(deleted.body.data).toMatchObject({ id: charge.id, status: 'pending', amount: 3000 });
      expect(await chargesOf(t, token, c.subscriberId)).toEqual([]);
      expectNotFound(
        await api(t, token).delete(`/api/v1/subscribers/${c.subscriberId}/charges/${charge.id}`),
      );

      expectError(
        await api(t, token).post(`/api/v1/subscribers/${c.subscriberId}/charges`, {
          description: 'Router',
          amount: 4900,
          currency: 'USD',
        }),
        422,
        'currency_mismatch',
        'currency',
      );
      expect(await chargesOf(t, token, c.subscriberId)).toEqual([]);
      expectNotFound(
        await api(t, token).post(`/api/v1/subscribers/${UNKNOWN_SUBSCRIBER}/charges`, {
          description: 'Router',
          amount: 4900,
          currency: 'EUR',
        }),
      );
      expectNotFound(await api(t, token).get(`/api/v1/subscribers/${UNKNOWN_SUBSCRIBER}/charges`));
    });

    it('should put a pending charge on the next bill run’s invoice, then refuse to delete it (409)', async () => {
      const { t } = app;
      const router = await postCharge(t, token, c.subscriberId, {
        description: 'Router TP-Link Archer C6',
        amount: 4900,
        currency: 'EUR',
      });
      await runOn(`${y}-04-01`, token);
      const invoices = await invoicesOf(t, token, c.subscriberId);
      const invoice = invoices[invoices.length - 1];
      // March 1 (activation) to March 31 was never billed: arrears; April in advance; then the charge.
      expect(invoice.lines[invoice.lines.length - 1]).toEqual({
        description: 'Router TP-Link Archer C6',
        quantity: 1,
        unit_amount: 4900,
        amount: 4900,
        charge_id: router.id,
        ...untaxed(4900),
      });
      expect(baseLines(invoice.lines).slice(-2, -1)).toEqual([periodLine(plan.name, 2500, `${y}-04-01`)]);
      expect(invoice.total).toBe(invoice.lines.reduce((sum, line) => sum + line.amount, 0));

      expect(await chargesOf(t, token, c.subscriberId)).toEqual([]);
      const [invoiced] = await chargesOf(t, token, c.subscriberId, 'invoiced');
      expect(invoiced).toMatchObject({
        id: router.id,
        status: 'invoiced',
        invoice_id: invoice.id,
        credit_id: null,
        invoiced_at: expect.any(String),
      });
      expectError(
        await api(t, token).delete(`/api/v1/subscribers/${c.subscriberId}/charges/${router.id}`),
        409,
        'invalid_state_transition',
      );
      expect(await chargesOf(t, token, c.subscriberId, 'invoiced')).toHaveLength(1);
    });

    it('should carry pending charges on a manual invoice, and issue one at once with invoice_now', async () => {
      const { t } = app;
      const cable = await postCharge(t, token, c.subscriberId, {
        description: 'Cable 20 m',
        amount: 800,
        currency: 'EUR',
      });
      const manual = await createInvoice(t, token, c.subscriberId, 1000, { currency: 'EUR' });
      expect(manual.lines).toEqual([
        { description: 'Service', quantity: 1, unit_amount: 1000, amount: 1000, ...untaxed(1000) },
        {
          description: 'Cable 20 m',
          quantity: 1,
          unit_amount: 800,
          amount: 800,
          charge_id: cable.id,
          ...untaxed(800),
        },
      ]);
      expect(manual).toMatchObject({ total: 1800, status: 'open' });
      expect(await chargesOf(t, token, c.subscriberId)).toEqual([]);

      const waiting = await postCharge(t, token, c.subscriberId, {
        description: 'Visit',
        amount: 2000,
        currency: 'EUR',
      });
      const now = await postCharge(t, token, c.subscriberId, {
        description: 'Replacement router',
        amount: 3900,
        currency: 'EUR',
        invoice_now: true,
      });
      expect(now).toMatchObject({ status: 'invoiced', invoice_id: expect.any(String) });
      const issued = await getInvoice(t, token, now.invoice_id!);
      expect(issued).toMatchObject({
        subscriber_id: c.subscriberId,
        currency: 'EUR',
        total: 5900,
        status: 'open',
      });
      expect(issued.lines.map((line) => [line.description, line.amount, (line as Line).charge_id])).toEqual([
        ['Visit', 2000, waiting.id],
        ['Replacement router', 3900, now.id],
      ]);
      expect(await chargesOf(t, token, c.subscriberId)).toEqual([]);
    });

    it('should make a debit a pending charge: no unallocated_amount, the balance moves only once it is invoiced', async () => {
      const { t } = app;
      const before = await eurBalance(t, token, c.subscriberId);
      const debit = await createTransaction(t, token, c.subscriberId, {
        kind: 'debit',
        source: 'adjustment',
        amount: 750,
        currency: 'EUR',
        description: 'Late fee',
      });
      expect(debit).toMatchObject({ kind: 'debit', amount: 750, unallocated_amount: null });
      const [pending] = await chargesOf(t, token, c.subscriberId);
      expect(pending).toMatchObject({
        amount: 750,
        currency: 'EUR',
        status: 'pending',
        source: 'debit',
        source_id: debit.id,
        description: 'Late fee',
      });
      expect(await eurBalance(t, token, c.subscriberId)).toBe(before);

      await runOn(`${y}-05-01`, token);
      const invoices = await invoicesOf(t, token, c.subscriberId);
      const invoice = invoices[invoices.length - 1];
      expect(invoice.lines[invoice.lines.length - 1]).toEqual({
        description: 'Late fee',
        quantity: 1,
        unit_amount: 750,
        amount: 750,
        charge_id: pending.id,
        ...untaxed(750),
      });
      expect(invoice.total).toBe(2500 + 750);
      expect(await eurBalance(t, token, c.subscriberId)).toBe(before + invoice.total);
      expect(await chargesOf(t, token, c.subscriberId)).toEqual([]);
    });
  });

  describe('defect 7: a termination’s credit is computed when the service ends', () => {
    it('should record the unused prepaid days as a pending negative charge at once, and credit it on the next run', async () => {
      const { t } = app;
      const y = nextYears();
      app.clock.set(at(`${y}-03-01`, '09:00'));
      const c = await createCustomer(t, { billing_day: 1 });
      const token = c.tenant.token;
      const plan = await createEurPlan(t, token, 3100);
      const service = await createActiveService(t, token, c.subscriberId, plan.id);
      await runOn(`${y}-03-01`, token);

      app.clock.set(at(`${y}-03-11`, '12:00'));
      await actOnService(t, token, service.id, { action: 'terminate' });
      const pending = await chargesOf(t, token, c.subscriberId);
      const credit = creditLine(plan.name, 3100, `${y}-03-11`, `${y}-03-31`, 31);
      expect(credit.amount).toBe(-2100);
      expect(pending).toEqual([
        expect.objectContaining({
          service_id: service.id,
          description: credit.description,
          quantity: 1,
          unit_amount: -2100,
          amount: -2100,
          currency: 'EUR',
          status: 'pending',
          source: 'termination',
          source_id: service.id,
          period_start: `${y}-03-11`,
          period_end: `${y}-03-31`,
        }),
      ]);

      const run = await runOn(`${y}-04-01`, token);
      expect(run).toMatchObject({ subscribers_billed: 1, invoices_created: 0, credits_created: 1 });
      const credits = await transactionsOf(t, token, c.subscriberId, 'credit');
      expect(credits).toHaveLength(1);
      expect(credits[0]).toMatchObject({ amount: 2100, currency: 'EUR' });
      expect(await chargesOf(t, token, c.subscriberId)).toEqual([]);
      expect(await chargesOf(t, token, c.subscriberId, 'invoiced')).toEqual([
        expect.objectContaining({
          id: pending[0].id,
          status: 'invoiced',
          invoice_id: null,
          credit_id: credits[0].id,
        }),
      ]);
      // The run's item shows the line the credit carried.
      const [item] = await itemsOf(t, token, run.id);
      expect(item).toMatchObject({
        subscriber_id: c.subscriberId,
        total: -2100,
        invoice_id: null,
        credit_id: credits[0].id,
      });
      expect(item.lines).toEqual([
        expect.objectContaining({ amount: -2100, charge_id: pending[0].id, service_id: service.id }),
      ]);
      // Nothing more on the next run.
      expect(await runOn(`${y}-05-01`, token)).toMatchObject({ subscribers_billed: 0 });
    });
  });

  describe('item 11: what a run issues, and the next invoice', () => {
    it('should list a dry run’s items without invoices, the real run’s with them, and 404 an unknown run', async () => {
      const { t } = app;
      const y = nextYears();
      app.clock.set(at(`${y}-06-01`, '09:00'));
      const c = await createCustomer(t, { billing_day: 1 });
      const token = c.tenant.token;
      const plan = await createEurPlan(t, token, 2000);
      const service = await createActiveService(t, token, c.subscriberId, plan.id);
      const idle = await createBilledSubscriber(t, token, c.profile.id);
      const asOf = `${y}-06-01`;
      app.clock.set(at(asOf, '10:00'));

      const dry = await runToCompletion(t, token, { as_of: asOf, dry_run: true });
      const dryItems = await itemsOf(t, token, dry.id);
      expect(dryItems).toEqual([
        {
          id: expect.any(String),
          billing_run_id: dry.id,
          subscriber_id: c.subscriberId,
          currency: 'EUR',
          lines: [
            {
              ...periodLine(plan.name, 2000, asOf),
              service_id: service.id,
              plan_id: plan.id,
              period_start: asOf,
              period_end: `${y}-06-30`,
              ...untaxed(2000),
            },
          ],
          total: 2000,
          invoice_id: null,
          credit_id: null,
          error: null,
          created_at: expect.any(String),
        },
      ]);
      expect(await invoicesOf(t, token, c.subscriberId)).toEqual([]);
      expect(dryItems.some((item) => item.subscriber_id === idle.id)).toBe(false);

      const real = await runOn(asOf, token);
      const [invoice] = await invoicesOf(t, token, c.subscriberId);
      expect(await itemsOf(t, token, real.id)).toEqual([
        {
          ...dryItems[0],
          id: expect.any(String),
          billing_run_id: real.id,
          invoice_id: invoice.id,
          created_at: expect.any(String),
        },
      ]);
      expect(invoice.lines).toEqual(dryItems[0].lines);
      expectNotFound(await api(t, token).get(`/api/v1/billing-runs/${UNKNOWN_RUN}/items`));
    });

    it('should preview the next invoice: its day, plan line, pending charge, money to apply; and move on after the run', async () => {
      const { t } = app;
      const y = nextYears();
      app.clock.set(at(`${y}-07-01`, '09:00'));
      const c = await createCustomer(t, { billing_day: 1, payment_terms_days: 10 });
      const token = c.tenant.token;
      const plan = await createEurPlan(t, token, 2900);
      const service = await createActiveService(t, token, c.subscriberId, plan.id);
      await runOn(`${y}-07-01`, token);
      // The July invoice paid, so the money left is only what follows.
      const [july] = await invoicesOf(t, token, c.subscriberId);
      await createTransaction(t, token, c.subscriberId, {
        kind: 'payment',
        amount: july.total,
        currency: 'EUR',
      });

      app.clock.set(at(`${y}-07-12`, '12:00'));
      const charge = await postCharge(t, token, c.subscriberId, {
        description: 'Static IP setup',
        amount: 1200,
        currency: 'EUR',
      });
      // 500 received with nothing owed: unallocated, for the next invoice (auto-apply); 300 sent with auto_apply
      // false: left for an allocation by hand, so no invoice takes it.
      const ahead = await createTransaction(t, token, c.subscriberId, {
        kind: 'payment',
        amount: 500,
        currency: 'EUR',
      });
      const byHand = await createTransaction(t, token, c.subscriberId, {
        kind: 'payment',
        amount: 300,
        currency: 'EUR',
        auto_apply: false,
      });
      expect([ahead.unallocated_amount, byHand.unallocated_amount]).toEqual([500, 300]);

      const upcoming = await upcomingOf(t, token, c.subscriberId);
      expect(upcoming).toEqual({
        subscriber_id: c.subscriberId,
        currency: 'EUR',
        as_of: `${y}-08-01`,
        due_date: `${y}-08-11`,
        lines: [
          {
            ...periodLine(plan.name, 2900, `${y}-08-01`),
            service_id: service.id,
            plan_id: plan.id,
            period_start: `${y}-08-01`,
            period_end: `${y}-08-31`,
            ...untaxed(2900),
          },
          {
            description: 'Static IP setup',
            quantity: 1,
            unit_amount: 1200,
            amount: 1200,
            charge_id: charge.id,
            ...untaxed(1200),
          },
        ],
        total: 4100,
        credit_to_apply: 500,
        amount_due: 3600,
      });
      // A preview writes nothing.
      expect(await chargesOf(t, token, c.subscriberId)).toHaveLength(1);

      // The run issues what the preview showed, and the money it said would pay it does.
      await runOn(`${y}-08-01`, token);
      const invoices = await invoicesOf(t, token, c.subscriberId);
      expect(invoices[invoices.length - 1]).toMatchObject({
        total: upcoming.total,
        lines: upcoming.lines,
        due_date: upcoming.due_date,
        amount_paid: upcoming.credit_to_apply,
        amount_due: upcoming.amount_due,
      });
      const after = await upcomingOf(t, token, c.subscriberId);
      expect(after).toMatchObject({
        as_of: `${y}-09-01`,
        due_date: `${y}-09-11`,
        total: 2900,
        credit_to_apply: 0,
        amount_due: 2900,
      });
      expect(baseLines(after.lines)).toEqual([periodLine(plan.name, 2900, `${y}-09-01`)]);
    });
  });
});

describe('Billing through a real life: the scheduler catches up (issue #28, defect 2)', () => {
  let app: RunApp;
  const day = '2096-06-10';

  schedulerAppSuite(day, (started) => (app = started));

  /** The tenant's runs once `done` holds and none is running (other tenants' scheduled runs may come first). */
  function runsUntil(token: string, done: (runs: BillingRun[]) => boolean): Promise<BillingRun[]> {
    return waitUntil(
      () => listRuns(app.t, token),
      (runs) => done(runs) && runs.every((run) => run.status !== 'running'),
      { timeout: 45_000, what: "the tenant's runs" },
    );
  }

  it('should run the missed billing days (and today) oldest first when the clock jumps three days', async () => {
    const { t, clock } = app;
    const tenant = await createRunTenant(t);
    const token = tenant.token;
    const tenth = await createProfile(t, token, { billing_day: 10, is_default: true });
    const eleventh = await createProfile(t, token, { name: 'Eleventh', billing_day: 11 });
    const plan = await createEurPlan(t, token, 3000);
    const a = await createBilledSubscriber(t, token, tenth.id);
    const b = await createBilledSubscriber(t, token, eleventh.id);
    await createActiveService(t, token, a.id, plan.id);
    await createActiveService(t, token, b.id, plan.id);

    clock.set(at(day, '02:05'));
    const first = await runsUntil(token, (runs) => runs.length >= 1);
    expect(first.map((run) => [run.trigger, run.as_of, run.status])).toEqual([
      ['schedule', day, 'completed'],
    ]);
    expect(await invoicesOf(t, token, b.id)).toEqual([]);

    // The server misses the 11th and the 12th: the clock jumps to the 13th, past the hour.
    const d1 = addDays(day, 1);
    const d3 = addDays(day, 3);
    clock.set(at(d3, '02:05'));
    const runs = await runsUntil(token, (all) => all.some((run) => run.as_of === d3));
    // No run for the 12th comes after today's: the scheduler ticks a few more times (time let pass on purpose).
    await letTimePass(300);
    const all = (await listRuns(t, token)).sort((x, y) => x.as_of.localeCompare(y.as_of));
    // The 12th is no billing day of the tenant: no run; the 13th is today's run.
    expect(all.map((run) => [run.trigger, run.as_of, run.status])).toEqual([
      ['schedule', day, 'completed'],
      ['schedule', d1, 'completed'],
      ['schedule', d3, 'completed'],
    ]);
    expect(runs).toHaveLength(3);
    const [, missed, today] = all;
    expect(missed.created_at <= today.created_at).toBe(true);
    expect(missed.completed_at! <= today.completed_at!).toBe(true);
    expect(missed).toMatchObject({ subscribers_billed: 1, invoices_created: 1 });
    expect(today).toMatchObject({ subscribers_billed: 0, invoices_created: 0 });

    const [invoice] = await invoicesOf(t, token, b.id);
    // Activated on the 10th: that day in arrears (period May 11 to June 10 of the 11th's grid: 31 days), then a month.
    expect(baseLines(invoice.lines)).toEqual([
      chargeLine(plan.name, 3000, day, day, daysBetween(addMonths(d1, -1), d1)),
      periodLine(plan.name, 3000, d1),
    ]);
    expect(invoice.due_date).toBe(addDays(d1, 14));
    expect(await invoicesOf(t, token, a.id)).toHaveLength(1);
  }, 120_000);
});
