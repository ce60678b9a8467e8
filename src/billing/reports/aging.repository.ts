import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { PAYABLE_STATUSES } from '../invoices/invoice.entity';

/** A row of the aging statement (bigint sums as text): a currency's total, or a subscriber's in one currency. */
export interface AgingSumRow {
  kind: 'total' | 'subscriber';
  subscriber_id: string | null;
  currency: string;
  current: string;
  days_1_30: string;
  days_31_60: string;
  days_61_90: string;
  days_over_90: string;
  total_open: string;
  unapplied_credit: string;
  invoices: number;
  subscribers: number;
}

const PAYABLE = PAYABLE_STATUSES.map((status) => `'${status}'`).join(', ');

/** A UTC day of a timestamp expression. */
const DAY = (expression: string) => `(${expression} AT TIME ZONE 'UTC')::date`;

/**
 * When an issued invoice stopped being payable (paid, voided, written off; its finalisation for such a row without the
 * instant, which the report never counted open); null while it is payable.
 */
const ENDED_AT = (i: string) =>
  `COALESCE(CASE ${i}.status WHEN 'paid' THEN ${i}.paid_at WHEN 'void' THEN ${i}.voided_at WHEN 'written_off' THEN ${i}.written_off_at END, CASE WHEN ${i}.status IN ('paid', 'void', 'written_off') THEN ${i}.finalized_at END)`;

/**
 * The statements that rebuild one tenant's ($1) aging tables from its invoices, allocations and transactions, as the
 * triggers keep them (src/database/migrations/1796730000000-AgingKeptAsData.ts): the migration's backfill for every
 * tenant, and what the bench runs after seeding invoices and payments straight into the tables with the triggers off.
 */
export const AGING_REBUILD_STATEMENTS = [
  'DELETE FROM aging_days WHERE tenant_id = $1',
  'DELETE FROM aging_credit_days WHERE tenant_id = $1',
  'DELETE FROM aging_subscriber_days WHERE tenant_id = $1',
  `INSERT INTO aging_days (tenant_id, currency, due_date, day, shard, open_amount, invoices)
   WITH issued AS (
          SELECT i.*, ${ENDED_AT('i')} AS ended_at FROM invoices i
           WHERE i.tenant_id = $1 AND i.status <> 'draft' AND i.finalized_at IS NOT NULL),
        moves AS (
          SELECT subscriber_id, currency, due_date, ${DAY('finalized_at')} AS day, total AS amount,
                 (total > 0)::int AS n FROM issued
          UNION ALL
          SELECT subscriber_id, currency, due_date, ${DAY('ended_at')}, amount_paid - total, -(total > 0)::int
            FROM issued WHERE ended_at IS NOT NULL
          UNION ALL
          SELECT i.subscriber_id, i.currency, i.due_date,
                 ${DAY(`LEAST(a.created_at, ${ENDED_AT('i')})`)}, -a.amount, 0
            FROM allocations a JOIN invoices i ON i.tenant_id = a.tenant_id AND i.id = a.invoice_id
           WHERE a.tenant_id = $1)
   SELECT $1, currency, due_date, day, aging_shard(subscriber_id), SUM(amount), SUM(n)
     FROM moves GROUP BY currency, due_date, day, aging_shard(subscriber_id)`,
  `INSERT INTO aging_subscriber_days (tenant_id, subscriber_id, currency, day, invoices, unapplied, debtor)
   WITH issued AS (
          SELECT i.*, ${ENDED_AT('i')} AS ended_at FROM invoices i
           WHERE i.tenant_id = $1 AND i.status <> 'draft' AND i.finalized_at IS NOT NULL AND i.total > 0),
        moves AS (
          SELECT subscriber_id, currency, ${DAY('finalized_at')} AS day, 1 AS n, 0::bigint AS u FROM issued
          UNION ALL
          SELECT subscriber_id, currency, ${DAY('ended_at')}, -1, 0 FROM issued WHERE ended_at IS NOT NULL
          UNION ALL
          SELECT subscriber_id, currency, ${DAY('created_at')}, 0, amount FROM transactions
           WHERE tenant_id = $1 AND kind IN ('payment', 'credit')
          UNION ALL
          SELECT m.subscriber_id, m.currency, ${DAY('a.created_at')}, 0, -a.amount
            FROM allocations a JOIN transactions m ON m.tenant_id = a.tenant_id AND m.id = a.transaction_id
           WHERE a.tenant_id = $1 AND a.invoice_id IS NOT NULL AND m.kind IN ('payment', 'credit')
          UNION ALL
          SELECT m.subscriber_id, m.currency, ${DAY('r.created_at')}, 0, -r.amount
            FROM transactions r JOIN transactions m ON m.tenant_id = r.tenant_id AND m.id = r.refund_of
           WHERE r.tenant_id = $1 AND r.kind = 'refund' AND m.kind IN ('payment', 'credit')),
        days AS (
          SELECT subscriber_id, currency, day, SUM(n)::int AS invoices, SUM(u)::bigint AS unapplied
            FROM moves GROUP BY subscriber_id, currency, day),
        series AS (
          SELECT *, CASE WHEN SUM(invoices) OVER w > 0 OR SUM(unapplied) OVER w > 0 THEN 1 ELSE 0 END AS status
            FROM days WINDOW w AS (PARTITION BY subscriber_id, currency ORDER BY day))
   SELECT $1, subscriber_id, currency, day, invoices, unapplied,
          status - COALESCE(lag(status) OVER (PARTITION BY subscriber_id, currency ORDER BY day), 0)
     FROM series`,
  `INSERT INTO aging_credit_days (tenant_id, currency, day, shard, unapplied, subscribers)
   SELECT $1, currency, day, aging_shard(subscriber_id), SUM(unapplied), SUM(debtor)
     FROM aging_subscriber_days WHERE tenant_id = $1
    GROUP BY currency, day, aging_shard(subscriber_id)`,
];

