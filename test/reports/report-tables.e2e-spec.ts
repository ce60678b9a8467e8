import request from 'supertest';
import { churnOf, monthIndex, mrrSeries } from '../../src/billing/reports/mrr-series';
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
import { createInvoice, finalizeInvoice, voidInvoice } from '../support/billing-factory';
import { bearer } from '../support/factories';
import { oracleMrrMovements, oracleRevenueSums, rebuildMrr, rebuildRevenue } from '../support/report-oracle';
import { getReport } from '../support/reports-factory';
import { ensure, type TestApp } from '../support/test-app';

/**
 * Issue #35 target 5: the revenue report reads revenue_days, which issuing an invoice (created open, finalized from a
 * draft, or by a bill run), voiding an issued one and issuing a credit note write in their transaction; the MRR report
 * reads mrr_months, the rollup of each subscriber's MRR steps (mrr_series) that
 * the completion of an activate, change_plan or terminate order writes in its transaction. A history built through
 * the API (activations, plan changes up and down, terminations, a reactivation, a service activated and terminated in
 * one month, a plan repriced once no live service uses it) must give, for every window, the report the statement that
 * read the services and orders themselves gave (test/support/mrr-oracle.ts), and the tables must equal a rebuild of
 * them from those rows (no drift). Invoices (bill runs, manual ones, a draft finalized, one voided) and credit notes
 * must give every window's revenue, by month and by plan, that the statement over the documents themselves gave.
 */

type Report = Record<string, unknown>;

