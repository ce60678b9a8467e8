import request from 'supertest';
import type { AgingSumRow } from '../../src/billing/reports/aging.repository';
import {
  actOnService,
  at,
  createActiveService,
  createBilledSubscriber,
  createEurPlan,
  createProfile,
  createRunTenant,
  invoicesOf,
  type RunApp,
  runAppSuite,
  runToCompletion,
} from '../support/billing-run-factory';
import {
  allocate,
  byHand,
  createInvoice,
  createPayment,
  createTransaction,
  finalizeInvoice,
  voidInvoice,
} from '../support/billing-factory';
import { bearer } from '../support/factories';
import { oracleAgingSums, rebuildAging } from '../support/report-oracle';
import { getReport } from '../support/reports-factory';
import { ensure, type TestApp } from '../support/test-app';

/**
 * Receivables aging kept as data (docs/reports.md, "How the reports are kept"): triggers on invoices, allocations and
 * transactions keep what the invoices still ask per due date and day, the money unapplied and the debtors per day,
 * and the report sums them up to as_of. A history built through the API (bill runs with auto-apply, manual invoices,
 * a draft finalised, a void, partial payments, allocations by hand after earlier days, a credit to the balance,
 * refunds, credit notes on an open invoice and, through the payment, on a paid one, a write-off, two currencies) must give, for every day from before the first invoice to after the last move, the report the
 * statement over the invoices and transactions themselves gave (test/support/report-oracle.ts), page by page, and the
 * tables must equal a rebuild of them from those rows (no drift).
 */

interface Aging {
  as_of: string;
  totals: Record<string, unknown>[];
  subscribers: Record<string, unknown>[];
  has_more: boolean;
  next_cursor: string | null;
}

/** What the service answers from the statement's rows (reports.service.ts aging()), for the oracle's rows. */
function reportOf(asOf: string, rows: AgingSumRow[], limit: number): Aging {
  const buckets = (row: AgingSumRow) => ({
    currency: row.currency,
    current: Number(row.current),
    days_1_30: Number(row.days_1_30),
    days_31_60: Number(row.days_31_60),
    days_61_90: Number(row.days_61_90),
    days_over_90: Number(row.days_over_90),
    total_open: Number(row.total_open ?? 0),
    unapplied_credit: Number(row.unapplied_credit ?? 0),
    net_receivable: Number(row.total_open ?? 0) - Number(row.unapplied_credit ?? 0),
    invoices: row.invoices,
  });
  const subscriberRows = rows.filter((row) => row.kind === 'subscriber');
  const ids = [...new Set(subscriberRows.map((row) => row.subscriber_id as string))];
  const page = new Set(ids.slice(0, limit));
  return {
    as_of: asOf,
    totals: rows
      .filter((row) => row.kind === 'total')
      .map((row) => ({ ...buckets(row), subscribers: row.subscribers })),
    subscribers: subscriberRows
      .filter((row) => page.has(row.subscriber_id as string))
      .map((row) => ({ subscriber_id: row.subscriber_id, ...buckets(row) })),
    has_more: ids.length > limit,
    next_cursor: ids.length > limit ? ids[limit - 1] : null,
  };
}

function days(from: string, to: string): string[] {
  const out: string[] = [];
  for (let day = Date.parse(from); day <= Date.parse(to); day += 86_400_000) {
    out.push(new Date(day).toISOString().slice(0, 10));
  }
  return out;
}