/** Buckets of an open amount by days past due (`late`), summed. */
const BUCKETS = (
  open: string,
  late: string,
) => `COALESCE(SUM(${open}) FILTER (WHERE ${late} <= 0), 0) AS current,
       COALESCE(SUM(${open}) FILTER (WHERE ${late} BETWEEN 1 AND 30), 0) AS days_1_30,
       COALESCE(SUM(${open}) FILTER (WHERE ${late} BETWEEN 31 AND 60), 0) AS days_31_60,
       COALESCE(SUM(${open}) FILTER (WHERE ${late} BETWEEN 61 AND 90), 0) AS days_61_90,
       COALESCE(SUM(${open}) FILTER (WHERE ${late} > 90), 0) AS days_over_90`;

/**
 * The aging report's read (docs/reports.md, "How the reports are kept"), one statement so one snapshot, as the books
 * stood at `at` (the end of as_of):
 * - the totals from the kept deltas, summed up to as_of: aging_days per currency and due date (bucketed by as_of −
 *   due date; a few rows per due date and day), aging_credit_days per currency (unapplied money, and the debtors: the
 *   subscribers with an open invoice or unapplied money in the currency);
 * - the page: the first `limit` subscribers after the cursor that were debtors at as_of, found in subscriber order
 *   through the index of their debtor steps (aging_subscriber_days, a subscriber's steps summed up to as_of), then
 *   only those subscribers' invoices open at `at` (finalised before it and neither voided nor written off by then,
 *   less what was allocated to them before it) and money unapplied at `at` (payments and credits received before it,
 *   less what they had paid of invoices and what was refunded of them before it).
 */
