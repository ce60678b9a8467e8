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

const LINE_NET = `COALESCE((l->>'net_amount')::bigint, (l->>'amount')::bigint)`;

/**
 * What the documents matching the filters add to revenue_days (tenant $1): the invoices issued (drafts and voided
 * ones left out, as the tax report does) by their day of issue (finalized_at, UTC), the credit notes by theirs
 * (created_at), each counted once with its own totals at the `month` level (plan_key '') and once per plan of its
 * lines at the `plan` level (plan_key '' for lines naming none).
 */
const documentsOf = (invoices: string, notes: string) => `WITH docs AS (
     SELECT i.id, i.currency, (i.finalized_at AT TIME ZONE 'UTC')::date AS day, i.total - i.tax_amount AS net,
            i.tax_amount AS tax, i.lines, 'invoice' AS kind
       FROM invoices i
      WHERE i.tenant_id = $1 AND i.status NOT IN ('draft', 'void') AND i.finalized_at IS NOT NULL AND ${invoices}
     UNION ALL
     SELECT c.id, c.currency, (c.created_at AT TIME ZONE 'UTC')::date, c.total - c.tax_amount, c.tax_amount, c.lines,
            'credit_note'
       FROM credit_notes c WHERE c.tenant_id = $1 AND ${notes}),
   parts AS (
     SELECT 'month' AS level, currency, '' AS plan_key, day, net, tax, kind FROM docs
     UNION ALL
     SELECT 'plan', d.currency, COALESCE(l->>'plan_id', ''), d.day, SUM(${LINE_NET}),
            SUM(COALESCE((l->>'tax_amount')::bigint, 0)), d.kind
       FROM docs d CROSS JOIN LATERAL jsonb_array_elements(d.lines) AS l
      GROUP BY d.id, d.currency, d.day, d.kind, COALESCE(l->>'plan_id', ''))
   SELECT $1 AS tenant_id, level, currency, plan_key, day,
          COALESCE(SUM(net) FILTER (WHERE kind = 'invoice'), 0) AS invoiced_net,
          COALESCE(SUM(tax) FILTER (WHERE kind = 'invoice'), 0) AS invoiced_tax,
          count(*) FILTER (WHERE kind = 'invoice')::int AS invoices,
          COALESCE(SUM(net) FILTER (WHERE kind = 'credit_note'), 0) AS credited_net,
          COALESCE(SUM(tax) FILTER (WHERE kind = 'credit_note'), 0) AS credited_tax,
          count(*) FILTER (WHERE kind = 'credit_note')::int AS credit_notes
     FROM parts GROUP BY level, currency, plan_key, day ORDER BY level, currency, plan_key, day`;

const FIELDS = ['invoiced_net', 'invoiced_tax', 'invoices', 'credited_net', 'credited_tax', 'credit_notes'];
const KEY = 'tenant_id, level, currency, plan_key, day';

/**
 * The statements that rebuild one tenant's ($1) revenue_days from its invoices and credit notes: the migration's
 * backfill for every tenant, and what the bench runs after seeding invoices straight into the table.
 */
export const REVENUE_REBUILD_STATEMENTS = [
  'DELETE FROM revenue_days WHERE tenant_id = $1',
  `INSERT INTO revenue_days (${KEY}, ${FIELDS.join(', ')}) ${documentsOf('true', 'true')}`,
];

/**
 * The revenue report's read and its table, revenue_days (docs/reports.md, "How the reports are kept"): per tenant,
 * level (`month`: the documents' own totals; `plan`: their lines per plan), currency, plan and UTC day, what the
 * invoices issued and the credit notes issued that day sum to. Written only here, in the transaction that issues an
 * invoice (created open, finalized, or by a bill run), voids an issued one, or issues a credit note.
 */
@Injectable()
export class RevenueRepository {
  /** A test tenant's revenue rows, its test clock deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM revenue_days WHERE tenant_id = $1', [tenantId]);
  }

  /** Adds (sign 1) or takes back (sign −1: before an issued invoice is voided) what these documents count. */
  async record(
    manager: EntityManager,
    tenantId: string,
    documents: { invoiceIds?: string[]; creditNoteIds?: string[] },
    sign: 1 | -1 = 1,
  ): Promise<void> {
    const invoiceIds = documents.invoiceIds ?? [];
    const creditNoteIds = documents.creditNoteIds ?? [];
    if (invoiceIds.length + creditNoteIds.length === 0) {
      return;
    }
    await manager.query(
      `INSERT INTO revenue_days (${KEY}, ${FIELDS.join(', ')})
       SELECT ${KEY}, ${FIELDS.map((field) => `$4::int * ${field}`).join(', ')}
         FROM (${documentsOf('i.id = ANY($2::text[])', 'c.id = ANY($3::text[])')}) AS added
       ON CONFLICT (${KEY}) DO UPDATE SET
         ${FIELDS.map((field) => `${field} = revenue_days.${field} + EXCLUDED.${field}`).join(', ')}`,
      [tenantId, invoiceIds, creditNoteIds, sign],
    );
  }

  /**
   * The report's read: the days of the window [start, end) (both UTC midnights) of one level, summed per currency and
   * month of issue, or per currency and plan.
   */
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

const WINDOW = `tenant_id = $1 AND day >= ($2::timestamptz AT TIME ZONE 'UTC')::date
  AND day < ($3::timestamptz AT TIME ZONE 'UTC')::date`;

const SUMS = `SUM(invoiced_net)::text AS invoiced_net, SUM(credited_net)::text AS credited_net,
              SUM(invoiced_tax)::text AS invoiced_tax, SUM(credited_tax)::text AS credited_tax,
              SUM(invoices)::int AS invoices, SUM(credit_notes)::int AS credit_notes`;

const BY_MONTH = `SELECT currency, to_char(day, 'YYYY-MM') AS month, NULL AS plan_id, NULL AS plan_name, ${SUMS}
     FROM revenue_days WHERE ${WINDOW} AND level = 'month'
    GROUP BY currency, to_char(day, 'YYYY-MM') HAVING SUM(invoices) + SUM(credit_notes) > 0
    ORDER BY currency, month`;

const BY_PLAN = `WITH sums AS (
     SELECT currency, NULLIF(plan_key, '') AS plan_id, ${SUMS}
       FROM revenue_days WHERE ${WINDOW} AND level = 'plan'
      GROUP BY currency, plan_key HAVING SUM(invoices) + SUM(credit_notes) > 0)
   SELECT s.currency, NULL AS month, s.plan_id, p.name AS plan_name, s.invoiced_net, s.credited_net, s.invoiced_tax,
          s.credited_tax, s.invoices, s.credit_notes
     FROM sums s LEFT JOIN ${servicePlansTable('p')} ON p.tenant_id = $1 AND p.id = s.plan_id
    ORDER BY s.currency, s.plan_id NULLS LAST`;
