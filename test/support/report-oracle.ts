import type { EntityManager } from 'typeorm';
import type { MrrMovementRow } from '../../src/billing/reports/mrr.repository';
import { AGING_REBUILD_STATEMENTS, type AgingSumRow } from '../../src/billing/reports/aging.repository';
import { PAYABLE_STATUSES } from '../../src/billing/invoices/invoice.entity';
import { MRR_REBUILD_STATEMENTS } from '../../src/billing/reports/mrr.repository';
import { REVENUE_REBUILD_STATEMENTS, type RevenueSumRow } from '../../src/billing/reports/revenue.repository';
import { provisioningOrdersTable, servicePlansTable, servicesTable } from '../../src/provisioning';

/**
 * The MRR and revenue statements the reports ran before their figures were kept as data (docs/reports.md, "How the
 * reports are kept"), kept verbatim as the oracles of the derived tables: MRR reads every service and completed plan
 * order of the tenant whatever the window, revenue the window's invoices and credit notes themselves (by plan, every
 * line of them). test/reports/report-tables.e2e-spec.ts holds the reports to them. Aging's statement read every
 * invoice and payment that could be open on the day (test/reports/aging-table.e2e-spec.ts holds the kept aging rows
 * to it).
 */

/** The UTC month index of a timestamp: year × 12 + month − 1. */
const monthOf = (column: string) =>
  `(extract(year FROM ${column} AT TIME ZONE 'UTC')::int * 12 + extract(month FROM ${column} AT TIME ZONE 'UTC')::int - 1)`;

/** A plan's price per month, half up to the minor unit (docs/reports.md, "MRR"). */
const MONTHLY_PRICE = `CASE p.billing_period WHEN 'quarterly' THEN (2 * p.price + 3) / 6
  WHEN 'yearly' THEN (2 * p.price + 12) / 24 ELSE p.price END`;