describe('Report tables (e2e)', () => {
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
    const a = await createEurPlan(t, token, 3000);
    const b = await createEurPlan(t, token, 5000);
    const q = await createEurPlan(t, token, 9000, { billing_period: 'quarterly' });
    const y = await createEurPlan(t, token, 12001, { billing_period: 'yearly' });
    const z = await createEurPlan(t, token, 4000);
    const u = await createEurPlan(t, token, 2000, { currency: 'USD' });
    const [s1, s2, s3, s5] = [
      await createBilledSubscriber(t, token, eur.id),
      await createBilledSubscriber(t, token, eur.id),
      await createBilledSubscriber(t, token, eur.id),
      await createBilledSubscriber(t, token, eur.id),
    ];
    const s4 = await createBilledSubscriber(t, token, usd.id);

    clock.set(at('2030-01-05', '10:00'));
    const svc1 = await createActiveService(t, token, s1.id, a.id);
    const svc2 = await createActiveService(t, token, s2.id, b.id);
    await createActiveService(t, token, s4.id, u.id);
    const svc5 = await createActiveService(t, token, s5.id, z.id);

    clock.set(at('2030-02-01', '03:00'));
    await runToCompletion(t, token);
    clock.set(at('2030-02-05', '10:00'));
    const manual = await createInvoice(t, token, s1.id, 1500, { currency: 'EUR' });
    const draft = await createInvoice(t, token, s2.id, 700, { currency: 'EUR', draft: true });
    const voided = await createInvoice(t, token, s3.id, 900, { currency: 'EUR' });
    clock.set(at('2030-02-07', '10:00'));
    ensure(await finalizeInvoice(t, token, draft.id), 200, 'finalize');
    ensure(await voidInvoice(t, token, voided.id), 200, 'void');
    await createInvoice(t, token, s4.id, 800, { currency: 'USD', draft: true });
    clock.set(at('2030-02-10', '10:00'));
    await actOnService(t, token, svc1.id, { action: 'change_plan', plan_id: b.id });
    await createActiveService(t, token, s3.id, q.id);
    await createActiveService(t, token, s3.id, y.id);

    clock.set(at('2030-03-01', '03:00'));
    await runToCompletion(t, token);
    clock.set(at('2030-03-03', '10:00'));
    await actOnService(t, token, svc2.id, { action: 'terminate' });
    await actOnService(t, token, svc5.id, { action: 'terminate' });
    clock.set(at('2030-03-20', '10:00'));
    await actOnService(t, token, svc1.id, { action: 'change_plan', plan_id: a.id });

    clock.set(at('2030-03-31', '23:00'));
    // s3's bill run invoice (its lines name its plans), not the manual one voided in February.
    const s3March = (await invoicesOf(t, token, s3.id)).find((invoice) => invoice.status !== 'void')!;
    for (const [invoice, amount] of [
      [s3March, 1000],
      [manual, 500],
    ] as const) {
      const note = await request(t.http)
        .post(`/api/v1/invoices/${invoice.id}/credit-notes`)
        .set(bearer(token))
        .send({ reason: 'Outage', amount });
      ensure(note, 201, 'credit note');
    }
    clock.set(at('2030-04-01', '03:00'));
    await runToCompletion(t, token);
    clock.set(at('2030-04-02', '10:00'));
    await createActiveService(t, token, s2.id, a.id);
    const brief = await createActiveService(t, token, s3.id, b.id);
    clock.set(at('2030-04-20', '10:00'));
    await actOnService(t, token, brief.id, { action: 'terminate' });
    // No live service is on z any more: its price may change, and with it the MRR its past services had.
    ensure(
      await request(t.http).patch(`/api/v1/service-plans/${z.id}`).set(bearer(token)).send({ price: 4500 }),
      200,
      'reprice z',
    );
  });

  async function oracle(from: string, to: string) {
    const [first, last] = [monthIndex(from), monthIndex(to)];
    const rows = await oracleMrrMovements(t.dataSource.manager, tenantId, first, last);
    return { from: from.slice(0, 7), to: to.slice(0, 7), ...mrrSeries(rows, first, last) };
  }

  const WINDOWS: [string, string][] = [
    ['2029-12-01', '2030-06-30'],
    ['2030-02-01', '2030-03-31'],
    ['2030-03-15', '2030-04-15'],
    ['2030-04-01', '2031-03-31'],
    ['2029-01-01', '2029-06-30'],
  ];

  it.each(WINDOWS)('should answer the MRR of %s to %s the old statement computed', async (from, to) => {
    const expected = await oracle(from, to);
    expect(await getReport<Report>(t, token, 'mrr', { from, to })).toEqual(expected);
  });

  it.each(WINDOWS)('should answer the churn of %s to %s of the old statement', async (from, to) => {
    const expected = await oracle(from, to);
    const currencies = [...new Set(expected.months.map((month) => month.currency))];
    expect(await getReport<Report>(t, token, 'churn', { from, to })).toEqual({
      from: expected.from,
      to: expected.to,
      totals: currencies.map((currency) =>
        churnOf(
          currency,
          null,
          expected.months.filter((month) => month.currency === currency),
        ),
      ),
      months: expected.months.map((month) => churnOf(month.currency, month.month, [month])),
    });
  });

  it.each([...WINDOWS, ['2030-02-05', '2030-02-06'], ['2030-03-31', '2030-04-01']])(
    'should answer the revenue of %s to %s, by month and by plan, of the old statement',
    async (from, to) => {
      for (const group of ['month', 'plan'] as const) {
        const rows = await oracleRevenueSums(
          t.dataSource.manager,
          tenantId,
          new Date(`${from}T00:00:00.000Z`),
          new Date(Date.parse(`${to}T00:00:00.000Z`) + 86_400_000),
          group,
        );
        const report = await getReport<{ rows: Record<string, unknown>[] }>(t, token, 'revenue', {
          from,
          to,
          group_by: group,
        });
        expect(report.rows).toEqual(
          rows.map((row) => ({
            currency: row.currency,
            month: row.month,
            plan_id: row.plan_id,
            plan_name: row.plan_name,
            invoiced_net: Number(row.invoiced_net ?? 0),
            credited_net: Number(row.credited_net ?? 0),
            net_revenue: Number(row.invoiced_net ?? 0) - Number(row.credited_net ?? 0),
            invoiced_tax: Number(row.invoiced_tax ?? 0),
            credited_tax: Number(row.credited_tax ?? 0),
            net_tax: Number(row.invoiced_tax ?? 0) - Number(row.credited_tax ?? 0),
            invoices: row.invoices,
            credit_notes: row.credit_notes,
          })),
        );
      }
    },
  );

  it('should have counted the bill runs, manual invoices and credit notes (not the void one nor a draft)', async () => {
    const [total] = await oracleRevenueSums(
      t.dataSource.manager,
      tenantId,
      new Date('2030-01-01T00:00:00.000Z'),
      new Date('2030-05-01T00:00:00.000Z'),
      'month',
    ).then((rows) => rows.filter((row) => row.currency === 'EUR' && row.month === '2030-02'));
    expect(total.invoices).toBeGreaterThanOrEqual(4);
    const plans = await getReport<{ rows: { plan_id: string | null; credit_notes: number }[] }>(
      t,
      token,
      'revenue',
      {
        from: '2030-01-01',
        to: '2030-04-30',
        group_by: 'plan',
      },
    );
    expect(plans.rows.reduce((sum, row) => sum + row.credit_notes, 0)).toBeGreaterThanOrEqual(2);
  });

  it('should have kept the MRR and revenue tables equal to a rebuild from their source rows', async () => {
    const read = async () => ({
      series: await t.dataSource.query(
        `SELECT subscriber_id, currency, plan_key, month, delta::text, mrr::text, had_steps FROM mrr_series
          WHERE tenant_id = $1 ORDER BY subscriber_id, currency, plan_key, month`,
        [tenantId],
      ),
      months: await t.dataSource.query(
        `SELECT * FROM mrr_months WHERE tenant_id = $1 AND steps <> 0 ORDER BY currency, plan_key, month`,
        [tenantId],
      ),
      revenue: await t.dataSource.query(
        `SELECT * FROM revenue_days WHERE tenant_id = $1 AND invoices + credit_notes <> 0
          ORDER BY level, currency, plan_key, day`,
        [tenantId],
      ),
    });
    const kept = await read();
    expect(kept.series.length).toBeGreaterThan(10);
    expect(kept.revenue.length).toBeGreaterThan(10);
    await rebuildMrr(t.dataSource.manager, tenantId);
    await rebuildRevenue(t.dataSource.manager, tenantId);
    expect(await read()).toEqual(kept);
  });
});
