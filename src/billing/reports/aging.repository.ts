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

/**
 * The aging report's one statement, as the books stood at `at` (the end of as_of): every invoice finalised before
 * then and neither voided nor written off by then, less what was allocated to it before then; and every payment or
 * credit received before then, less what it had paid of invoices and what was refunded of it before then. Only rows
 * that can be open at `at` are visited: invoices payable now or settled since, money unapplied now or applied or
 * refunded since (each found through an index of its own).
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
}
