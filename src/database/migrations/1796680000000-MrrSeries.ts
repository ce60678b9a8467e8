import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The backfill of one tenant ($1), as src/billing/reports writes the rows (a copy: a migration stays as it ran).
 */
const BACKFILL = [
  `INSERT INTO mrr_series (tenant_id, subscriber_id, currency, plan_key, month, delta, mrr, had_steps) WITH owned AS (
     SELECT v.id, v.subscriber_id, v.plan_id, v.activated_at, v.terminated_at
       FROM services v
      WHERE v.tenant_id = $1 AND v.activated_at IS NOT NULL AND true),
   plan_spans AS (
     SELECT o.service_id, o.plan_id, o.completed_at AS valid_from,
            lead(o.completed_at) OVER (PARTITION BY o.service_id ORDER BY o.completed_at, o.id) AS valid_to
       FROM provisioning_orders o
      WHERE o.tenant_id = $1 AND o.service_id IN (SELECT id FROM owned) AND o.status = 'completed'
        AND o.action IN ('activate', 'change_plan')),
   segments AS (
     SELECT v.subscriber_id, COALESCE(ps.plan_id, v.plan_id) AS plan_id,
            (extract(year FROM greatest(v.activated_at, ps.valid_from) AT TIME ZONE 'UTC')::int * 12 + extract(month FROM greatest(v.activated_at, ps.valid_from) AT TIME ZONE 'UTC')::int - 1) AS first_month,
            (extract(year FROM least(v.terminated_at, ps.valid_to) AT TIME ZONE 'UTC')::int * 12 + extract(month FROM least(v.terminated_at, ps.valid_to) AT TIME ZONE 'UTC')::int - 1) AS end_month
       FROM owned v LEFT JOIN plan_spans ps ON ps.service_id = v.id),
   steps AS (
     SELECT s.subscriber_id, p.currency, s.plan_id, m.month, SUM(m.sign * CASE p.billing_period WHEN 'quarterly' THEN (2 * p.price + 3) / 6
  WHEN 'yearly' THEN (2 * p.price + 12) / 24 ELSE p.price END) AS delta
       FROM segments s
       JOIN service_plans p ON p.tenant_id = $1 AND p.id = s.plan_id
       CROSS JOIN LATERAL (VALUES (s.first_month, 1), (s.end_month, -1)) AS m(month, sign)
      WHERE (s.end_month IS NULL OR s.end_month > s.first_month) AND m.month IS NOT NULL
      GROUP BY GROUPING SETS ((s.subscriber_id, p.currency, s.plan_id, m.month), (s.subscriber_id, p.currency, m.month)))
   SELECT $1 AS tenant_id, subscriber_id, currency, COALESCE(plan_id, '') AS plan_key, month, delta,
          SUM(delta) OVER w AS mrr,
          COALESCE(bool_or(true) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), false) AS had_steps
     FROM steps WHERE delta <> 0
   WINDOW w AS (PARTITION BY subscriber_id, currency, plan_id ORDER BY month)`,
  `WITH changed AS (SELECT s.*, 1 AS sign FROM mrr_series s WHERE s.tenant_id = $1) INSERT INTO mrr_months (tenant_id, currency, plan_key, month, steps, mrr_change, subscriber_change, new_mrr, new_subscribers, expansion_mrr, expansion_subscribers, reactivation_mrr, reactivated_subscribers, contraction_mrr, contraction_subscribers, churned_mrr, churned_subscribers)
   SELECT r.tenant_id, r.currency, r.plan_key, r.month, SUM(r.sign)::int AS steps,
          SUM(r.sign * r.delta) AS mrr_change,
          SUM(r.sign * ((r.mrr > 0)::int - (r.mrr - r.delta > 0)::int))::int AS subscriber_change,
          COALESCE(SUM(r.sign * r.mrr) FILTER (WHERE r.mrr = r.delta AND NOT r.had_steps), 0) AS new_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr = r.delta AND NOT r.had_steps), 0)::int AS new_subscribers,
          COALESCE(SUM(r.sign * r.delta) FILTER (WHERE r.mrr > r.delta AND r.delta > 0), 0) AS expansion_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr > r.delta AND r.delta > 0), 0)::int AS expansion_subscribers,
          COALESCE(SUM(r.sign * r.mrr) FILTER (WHERE r.mrr = r.delta AND r.had_steps), 0) AS reactivation_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr = r.delta AND r.had_steps), 0)::int AS reactivated_subscribers,
          COALESCE(SUM(-r.sign * r.delta) FILTER (WHERE r.mrr > 0 AND r.delta < 0), 0) AS contraction_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr > 0 AND r.delta < 0), 0)::int AS contraction_subscribers,
          COALESCE(SUM(-r.sign * r.delta) FILTER (WHERE r.mrr = 0 AND r.delta < 0), 0) AS churned_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr = 0 AND r.delta < 0), 0)::int AS churned_subscribers
     FROM changed r GROUP BY r.tenant_id, r.currency, r.plan_key, r.month
    ORDER BY r.tenant_id, r.currency, r.plan_key, r.month
   ON CONFLICT (tenant_id, currency, plan_key, month) DO UPDATE SET
     steps = mrr_months.steps + EXCLUDED.steps, mrr_change = mrr_months.mrr_change + EXCLUDED.mrr_change, subscriber_change = mrr_months.subscriber_change + EXCLUDED.subscriber_change, new_mrr = mrr_months.new_mrr + EXCLUDED.new_mrr, new_subscribers = mrr_months.new_subscribers + EXCLUDED.new_subscribers, expansion_mrr = mrr_months.expansion_mrr + EXCLUDED.expansion_mrr, expansion_subscribers = mrr_months.expansion_subscribers + EXCLUDED.expansion_subscribers, reactivation_mrr = mrr_months.reactivation_mrr + EXCLUDED.reactivation_mrr, reactivated_subscribers = mrr_months.reactivated_subscribers + EXCLUDED.reactivated_subscribers, contraction_mrr = mrr_months.contraction_mrr + EXCLUDED.contraction_mrr, contraction_subscribers = mrr_months.contraction_subscribers + EXCLUDED.contraction_subscribers, churned_mrr = mrr_months.churned_mrr + EXCLUDED.churned_mrr, churned_subscribers = mrr_months.churned_subscribers + EXCLUDED.churned_subscribers`,
];