describe('Receivables aging kept as data (e2e)', () => {
  let t: TestApp;
  let token: string;
  let tenantId: string;

  runAppSuite(async (app: RunApp) => {
    t = app.t;
    const { clock } = app;
    clock.set(at('2030-01-05', '09:00'));
    ({ token, tenantId } = await createRunTenant(t));
    const eur = await createProfile(t, token, { billing_day: 1, payment_terms_days: 14 });
    const usd = await createProfile(t, token, { name: 'USD monthly', currency: 'USD', billing_day: 1 });
    const plan = await createEurPlan(t, token, 3000);
    const [s1, s2, s3, s5] = [
      await createBilledSubscriber(t, token, eur.id),
      await createBilledSubscriber(t, token, eur.id),
      await createBilledSubscriber(t, token, eur.id),
      await createBilledSubscriber(t, token, eur.id),
    ];
    const [s4, s6] = [
      await createBilledSubscriber(t, token, usd.id),
      await createBilledSubscriber(t, token, usd.id),
    ];
    const post = async (path: string, body: object, what: string, status = 201): Promise<void> => {
      ensure(await request(t.http).post(path).set(bearer(token)).send(body), status, what);
    };

    clock.set(at('2030-01-05', '10:00'));
    const service = await createActiveService(t, token, s2.id, plan.id);
    clock.set(at('2030-01-10', '10:00'));
    const i1 = await createInvoice(t, token, s1.id, 5000, { currency: 'EUR', due_date: '2030-01-20' });
    const i3 = await createInvoice(t, token, s3.id, 2000, { currency: 'EUR', due_date: '2030-02-01' });
    await createInvoice(t, token, s4.id, 4000, { currency: 'USD', due_date: '2030-01-12' });
    const i5 = await createInvoice(t, token, s6.id, 1500, { currency: 'USD', due_date: '2030-01-25' });
    const i6 = await createInvoice(t, token, s5.id, 1000, {
      currency: 'EUR',
      due_date: '2030-02-10',
      draft: true,
    });
    await createInvoice(t, token, s5.id, 0, { currency: 'EUR', due_date: '2030-01-10' });

    clock.set(at('2030-01-12', '10:00'));
    // A partial payment by hand; a credit left unapplied, part of it applied to the balance.
    const p1 = await byHand.createPayment(t, token, s1.id, 2000, { currency: 'EUR' });
    ensure(
      await allocate(t, token, p1.id, { allocations: [{ invoice_id: i1.id, amount: 2000 }] }),
      200,
      'allocate',
    );
    const c5 = await byHand.createTransaction(t, token, s5.id, {
      kind: 'credit',
      amount: 700,
      currency: 'EUR',
    });
    clock.set(at('2030-01-15', '23:59'));
    ensure(await allocate(t, token, c5.id, { target: 'balance', amount: 300 }), 200, 'to the balance');

    clock.set(at('2030-01-20', '10:00'));
    // Auto-apply pays s4's invoice whole and leaves the rest unapplied; part of it refunded.
    const p4 = await createPayment(t, token, s4.id, 5000, { currency: 'USD' });
    clock.set(at('2030-01-22', '10:00'));
    await createTransaction(t, token, s4.id, {
      kind: 'refund',
      amount: 600,
      refund_of: p4.id,
      currency: 'USD',
    });

    clock.set(at('2030-02-01', '03:00'));
    await runToCompletion(t, token);
    clock.set(at('2030-02-01', '10:00'));
    ensure(await voidInvoice(t, token, i3.id), 200, 'void');
    ensure(await finalizeInvoice(t, token, i6.id), 200, 'finalize');
    // s2 pays its bill run invoice by auto-apply, with more than it asks (March's run applies the rest).
    const p2 = await createPayment(t, token, s2.id, 20000, { currency: 'EUR' });

    clock.set(at('2030-02-05', '10:00'));
    const p6 = await byHand.createPayment(t, token, s6.id, 500, { currency: 'USD' });
    ensure(
      await allocate(t, token, p6.id, { allocations: [{ invoice_id: i5.id, amount: 500 }] }),
      200,
      'allocate',
    );
    clock.set(at('2030-02-06', '10:00'));
    await post(`/api/v1/invoices/${i5.id}/write-off`, { reason: 'moved away' }, 'write off', 200);

    clock.set(at('2030-02-10', '10:00'));
    // A credit note on an open invoice (its credit allocated to it), one on the paid bill run invoice, through the
    // payment (the payment's allocation reduced, the payment refunded).
    await post(`/api/v1/invoices/${i1.id}/credit-notes`, { reason: 'Outage', amount: 1000 }, 'credit note');
    const s2February = (await invoicesOf(t, token, s2.id)).find((invoice) => invoice.status === 'paid')!;
    clock.set(at('2030-02-15', '10:00'));
    await post(
      `/api/v1/invoices/${s2February.id}/credit-notes`,
      { reason: 'Outage', amount: 500, refund: true, payment_id: p2.id },
      'credit note through the payment',
    );

    clock.set(at('2030-03-01', '03:00'));
    await runToCompletion(t, token);
    clock.set(at('2030-03-02', '10:00'));
    // s1 pays the rest of its January invoice by hand, long after its earlier days.
    const p1b = await byHand.createPayment(t, token, s1.id, 2000, { currency: 'EUR' });
    ensure(
      await allocate(t, token, p1b.id, { allocations: [{ invoice_id: i1.id, amount: 2000 }] }),
      200,
      'pay off',
    );
    const i7 = await createInvoice(t, token, s5.id, 900, { currency: 'EUR', due_date: '2030-03-10' });
    clock.set(at('2030-03-05', '10:00'));
    ensure(
      await allocate(t, token, c5.id, { allocations: [{ invoice_id: i7.id, amount: 400 }] }),
      200,
      'credit',
    );
    await actOnService(t, token, service.id, { action: 'terminate' });
    clock.set(at('2030-04-01', '03:00'));
    await runToCompletion(t, token);
  });

  it.each(days('2030-01-04', '2030-04-02').concat(['2030-06-30', '2031-01-31']))(
    'should answer the aging of %s the old statement computed',
    async (asOf) => {
      const end = new Date(Date.parse(`${asOf}T00:00:00.000Z`) + 86_400_000);
      const rows = await oracleAgingSums(t.dataSource.manager, tenantId, end, asOf, '', 1001);
      expect(await getReport<Aging>(t, token, 'receivables-aging', { as_of: asOf })).toEqual(
        reportOf(asOf, rows, 100),
      );
    },
  );

  it.each(['2030-01-13', '2030-02-06', '2030-02-20', '2030-03-06'])(
    'should page the aging of %s one subscriber at a time as the old statement did',
    async (asOf) => {
      const end = new Date(Date.parse(`${asOf}T00:00:00.000Z`) + 86_400_000);
      let cursor = '';
      let pages = 0;
      for (;;) {
        const rows = await oracleAgingSums(t.dataSource.manager, tenantId, end, asOf, cursor, 2);
        const expected = reportOf(asOf, rows, 1);
        const query = { as_of: asOf, limit: '1', ...(cursor ? { starting_after: cursor } : {}) };
        expect(await getReport<Aging>(t, token, 'receivables-aging', query)).toEqual(expected);
        pages += 1;
        if (!expected.has_more) {
          break;
        }
        cursor = expected.next_cursor!;
      }
      expect(pages).toBeGreaterThanOrEqual(3);
    },
  );

  it('should have covered debtors in two currencies, unapplied credit and every bucket', async () => {
    const end = new Date('2030-04-02T00:00:00.000Z');
    const rows = await oracleAgingSums(t.dataSource.manager, tenantId, end, '2030-04-01', '', 1001);
    const totals = rows.filter((row) => row.kind === 'total');
    expect(totals.map((row) => row.currency)).toEqual(['EUR', 'USD']);
    expect(totals.some((row) => Number(row.unapplied_credit) > 0)).toBe(true);
    const late = await oracleAgingSums(
      t.dataSource.manager,
      tenantId,
      new Date('2030-06-01'),
      '2030-05-31',
      '',
      9,
    );
    expect(late.filter((row) => row.kind === 'total' && Number(row.days_over_90) > 0)).not.toEqual([]);
  });

  it('should have kept the aging tables equal to a rebuild from their source rows', async () => {
    const read = async () => ({
      days: await t.dataSource.query(
        `SELECT currency, due_date::text, day::text, shard, open_amount::text, invoices FROM aging_days
          WHERE tenant_id = $1 AND (open_amount <> 0 OR invoices <> 0) ORDER BY 1, 2, 3, 4`,
        [tenantId],
      ),
      credit: await t.dataSource.query(
        `SELECT currency, day::text, shard, unapplied::text, subscribers FROM aging_credit_days
          WHERE tenant_id = $1 AND (unapplied <> 0 OR subscribers <> 0) ORDER BY 1, 2, 3`,
        [tenantId],
      ),
      subscribers: await t.dataSource.query(
        `SELECT subscriber_id, currency, day::text, invoices, unapplied::text, debtor FROM aging_subscriber_days
          WHERE tenant_id = $1 AND (invoices <> 0 OR unapplied <> 0 OR debtor <> 0) ORDER BY 1, 2, 3`,
        [tenantId],
      ),
    });
    const kept = await read();
    expect(kept.days.length).toBeGreaterThan(10);
    expect(kept.subscribers.length).toBeGreaterThan(10);
    await rebuildAging(t.dataSource.manager, tenantId);
    expect(await read()).toEqual(kept);
  });
});
