import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Invoice lines as a bill run writes them: a credit line (unused days already billed) has a negative unit amount;
 * every line is still quantity > 0 × unit_amount = amount, and the invoice's total (never below 0) their sum.
 */
const LINES_VALID = (
  unitAmount: string,
) => `CREATE OR REPLACE FUNCTION isp_invoice_lines_valid(lines jsonb, total bigint) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT COALESCE(
          jsonb_typeof(lines) = 'array' AND jsonb_array_length(lines) > 0
          AND bool_and(
            jsonb_typeof(line->'quantity') = 'number' AND jsonb_typeof(line->'unit_amount') = 'number'
            AND jsonb_typeof(line->'amount') = 'number'
            AND (line->>'quantity')::numeric > 0 AND ${unitAmount}
            AND (line->>'amount')::numeric = (line->>'quantity')::numeric * (line->>'unit_amount')::numeric)
          AND sum((line->>'amount')::numeric) = total,
          false)
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(lines) = 'array' THEN lines ELSE '[]' END) AS line
      $$`;

export class RecurringBillingAutomation1795800000000 implements MigrationInterface {
  name = 'RecurringBillingAutomation1795800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // The writing transaction's id as a bigint (events.tx_id), a function so the column default has no cast in it.
    await queryRunner.query(
      `CREATE FUNCTION isp_current_tx_id() RETURNS bigint LANGUAGE sql VOLATILE AS $$ SELECT (pg_current_xact_id())::text::bigint $$`,
    );
    await queryRunner.query(
      `CREATE TABLE "billing_runs" ("tenant_id" text NOT NULL, "id" text NOT NULL, "as_of" date NOT NULL, "dry_run" boolean NOT NULL, "trigger" text NOT NULL, "status" text NOT NULL, "subscribers_due" integer NOT NULL, "subscribers_billed" integer NOT NULL, "invoices_created" integer NOT NULL, "credits_created" integer NOT NULL, "amount_total" jsonb NOT NULL, "errors" jsonb NOT NULL, "actor" jsonb NOT NULL, "request_id" text, "lease_id" text, "lease_until" TIMESTAMP(3) WITH TIME ZONE, "completed_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_billing_runs_counts" CHECK ("subscribers_due" >= 0 AND "subscribers_billed" >= 0 AND "invoices_created" >= 0 AND "credits_created" >= 0), CONSTRAINT "chk_billing_runs_trigger" CHECK ("trigger" IN ('api', 'schedule')), CONSTRAINT "chk_billing_runs_status" CHECK ("status" IN ('running', 'completed', 'failed')), CONSTRAINT "PK_6cbc5e20856bf81be0e61423167" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_billing_runs_claimable" ON "billing_runs"  ("lease_until") WHERE "status" = 'running'`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_billing_runs_scheduled_day" ON "billing_runs"  ("tenant_id", "as_of") WHERE "trigger" = 'schedule'`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_billing_runs_tenant_status_created" ON "billing_runs"  ("tenant_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_billing_runs_tenant_created" ON "billing_runs"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "billing_periods" ("tenant_id" text NOT NULL, "subscriber_id" text NOT NULL, "period_start" date NOT NULL, "period_end" date NOT NULL, "run_id" text NOT NULL, "invoice_id" text, "credit_id" text, "charges" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_billing_periods_range" CHECK ("period_end" > "period_start"), CONSTRAINT "PK_7b80dd55e8ec98501795e586cfc" PRIMARY KEY ("tenant_id", "subscriber_id", "period_start"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_billing_periods_run" ON "billing_periods"  ("run_id") `);
    await queryRunner.query(
      `CREATE TABLE "automation_rule_settings" ("tenant_id" text NOT NULL, "rule" text NOT NULL, "enabled" boolean NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_5228659ba386759f43cb4837f74" PRIMARY KEY ("tenant_id", "rule"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "event_consumers" ("name" text NOT NULL, "last_tx_id" bigint NOT NULL, "last_event_id" text NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_4c73e458be53c987081011be541" PRIMARY KEY ("name"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "automation_effects" ("tenant_id" text NOT NULL, "rule" text NOT NULL, "subject_id" text NOT NULL, "result_id" text, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_f3339f63aeaea50cdb94474f2bb" PRIMARY KEY ("tenant_id", "rule", "subject_id"))`,
    );
    await queryRunner.query(`ALTER TABLE "events" ADD "tx_id" bigint NOT NULL DEFAULT isp_current_tx_id()`);
    await queryRunner.query(`ALTER TABLE "billing_profiles" ADD "is_default" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`CREATE INDEX "ix_events_tx" ON "events"  ("tx_id", "id") `);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_billing_profiles_default" ON "billing_profiles"  ("tenant_id") WHERE "is_default"`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_runs" ADD CONSTRAINT "fk_billing_runs_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_periods" ADD CONSTRAINT "fk_billing_periods_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_periods" ADD CONSTRAINT "fk_billing_periods_run" FOREIGN KEY ("run_id") REFERENCES "billing_runs"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_periods" ADD CONSTRAINT "fk_billing_periods_subscriber" FOREIGN KEY ("tenant_id", "subscriber_id") REFERENCES "subscribers"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "automation_rule_settings" ADD CONSTRAINT "fk_automation_rule_settings_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "automation_effects" ADD CONSTRAINT "fk_automation_effects_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(LINES_VALID(`true`));
    // The automation consumer starts at the log's end: events written before rules existed are not acted on.
    await queryRunner.query(
      `INSERT INTO "event_consumers" ("name", "last_tx_id", "last_event_id", "updated_at")
           VALUES ('automation', (pg_current_xact_id())::text::bigint, 'evt_ZZZZZZZZZZZZZZZZZZZZZZZZZZ', now())`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(LINES_VALID(`(line->>'unit_amount')::numeric >= 0`));
    await queryRunner.query(`DELETE FROM "event_consumers"`);
    await queryRunner.query(
      `ALTER TABLE "automation_effects" DROP CONSTRAINT "fk_automation_effects_tenant"`,
    );
    await queryRunner.query(
      `ALTER TABLE "automation_rule_settings" DROP CONSTRAINT "fk_automation_rule_settings_tenant"`,
    );
    await queryRunner.query(`ALTER TABLE "billing_periods" DROP CONSTRAINT "fk_billing_periods_subscriber"`);
    await queryRunner.query(`ALTER TABLE "billing_periods" DROP CONSTRAINT "fk_billing_periods_run"`);
    await queryRunner.query(`ALTER TABLE "billing_periods" DROP CONSTRAINT "fk_billing_periods_tenant"`);
    await queryRunner.query(`ALTER TABLE "billing_runs" DROP CONSTRAINT "fk_billing_runs_tenant"`);
    await queryRunner.query(`DROP INDEX "public"."uq_billing_profiles_default"`);
    await queryRunner.query(`DROP INDEX "public"."ix_events_tx"`);
    await queryRunner.query(`ALTER TABLE "billing_profiles" DROP COLUMN "is_default"`);
    await queryRunner.query(`ALTER TABLE "events" DROP COLUMN "tx_id"`);
    await queryRunner.query(`DROP TABLE "automation_effects"`);
    await queryRunner.query(`DROP TABLE "event_consumers"`);
    await queryRunner.query(`DROP TABLE "automation_rule_settings"`);
    await queryRunner.query(`DROP INDEX "public"."ix_billing_periods_run"`);
    await queryRunner.query(`DROP TABLE "billing_periods"`);
    await queryRunner.query(`DROP INDEX "public"."ix_billing_runs_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_billing_runs_tenant_status_created"`);
    await queryRunner.query(`DROP INDEX "public"."uq_billing_runs_scheduled_day"`);
    await queryRunner.query(`DROP INDEX "public"."ix_billing_runs_claimable"`);
    await queryRunner.query(`DROP TABLE "billing_runs"`);
    await queryRunner.query(`DROP FUNCTION isp_current_tx_id()`);
  }
}