/**
 * Issue #35 target 5 (docs/reports.md, "How the reports are kept"): MRR as data. mrr_series holds each subscriber's
 * MRR steps (per currency, plan_key '' for the subscriber level or the plan's id, and month: the step, the MRR after
 * it, whether an earlier step exists); mrr_months their per-tenant monthly rollup, classified as the report's
 * movements. Billing's reports write both in the transaction that completes an activate, change_plan or terminate
 * order; this migration fills them for the services and orders already there, tenant by tenant.
 */
export class MrrSeries1796680000000 implements MigrationInterface {
  name = 'MrrSeries1796680000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(
      `CREATE TABLE "mrr_series" ("tenant_id" text NOT NULL, "subscriber_id" text NOT NULL, "currency" text NOT NULL, "plan_key" text NOT NULL, "month" integer NOT NULL, "delta" bigint NOT NULL, "mrr" bigint NOT NULL, "had_steps" boolean NOT NULL, CONSTRAINT "PK_mrr_series" PRIMARY KEY ("tenant_id", "subscriber_id", "currency", "plan_key", "month"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_mrr_series_tenant_plan" ON "mrr_series" ("tenant_id", "plan_key") WHERE "plan_key" <> ''`,
    );
    const money = (name: string) => `"${name}" bigint NOT NULL DEFAULT 0`;
    const count = (name: string) => `"${name}" integer NOT NULL DEFAULT 0`;
    await queryRunner.query(
      `CREATE TABLE "mrr_months" ("tenant_id" text NOT NULL, "currency" text NOT NULL, "plan_key" text NOT NULL, "month" integer NOT NULL, ${[
        count('steps'),
        money('mrr_change'),
        count('subscriber_change'),
        money('new_mrr'),
        count('new_subscribers'),
        money('expansion_mrr'),
        count('expansion_subscribers'),
        money('reactivation_mrr'),
        count('reactivated_subscribers'),
        money('contraction_mrr'),
        count('contraction_subscribers'),
        money('churned_mrr'),
        count('churned_subscribers'),
      ].join(', ')}, CONSTRAINT "PK_mrr_months" PRIMARY KEY ("tenant_id", "currency", "plan_key", "month"))`,
    );
    const tenants: { id: string }[] = await queryRunner.query(
      'SELECT DISTINCT tenant_id AS id FROM services WHERE activated_at IS NOT NULL ORDER BY 1',
    );
    for (const { id } of tenants) {
      for (const statement of BACKFILL) {
        await queryRunner.query(statement, [id]);
      }
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mrr_months"`);
    await queryRunner.query(`DROP TABLE "mrr_series"`);
  }
}