export function oracleMrrMovements(
  manager: EntityManager,
  tenantId: string,
  first: number,
  last: number,
): Promise<MrrMovementRow[]> {
  return manager.query(
    `WITH plan_spans AS (
         SELECT o.service_id, o.plan_id, o.completed_at AS valid_from,
                lead(o.completed_at) OVER (PARTITION BY o.service_id ORDER BY o.completed_at, o.id) AS valid_to
           FROM ${provisioningOrdersTable('o')}
          WHERE o.tenant_id = $1 AND o.status = 'completed' AND o.action IN ('activate', 'change_plan')),
       segments AS (
         SELECT v.subscriber_id, COALESCE(ps.plan_id, v.plan_id) AS plan_id,
                ${monthOf('greatest(v.activated_at, ps.valid_from)')} AS first_month,
                ${monthOf('least(v.terminated_at, ps.valid_to)')} AS end_month
           FROM ${servicesTable('v')} LEFT JOIN plan_spans ps ON ps.service_id = v.id
          WHERE v.tenant_id = $1 AND v.activated_at IS NOT NULL),
       steps AS (
         SELECT s.subscriber_id, p.currency, s.plan_id, m.month, SUM(m.sign * ${MONTHLY_PRICE}) AS delta
           FROM segments s
           JOIN ${servicePlansTable('p')} ON p.tenant_id = $1 AND p.id = s.plan_id
           CROSS JOIN LATERAL (VALUES (s.first_month, 1), (s.end_month, -1)) AS m(month, sign)
          WHERE (s.end_month IS NULL OR s.end_month > s.first_month) AND m.month IS NOT NULL AND m.month <= $3::int
          GROUP BY GROUPING SETS ((s.subscriber_id, p.currency, s.plan_id, m.month), (s.subscriber_id, p.currency, m.month))),
       series AS (
         SELECT subscriber_id, currency, plan_id, month, delta,
                SUM(delta) OVER w AS mrr, lead(month) OVER w AS next_month,
                COALESCE(bool_or(true) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), false) AS had_steps
           FROM steps WHERE delta <> 0
         WINDOW w AS (PARTITION BY subscriber_id, currency, plan_id ORDER BY month)),
       moves AS (
         SELECT currency, plan_id, greatest(month, $2::int - 1) AS month, mrr, mrr - delta AS before, had_steps,
                month < $2::int AND (next_month IS NULL OR next_month >= $2::int) AS opening
           FROM series WHERE month < $2::int AND (next_month IS NULL OR next_month >= $2::int) OR month >= $2::int),
       groups AS (
         SELECT currency, plan_id, month,
                SUM(mrr) FILTER (WHERE opening) AS opening_mrr,
                count(*) FILTER (WHERE opening AND mrr > 0)::int AS opening_subscribers,
                SUM(mrr) FILTER (WHERE NOT opening AND before = 0 AND NOT had_steps) AS new_mrr,
                count(*) FILTER (WHERE NOT opening AND before = 0 AND NOT had_steps)::int AS new_subscribers,
                SUM(mrr - before) FILTER (WHERE NOT opening AND before > 0 AND mrr > before) AS expansion_mrr,
                count(*) FILTER (WHERE NOT opening AND before > 0 AND mrr > before)::int AS expansion_subscribers,
                SUM(mrr) FILTER (WHERE NOT opening AND before = 0 AND had_steps) AS reactivation_mrr,
                count(*) FILTER (WHERE NOT opening AND before = 0 AND had_steps)::int AS reactivated_subscribers,
                SUM(before - mrr) FILTER (WHERE NOT opening AND mrr > 0 AND mrr < before) AS contraction_mrr,
                count(*) FILTER (WHERE NOT opening AND mrr > 0 AND mrr < before)::int AS contraction_subscribers,
                SUM(before) FILTER (WHERE NOT opening AND before > 0 AND mrr = 0) AS churned_mrr,
                count(*) FILTER (WHERE NOT opening AND before > 0 AND mrr = 0)::int AS churned_subscribers
           FROM moves GROUP BY currency, plan_id, month)
       SELECT g.currency, g.plan_id, p.name AS plan_name, g.month,
              COALESCE(g.opening_mrr, 0) AS opening_mrr, g.opening_subscribers,
              COALESCE(g.new_mrr, 0) AS new_mrr, g.new_subscribers,
              COALESCE(g.expansion_mrr, 0) AS expansion_mrr, g.expansion_subscribers,
              COALESCE(g.reactivation_mrr, 0) AS reactivation_mrr, g.reactivated_subscribers,
              COALESCE(g.contraction_mrr, 0) AS contraction_mrr, g.contraction_subscribers,
              COALESCE(g.churned_mrr, 0) AS churned_mrr, g.churned_subscribers
         FROM groups g LEFT JOIN ${servicePlansTable('p')} ON p.tenant_id = $1 AND p.id = g.plan_id
        ORDER BY g.currency, g.plan_id NULLS FIRST, g.month`,
    [tenantId, first, last],
  );
}

/** The revenue report's rows of [start, end) from the invoices and credit notes themselves. */
export function oracleRevenueSums(
  manager: EntityManager,
  tenantId: string,
  start: Date,
  end: Date,
  group: 'month' | 'plan',
): Promise<RevenueSumRow[]> {
  return manager.query(group === 'month' ? BY_MONTH : BY_PLAN, [tenantId, start, end]);
}

/** A document's month of issue, UTC. */
const MONTH = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM')`;

const SUMS = `SUM(net) FILTER (WHERE kind = 'invoice') AS invoiced_net,
              SUM(net) FILTER (WHERE kind = 'credit_note') AS credited_net,
              SUM(tax) FILTER (WHERE kind = 'invoice') AS invoiced_tax,
              SUM(tax) FILTER (WHERE kind = 'credit_note') AS credited_tax,
              count(DISTINCT id) FILTER (WHERE kind = 'invoice')::int AS invoices,
              count(DISTINCT id) FILTER (WHERE kind = 'credit_note')::int AS credit_notes`;

