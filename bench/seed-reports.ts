import type { Client } from 'pg';
import { AGING_REBUILD_STATEMENTS } from '../src/billing/reports/aging.repository';
import { MRR_REBUILD_STATEMENTS } from '../src/billing/reports/mrr.repository';
import { REVENUE_REBUILD_STATEMENTS } from '../src/billing/reports/revenue.repository';
import {
  DAY_MS,
  retryingDeadlocks,
  SEED_CURRENCY,
  SPREAD_MS,
  ulidSql,
  withSecondaryIndexesDropped,
} from './seed-sql';

/**
 * Issue #32 item 4: what the reports read on the seeded tenant, so that each one sums a million subscribers' worth of
 * rows. Every seeded subscriber without a service (nine in ten: seed-domain.ts gives the tenth one) gets one, from
 * its creation on: on the bench plan, a dearer monthly plan or a yearly one; one in 25 terminated some days later
 * (churn), one in 13 moved to the dearer plan a month after activation (a change_plan order: plan history). Each
 * gets its last month's invoice (the plan's monthly price, its line naming the plan): nine in ten paid three days
 * after issue (never after now) by a payment of their total allocated to them then, so that amount_paid is the sum of
 * the invoice's allocations as the app keeps it, the tenth open and past due by up to four months (aging), already
 * announced overdue so the server's sweep leaves them be. All set-based SQL, the tables' secondary indexes dropped while loading.
 */

export const REPORTS_PLAN_NAME = 'Bench Fiber 1000';
const YEARLY_PLAN_NAME = 'Bench Fiber 500 yearly';