@Injectable()
export class AgingRepository {
  sums(
    manager: EntityManager,
    tenantId: string,
    at: Date,
    asOf: string,
    startingAfter: string,
    limit: number,
  ): Promise<AgingSumRow[]> {
    return manager.query(
      `WITH open_days AS (
         SELECT currency, $3::date - due_date AS late, SUM(open_amount) AS open, SUM(invoices) AS invoices
           FROM aging_days WHERE tenant_id = $1 AND day <= $3::date GROUP BY currency, due_date),
       credit AS (
         SELECT currency, SUM(unapplied) AS unapplied, SUM(subscribers) AS subscribers
           FROM aging_credit_days WHERE tenant_id = $1 AND day <= $3::date GROUP BY currency),
       totals AS (
         SELECT c.currency, ${BUCKETS('o.open', 'o.late')}, COALESCE(SUM(o.open), 0) AS total_open,
                c.unapplied AS unapplied_credit, COALESCE(SUM(o.invoices), 0) AS invoices, c.subscribers
           FROM credit c LEFT JOIN open_days o ON o.currency = c.currency
          WHERE c.subscribers > 0 GROUP BY c.currency, c.unapplied, c.subscribers),
       page AS (
         SELECT subscriber_id FROM aging_subscriber_days
          WHERE tenant_id = $1 AND subscriber_id > $4 AND debtor <> 0 AND day <= $3::date
          GROUP BY subscriber_id HAVING SUM(debtor) > 0 ORDER BY subscriber_id LIMIT $5),
       open_invoices AS (
         SELECT i.subscriber_id, i.currency, $3::date - i.due_date AS late,
                i.total - COALESCE((SELECT SUM(a.amount) FROM allocations a
                                     WHERE a.tenant_id = $1 AND a.invoice_id = i.id AND a.created_at < $2), 0) AS open
           FROM invoices i
          WHERE i.tenant_id = $1 AND i.subscriber_id = ANY(ARRAY(SELECT subscriber_id FROM page)) AND i.finalized_at < $2
            AND (i.status IN (${PAYABLE}) OR i.paid_at >= $2 OR i.voided_at >= $2 OR i.written_off_at >= $2)),
       moneys AS (
         SELECT t.subscriber_id, t.currency,
                t.amount
                - COALESCE((SELECT SUM(a.amount) FROM allocations a WHERE a.tenant_id = $1 AND a.transaction_id = t.id
                              AND a.invoice_id IS NOT NULL AND a.created_at < $2), 0)
                - COALESCE((SELECT SUM(r.amount) FROM transactions r WHERE r.tenant_id = $1 AND r.refund_of = t.id
                              AND r.created_at < $2), 0) AS unapplied
           FROM transactions t
          WHERE t.tenant_id = $1 AND t.subscriber_id = ANY(ARRAY(SELECT subscriber_id FROM page))
            AND t.kind IN ('payment', 'credit') AND t.created_at < $2
            AND (t.amount > t.allocated_amount + t.refunded_amount
                 OR EXISTS (SELECT 1 FROM allocations a WHERE a.tenant_id = $1 AND a.transaction_id = t.id
                               AND (a.created_at >= $2 OR a.invoice_id IS NULL))
                 OR EXISTS (SELECT 1 FROM transactions r WHERE r.tenant_id = $1 AND r.refund_of = t.id
                               AND r.created_at >= $2))),
       items AS (
         SELECT subscriber_id, currency, late, open, 0 AS unapplied FROM open_invoices WHERE open > 0
         UNION ALL
         SELECT subscriber_id, currency, NULL, 0, unapplied FROM moneys WHERE unapplied > 0),
       per_subscriber AS (
         SELECT subscriber_id, currency, ${BUCKETS('open', 'late')},
                SUM(open) AS total_open, SUM(unapplied) AS unapplied_credit,
                count(*) FILTER (WHERE open > 0)::int AS invoices
           FROM items GROUP BY subscriber_id, currency)
       SELECT 'total' AS kind, NULL AS subscriber_id, currency, current, days_1_30, days_31_60, days_61_90,
              days_over_90, total_open, unapplied_credit, invoices::int AS invoices, subscribers::int AS subscribers
         FROM totals
       UNION ALL
       SELECT 'subscriber', subscriber_id, currency, current, days_1_30, days_31_60, days_61_90, days_over_90,
              total_open, unapplied_credit, invoices, 1
         FROM per_subscriber
       ORDER BY kind DESC, subscriber_id, currency`,
      [tenantId, at, asOf, startingAfter, limit],
    );
  }

  /** A test tenant's aging rows, its test clock deleted (docs/test-clocks.md): after its invoices and transactions. */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['aging_days', 'aging_credit_days', 'aging_subscriber_days']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
