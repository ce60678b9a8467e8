import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** A row of the tax report's sums, as Postgres answers it (bigint sums as text). */
export interface TaxReportRow {
  currency: string;
  tax_rate_id: string;
  name: string;
  percentage: string;
  taxable: string;
  tax: string;
  invoiced_tax: string;
  credited_tax: string;
  invoices: number;
  credit_notes: number;
}

/** The tax report's one read: the documents' own tax summaries (invoices, credit notes), summed per currency and rate. */
@Injectable()
export class TaxReportRepository {
  sums(manager: EntityManager, tenantId: string, start: Date, end: Date): Promise<TaxReportRow[]> {
    return manager.query(
      `WITH documents AS (
         SELECT i.currency, x, 1 AS sign, 'invoice' AS kind
           FROM invoices i CROSS JOIN LATERAL jsonb_array_elements(i.taxes) AS x
          WHERE i.tenant_id = $1 AND i.status NOT IN ('draft', 'void')
            AND i.finalized_at >= $2 AND i.finalized_at < $3
         UNION ALL
         SELECT c.currency, x, -1, 'credit_note'
           FROM credit_notes c CROSS JOIN LATERAL jsonb_array_elements(c.taxes) AS x
          WHERE c.tenant_id = $1 AND c.created_at >= $2 AND c.created_at < $3)
       SELECT currency, x->>'tax_rate_id' AS tax_rate_id, min(x->>'name') AS name, x->>'percentage' AS percentage,
              SUM(sign * (x->>'taxable_amount')::bigint) AS taxable, SUM(sign * (x->>'amount')::bigint) AS tax,
              SUM(CASE WHEN sign = 1 THEN (x->>'amount')::bigint ELSE 0 END) AS invoiced_tax,
              SUM(CASE WHEN sign = -1 THEN (x->>'amount')::bigint ELSE 0 END) AS credited_tax,
              count(*) FILTER (WHERE kind = 'invoice')::int AS invoices,
              count(*) FILTER (WHERE kind = 'credit_note')::int AS credit_notes
         FROM documents
        GROUP BY currency, x->>'tax_rate_id', x->>'percentage'
        ORDER BY currency, x->>'tax_rate_id', x->>'percentage'`,
      [tenantId, start, end],
    );
  }
}