const BY_MONTH = `WITH documents AS (
     SELECT i.id, i.currency, ${MONTH('i.finalized_at')} AS month, i.total - i.tax_amount AS net, i.tax_amount AS tax,
            'invoice' AS kind
       FROM invoices i
      WHERE i.tenant_id = $1 AND i.status NOT IN ('draft', 'void') AND i.finalized_at >= $2 AND i.finalized_at < $3
     UNION ALL
     SELECT c.id, c.currency, ${MONTH('c.created_at')}, c.total - c.tax_amount, c.tax_amount, 'credit_note'
       FROM credit_notes c
      WHERE c.tenant_id = $1 AND c.created_at >= $2 AND c.created_at < $3)
   SELECT currency, month, NULL AS plan_id, NULL AS plan_name, ${SUMS}
     FROM documents GROUP BY currency, month ORDER BY currency, month`;

const LINE_NET = `COALESCE((l->>'net_amount')::bigint, (l->>'amount')::bigint)`;

const BY_PLAN = `WITH documents AS (
     SELECT i.id, i.currency, l->>'plan_id' AS plan_id, ${LINE_NET} AS net,
            COALESCE((l->>'tax_amount')::bigint, 0) AS tax, 'invoice' AS kind
       FROM invoices i CROSS JOIN LATERAL jsonb_array_elements(i.lines) AS l
      WHERE i.tenant_id = $1 AND i.status NOT IN ('draft', 'void') AND i.finalized_at >= $2 AND i.finalized_at < $3
     UNION ALL
     SELECT c.id, c.currency, l->>'plan_id', ${LINE_NET}, COALESCE((l->>'tax_amount')::bigint, 0), 'credit_note'
       FROM credit_notes c CROSS JOIN LATERAL jsonb_array_elements(c.lines) AS l
      WHERE c.tenant_id = $1 AND c.created_at >= $2 AND c.created_at < $3),
   sums AS (SELECT currency, plan_id, ${SUMS} FROM documents GROUP BY currency, plan_id)
   SELECT s.currency, NULL AS month, s.plan_id, p.name AS plan_name, s.invoiced_net, s.credited_net, s.invoiced_tax,
          s.credited_tax, s.invoices, s.credit_notes
     FROM sums s LEFT JOIN ${servicePlansTable('p')} ON p.tenant_id = $1 AND p.id = s.plan_id
    ORDER BY s.currency, s.plan_id NULLS LAST`;

/**
 * Rebuilds one tenant's MRR tables from its services and orders, as the migration's backfill does: for the tests that
 * write services and orders straight into the tables, never through the API (whose completions keep them).
 */
export async function rebuildMrr(manager: EntityManager, tenantId: string): Promise<void> {
  for (const statement of MRR_REBUILD_STATEMENTS) {
    await manager.query(statement, [tenantId]);
  }
}

/** Rebuilds one tenant's revenue_days from its invoices and credit notes, as the migration's backfill does. */
export async function rebuildRevenue(manager: EntityManager, tenantId: string): Promise<void> {
  for (const statement of REVENUE_REBUILD_STATEMENTS) {
    await manager.query(statement, [tenantId]);
  }
}

const PAYABLE = PAYABLE_STATUSES.map((status) => `'${status}'`).join(', ');

/**
 * The aging statement before its totals were kept as data (src/billing/reports/aging.repository.ts at the commit
 * before 1796730000000-AgingKeptAsData), verbatim: every invoice finalised before `at` and neither voided nor written
 * off by then, less what was allocated to it before then, and every payment or credit received before then, less
 * what it had paid of invoices and what was refunded of it before then; totals per currency and the page's rows.
 */
