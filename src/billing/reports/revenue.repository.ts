import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { servicePlansTable } from '../../provisioning';
import type { RevenueGroup } from './dto/report-query.dto';

/** A row of the revenue report as Postgres answers it (bigint sums as text). */
export interface RevenueSumRow {
  currency: string;
  month: string | null;
  plan_id: string | null;
  plan_name: string | null;
  invoiced_net: string;
  credited_net: string;
  invoiced_tax: string;
  credited_tax: string;
  invoices: number;
  credit_notes: number;
}

/** A document's month of issue, UTC. */
const MONTH = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM')`;

/**
 * The revenue report's one read: the invoices issued in the window (by finalized_at; drafts and voided ones left out,
 * as the tax report does) less the credit notes issued in it, without tax and tax apart, per currency and month of
 * issue (the documents' own totals) or per currency and plan (their lines).
 */
@Injectable()
export class RevenueRepository {
  sums(
    manager: EntityManager,
    tenantId: string,
    start: Date,
    end: Date,
    group: RevenueGroup,
  ): Promise<RevenueSumRow[]> {
    return manager.query(group === 'month' ? BY_MONTH : BY_PLAN, [tenantId, start, end]);
  }
}

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
