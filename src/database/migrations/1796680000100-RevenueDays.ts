import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The backfill of one tenant ($1), as src/billing/reports writes the rows (a copy: a migration stays as it ran).
 */
const BACKFILL = [
  `INSERT INTO revenue_days (tenant_id, level, currency, plan_key, day, invoiced_net, invoiced_tax, invoices, credited_net, credited_tax, credit_notes) WITH docs AS (
     SELECT i.id, i.currency, (i.finalized_at AT TIME ZONE 'UTC')::date AS day, i.total - i.tax_amount AS net,
            i.tax_amount AS tax, i.lines, 'invoice' AS kind
       FROM invoices i
      WHERE i.tenant_id = $1 AND i.status NOT IN ('draft', 'void') AND i.finalized_at IS NOT NULL AND true
     UNION ALL
     SELECT c.id, c.currency, (c.created_at AT TIME ZONE 'UTC')::date, c.total - c.tax_amount, c.tax_amount, c.lines,
            'credit_note'
       FROM credit_notes c WHERE c.tenant_id = $1 AND true),
   parts AS (
     SELECT 'month' AS level, currency, '' AS plan_key, day, net, tax, kind FROM docs
     UNION ALL
     SELECT 'plan', d.currency, COALESCE(l->>'plan_id', ''), d.day, SUM(COALESCE((l->>'net_amount')::bigint, (l->>'amount')::bigint)),
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
     FROM parts GROUP BY level, currency, plan_key, day ORDER BY level, currency, plan_key, day`,
];

/**
 * Issue #35 target 5 (docs/reports.md, "How the reports are kept"): revenue_days, what the invoices and credit notes
 * issued on each UTC day sum to per tenant, currency and plan (level `plan`, from their lines) or in all (level
 * `month`, their own totals). Billing writes it in the transaction that issues, voids or credits a document; this
 * migration fills it for the documents already there, tenant by tenant.
 */
export class RevenueDays1796680000100 implements MigrationInterface {
  name = 'RevenueDays1796680000100';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(
      `CREATE TABLE "revenue_days" ("tenant_id" text NOT NULL, "level" text NOT NULL, "currency" text NOT NULL, "plan_key" text NOT NULL, "day" date NOT NULL, "invoiced_net" bigint NOT NULL DEFAULT 0, "invoiced_tax" bigint NOT NULL DEFAULT 0, "invoices" integer NOT NULL DEFAULT 0, "credited_net" bigint NOT NULL DEFAULT 0, "credited_tax" bigint NOT NULL DEFAULT 0, "credit_notes" integer NOT NULL DEFAULT 0, CONSTRAINT "chk_revenue_days_level" CHECK ("level" IN ('month', 'plan')), CONSTRAINT "PK_revenue_days" PRIMARY KEY ("tenant_id", "level", "currency", "plan_key", "day"))`,
    );
    const tenants: { id: string }[] = await queryRunner.query(
      `SELECT tenant_id AS id FROM invoices WHERE finalized_at IS NOT NULL
        UNION SELECT tenant_id FROM credit_notes ORDER BY 1`,
    );
    for (const { id } of tenants) {
      for (const statement of BACKFILL) {
        await queryRunner.query(statement, [id]);
      }
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "revenue_days"`);
  }
}