export function oracleAgingSums(
  manager: EntityManager,
  tenantId: string,
  at: Date,
  asOf: string,
  startingAfter: string,
  limit: number,
): Promise<AgingSumRow[]> {
  return manager.query(
    `WITH open_invoices AS (
         SELECT i.subscriber_id, i.currency, $3::date - i.due_date AS late,
                i.total - COALESCE((SELECT SUM(a.amount) FROM allocations a
                                     WHERE a.tenant_id = $1 AND a.invoice_id = i.id AND a.created_at < $2), 0) AS open
           FROM invoices i
          WHERE i.tenant_id = $1 AND i.finalized_at < $2
            AND (i.status IN (${PAYABLE}) OR i.paid_at >= $2 OR i.voided_at >= $2 OR i.written_off_at >= $2)),
       moneys AS (
         SELECT t.subscriber_id, t.currency,
                t.amount
                - COALESCE((SELECT SUM(a.amount) FROM allocations a WHERE a.tenant_id = $1 AND a.transaction_id = t.id
                              AND a.invoice_id IS NOT NULL AND a.created_at < $2), 0)
                - COALESCE((SELECT SUM(r.amount) FROM transactions r WHERE r.tenant_id = $1 AND r.refund_of = t.id
                              AND r.created_at < $2), 0) AS unapplied
           FROM transactions t
          WHERE t.tenant_id = $1 AND t.kind IN ('payment', 'credit') AND t.created_at < $2
            AND (t.amount > t.allocated_amount + t.refunded_amount
                 OR t.id IN (SELECT a.transaction_id FROM allocations a
                              WHERE a.tenant_id = $1 AND (a.created_at >= $2 OR a.invoice_id IS NULL))
                 OR t.id IN (SELECT r.refund_of FROM transactions r
                              WHERE r.tenant_id = $1 AND r.refund_of IS NOT NULL AND r.created_at >= $2))),
       items AS (
         SELECT subscriber_id, currency, late, open, 0 AS unapplied FROM open_invoices WHERE open > 0
         UNION ALL
         SELECT subscriber_id, currency, NULL, 0, unapplied FROM moneys WHERE unapplied > 0),
       per_subscriber AS (
         SELECT subscriber_id, currency,
                COALESCE(SUM(open) FILTER (WHERE late <= 0), 0) AS current,
                COALESCE(SUM(open) FILTER (WHERE late BETWEEN 1 AND 30), 0) AS days_1_30,
                COALESCE(SUM(open) FILTER (WHERE late BETWEEN 31 AND 60), 0) AS days_31_60,
                COALESCE(SUM(open) FILTER (WHERE late BETWEEN 61 AND 90), 0) AS days_61_90,
                COALESCE(SUM(open) FILTER (WHERE late > 90), 0) AS days_over_90,
                SUM(open) AS total_open, SUM(unapplied) AS unapplied_credit,
                count(*) FILTER (WHERE open > 0)::int AS invoices
           FROM items GROUP BY subscriber_id, currency),
       page AS (
         SELECT DISTINCT subscriber_id FROM per_subscriber WHERE subscriber_id > $4
          ORDER BY subscriber_id LIMIT $5)
       SELECT 'total' AS kind, NULL AS subscriber_id, currency, SUM(current) AS current, SUM(days_1_30) AS days_1_30,
              SUM(days_31_60) AS days_31_60, SUM(days_61_90) AS days_61_90, SUM(days_over_90) AS days_over_90,
              SUM(total_open) AS total_open, SUM(unapplied_credit) AS unapplied_credit,
              SUM(invoices)::int AS invoices, count(*)::int AS subscribers
         FROM per_subscriber GROUP BY currency
       UNION ALL
       SELECT 'subscriber', subscriber_id, currency, current, days_1_30, days_31_60, days_61_90, days_over_90,
              total_open, unapplied_credit, invoices, 1
         FROM per_subscriber WHERE subscriber_id IN (SELECT subscriber_id FROM page)
       ORDER BY kind DESC, subscriber_id, currency`,
    [tenantId, at, asOf, startingAfter, limit],
  );
}

/** Rebuilds one tenant's aging tables from its invoices, allocations and transactions, as the migration's backfill does. */
export async function rebuildAging(manager: EntityManager, tenantId: string): Promise<void> {
  for (const statement of AGING_REBUILD_STATEMENTS) {
    await manager.query(statement, [tenantId]);
  }
}