/** Seeds the reports' rows unless a previous run did; answers how many services it added (0 when already there). */
export async function seedReports(
  db: Client,
  tenantId: string,
  log: (line: string) => void,
): Promise<number> {
  const existing = await db.query('SELECT 1 FROM service_plans WHERE tenant_id = $1 AND name = $2', [
    tenantId,
    REPORTS_PLAN_NAME,
  ]);
  if (existing.rows.length > 0) {
    return 0;
  }
  const started = Date.now();
  // Fresh statistics first: the anti-join of subscribers to their services must be planned as a hash, not a loop.
  await db.query('ANALYZE subscribers; ANALYZE services');
  const [base, dear, yearly] = await seedReportPlans(db, tenantId);
  const services = await seedReportServices(db, tenantId, base, dear, yearly, log);
  await seedPlanHistory(db, tenantId, base, log);
  // The invoices, payments and allocations go in with the tables' triggers off (the aging rollups they keep are
  // rebuilt below in one pass, as the migration's backfill does, rather than by a trigger call per seeded row.
  await db.query(`SET session_replication_role = replica`);
  const invoices = await seedReportInvoices(db, tenantId, log).finally(() =>
    db.query(`SET session_replication_role = DEFAULT`),
  );
  // The services and orders went straight into the tables, past the order completions that keep the MRR steps
  // (docs/reports.md, "How the reports are kept"): rebuilt as the migration's backfill does.
  const rebuilt = Date.now();
  for (const statement of [
    ...MRR_REBUILD_STATEMENTS,
    ...REVENUE_REBUILD_STATEMENTS,
    ...AGING_REBUILD_STATEMENTS,
  ]) {
    await db.query(statement, [tenantId]);
  }
  log(
    `  reports: MRR steps, their rollup, the revenue days and the aging rollups rebuilt in ${((Date.now() - rebuilt) / 1000).toFixed(1)} s`,
  );
  log(
    `  reports: ${services.toLocaleString('en-US')} more services (with their plan history) and ` +
      `${invoices.toLocaleString('en-US')} invoices in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return services;
}

/** The bench plan's id, and two more plans': a dearer monthly one and a yearly one. */
async function seedReportPlans(db: Client, tenantId: string): Promise<[string, string, string]> {
  const plans = await db.query<{ id: string; name: string }>(
    `INSERT INTO service_plans (tenant_id, id, name, download_kbps, upload_kbps, price, currency, billing_period, active,
       created_at, updated_at)
     SELECT $1, ${ulidSql('plan', '$2::bigint + k', 'k', 'rp')}, name, 1000000, 200000, price, '${SEED_CURRENCY}',
       period, true, to_timestamp($2::bigint / 1000.0), to_timestamp($2::bigint / 1000.0)
       FROM (VALUES (1, $3, 7999, 'monthly'), (2, $4, 49990, 'yearly')) AS p(k, name, price, period)
     RETURNING id, name`,
    [tenantId, Date.now() - SPREAD_MS - DAY_MS, REPORTS_PLAN_NAME, YEARLY_PLAN_NAME],
  );
  const dear = plans.rows.find((plan) => plan.name === REPORTS_PLAN_NAME)!.id;
  const yearly = plans.rows.find((plan) => plan.name === YEARLY_PLAN_NAME)!.id;
  const base = await db.query<{ id: string }>(
    `SELECT id FROM service_plans WHERE tenant_id = $1 AND name = 'Bench Fiber 500'`,
    [tenantId],
  );
  return [base.rows[0].id, dear, yearly];
}

async function seedReportServices(
  db: Client,
  tenantId: string,
  base: string,
  dear: string,
  yearly: string,
  log: (line: string) => void,
): Promise<number> {
  return withSecondaryIndexesDropped(db, 'services', log, async () => {
    // n: the subscriber's seed number; its first plan by n, terminated (n % 25 = 0) up to 300 days after activation.
    const inserted = await retryingDeadlocks(() =>
      db.query(
        `INSERT INTO services (tenant_id, id, subscriber_id, plan_id, status, pppoe_username, radius_username,
         pppoe_password, static_ipv4, cpe_mac, installation_address, activated_at, terminated_at, created_at,
         updated_at)
       SELECT s.tenant_id, 'svc_' || substr(s.id, 5), s.id,
         CASE WHEN n % 13 = 0 OR n % 2 = 0 THEN $3 WHEN n % 7 = 0 THEN $4 ELSE $2 END,
         CASE WHEN ended THEN 'terminated' ELSE 'active' END,
         'seed-rpt-' || n, (SELECT slug FROM tenants WHERE id = s.tenant_id) || '/seed-rpt-' || n,
         'seed-password-' || n, NULL, NULL, NULL, s.created_at + interval '5 seconds',
         CASE WHEN ended THEN s.created_at + (n % 300 + 1) * interval '1 day' END, s.created_at,
         s.created_at + interval '5 seconds'
       FROM (SELECT s.*, substr(s.external_id, 6)::int AS n,
                    substr(s.external_id, 6)::int % 25 = 0
                      AND s.created_at + (substr(s.external_id, 6)::int % 300 + 1) * interval '1 day' < now() AS ended
               FROM subscribers s
              WHERE s.tenant_id = $1 AND s.external_id LIKE 'seed-%'
                AND NOT EXISTS (SELECT 1 FROM services v WHERE v.tenant_id = s.tenant_id AND v.subscriber_id = s.id)) s`,
        [tenantId, base, dear, yearly],
      ),
    );
    return inserted.rowCount ?? 0;
  });
}

async function seedPlanHistory(db: Client, tenantId: string, base: string, log: (line: string) => void) {
  await withSecondaryIndexesDropped(db, 'provisioning_orders', log, async () => {
    // The activation on the first plan (the bench plan for those that change later), then the change one month on.
    await retryingDeadlocks(() =>
      db.query(
        `INSERT INTO provisioning_orders (tenant_id, id, service_id, subscriber_id, action, status, plan_id, changes,
         reason, attempts, last_error, next_attempt_at, lease_id, lease_until, completed_at, created_at, updated_at,
         disconnect, coa)
       SELECT v.tenant_id, 'ord_' || substr(v.id, 5) || o.k, v.id, v.subscriber_id, o.action, 'completed',
         CASE WHEN o.k = 'a' AND changed THEN $2 ELSE v.plan_id END, NULL, NULL, 1, NULL, v.created_at, NULL, NULL,
         v.activated_at + o.after, v.created_at, v.activated_at + o.after, NULL, NULL
       FROM (SELECT v.*, substr(v.pppoe_username, 10)::int % 13 = 0
                           AND v.activated_at + interval '30 days' < COALESCE(v.terminated_at, now()) AS changed
               FROM services v WHERE v.tenant_id = $1 AND v.pppoe_username LIKE 'seed-rpt-%') v
       CROSS JOIN LATERAL (VALUES ('a', 'activate', interval '0'), ('c', 'change_plan', interval '30 days'))
         AS o(k, action, after)
       WHERE o.k = 'a' OR changed`,
        [tenantId, base],
      ),
    );
  });
}

async function seedReportInvoices(
  db: Client,
  tenantId: string,
  log: (line: string) => void,
): Promise<number> {
  const invoices = await withSecondaryIndexesDropped(db, 'invoices', log, async () => {
    const inserted = await db.query(
      `INSERT INTO invoices (tenant_id, id, number, sequence, subscriber_id, currency, status, lines, total, tax_amount,
         taxes, amount_paid, due_date, finalized_at, paid_at, voided_at, created_at, updated_at)
       SELECT v.tenant_id, 'inv_' || substr(v.id, 5), 'RPT-' || n, 1000000000 + n, v.subscriber_id, p.currency,
         CASE WHEN n % 10 = 3 THEN 'open' ELSE 'paid' END,
         jsonb_build_array(jsonb_build_object('description', p.name, 'quantity', 1, 'unit_amount', p.monthly,
           'amount', p.monthly, 'service_id', v.id, 'plan_id', p.id)),
         p.monthly, 0, '[]'::jsonb, CASE WHEN n % 10 = 3 THEN 0 ELSE p.monthly END,
         (issued + interval '14 days')::date, issued,
         CASE WHEN n % 10 = 3 THEN NULL ELSE LEAST(issued + interval '3 days', now() - interval '1 minute') END,
         NULL, issued, issued
       FROM (SELECT v.*, substr(v.pppoe_username, 10)::int AS n,
                    LEAST(COALESCE(v.terminated_at, now()), now() - interval '1 hour')
                      - (substr(v.pppoe_username, 10)::int % 120) * interval '1 day' AS issued
               FROM services v WHERE v.tenant_id = $1 AND v.pppoe_username LIKE 'seed-rpt-%') v
       JOIN (SELECT id, name, currency,
                    CASE billing_period WHEN 'yearly' THEN (2 * price + 12) / 24 ELSE price END AS monthly
               FROM service_plans WHERE tenant_id = $1) p ON p.id = v.plan_id
       WHERE v.issued > v.activated_at`,
      [tenantId],
    );
    return inserted.rowCount ?? 0;
  });
  // The app's invariant (docs/reports.md): an invoice's amount_paid is the sum of its allocations. Each paid invoice
  // was paid by a payment of its total, fully allocated to it at paid_at (the instant the allocation completed it).
  await withSecondaryIndexesDropped(db, 'transactions', log, () =>
    db.query(
      `INSERT INTO transactions (tenant_id, id, subscriber_id, kind, source, amount, currency, external_id, reference,
         description, method, occurred_at, refund_of, metadata, allocated_amount, refunded_amount, created_at)
       SELECT tenant_id, 'txn_' || substr(id, 5), subscriber_id, 'payment', 'external', total, currency, NULL, number,
         'Bench seed payment', 'card', paid_at, NULL, '{}'::jsonb, total, 0, paid_at
         FROM invoices WHERE tenant_id = $1 AND number LIKE 'RPT-%' AND status = 'paid'`,
      [tenantId],
    ),
  );
  await withSecondaryIndexesDropped(db, 'allocations', log, () =>
    db.query(
      `INSERT INTO allocations (tenant_id, id, transaction_id, invoice_id, subscriber_id, amount, currency, created_at)
       SELECT tenant_id, 'alc_' || substr(id, 5), 'txn_' || substr(id, 5), id, subscriber_id, total, currency, paid_at
         FROM invoices WHERE tenant_id = $1 AND number LIKE 'RPT-%' AND status = 'paid'`,
      [tenantId],
    ),
  );
  await db.query(
    `INSERT INTO automation_effects (tenant_id, rule, subject_id, result_id, created_at)
     SELECT tenant_id, 'overdue_invoices', id, NULL, now() FROM invoices
      WHERE tenant_id = $1 AND number LIKE 'RPT-%' AND status = 'open'
     ON CONFLICT DO NOTHING`,
    [tenantId],
  );
  return invoices;
}
