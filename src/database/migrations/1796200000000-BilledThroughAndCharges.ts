import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Billed-through dates, pending charges and run items (issue #28): `service_billing` keeps per service the first day
 * no charge covers and the advance charges still to true up; `charges` holds pending invoice items; and
 * `billing_run_items` what each run issued (or, dry, would issue) per subscriber. Services already billed get their
 * state from their subscriber's last billed period: before its start everything was settled; a service charged in
 * advance for it is billed until its end, with that charge open.
 */
export class BilledThroughAndCharges1796200000000 implements MigrationInterface {
  name = 'BilledThroughAndCharges1796200000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "service_billing" ("tenant_id" text NOT NULL, "service_id" text NOT NULL, "subscriber_id" text NOT NULL, "billed_until" date, "open_charges" jsonb NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_a83259d1c23c0ada7cbc0da2525" PRIMARY KEY ("tenant_id", "service_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_service_billing_subscriber" ON "service_billing"  ("tenant_id", "subscriber_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "billing_run_items" ("tenant_id" text NOT NULL, "id" text NOT NULL, "run_id" text NOT NULL, "subscriber_id" text NOT NULL, "currency" text NOT NULL, "lines" jsonb NOT NULL, "total" bigint NOT NULL, "invoice_id" text, "credit_id" text, "error" text, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_9dac80a5107a3e6e333498e1ca0" PRIMARY KEY ("tenant_id", "id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_billing_run_items_run_created" ON "billing_run_items"  ("tenant_id", "run_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_billing_run_items_subscriber" ON "billing_run_items"  ("run_id", "subscriber_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "charges" ("tenant_id" text NOT NULL, "id" text NOT NULL, "subscriber_id" text NOT NULL, "service_id" text, "description" text NOT NULL, "quantity" integer NOT NULL, "unit_amount" bigint NOT NULL, "amount" bigint NOT NULL, "currency" text NOT NULL, "status" text NOT NULL, "source" text NOT NULL, "source_id" text, "period_start" date, "period_end" date, "invoice_id" text, "credit_id" text, "invoiced_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_charges_invoiced" CHECK (("status" = 'invoiced') = ("invoiced_at" IS NOT NULL)), CONSTRAINT "chk_charges_amount" CHECK ("quantity" > 0 AND "amount" = "quantity" * "unit_amount"), CONSTRAINT "chk_charges_source" CHECK ("source" IN ('api', 'debit', 'termination', 'late_fee', 'reconnection_fee')), CONSTRAINT "chk_charges_status" CHECK ("status" IN ('pending', 'invoiced')), CONSTRAINT "PK_e7b067d67582f1d791e3660c028" PRIMARY KEY ("tenant_id", "id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_charges_source" ON "charges"  ("tenant_id", "source", "source_id") WHERE "source" IN ('debit', 'late_fee', 'reconnection_fee')`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_charges_tenant_subscriber_status" ON "charges"  ("tenant_id", "subscriber_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "service_billing" ADD CONSTRAINT "fk_service_billing_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_run_items" ADD CONSTRAINT "fk_billing_run_items_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_run_items" ADD CONSTRAINT "fk_billing_run_items_run" FOREIGN KEY ("run_id") REFERENCES "billing_runs"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "charges" ADD CONSTRAINT "fk_charges_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "charges" ADD CONSTRAINT "fk_charges_subscriber" FOREIGN KEY ("tenant_id", "subscriber_id") REFERENCES "subscribers"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `INSERT INTO "service_billing" ("tenant_id", "service_id", "subscriber_id", "billed_until", "open_charges", "updated_at")
       SELECT v.tenant_id, v.id, v.subscriber_id,
              CASE WHEN c.charge IS NULL THEN bp.period_start ELSE bp.period_end END,
              CASE WHEN c.charge IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object(
                'plan_id', c.charge->>'plan_id', 'amount', (c.charge->>'amount')::bigint,
                'from', bp.period_start, 'to', bp.period_end,
                'period_start', bp.period_start, 'period_end', bp.period_end)) END,
              now()
         FROM (SELECT DISTINCT ON (tenant_id, subscriber_id) * FROM "billing_periods"
                ORDER BY tenant_id, subscriber_id, period_start DESC) bp
         JOIN "services" v ON v.tenant_id = bp.tenant_id AND v.subscriber_id = bp.subscriber_id
                          AND v.activated_at IS NOT NULL AND v.activated_at < bp.created_at
         LEFT JOIN LATERAL (SELECT x AS charge FROM jsonb_array_elements(bp.charges) x
                             WHERE x->>'service_id' = v.id LIMIT 1) c ON true`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "charges" DROP CONSTRAINT "fk_charges_subscriber"`);
    await queryRunner.query(`ALTER TABLE "charges" DROP CONSTRAINT "fk_charges_tenant"`);
    await queryRunner.query(`ALTER TABLE "billing_run_items" DROP CONSTRAINT "fk_billing_run_items_run"`);
    await queryRunner.query(`ALTER TABLE "billing_run_items" DROP CONSTRAINT "fk_billing_run_items_tenant"`);
    await queryRunner.query(`ALTER TABLE "service_billing" DROP CONSTRAINT "fk_service_billing_tenant"`);
    await queryRunner.query(`DROP INDEX "public"."ix_charges_tenant_subscriber_status"`);
    await queryRunner.query(`DROP INDEX "public"."uq_charges_source"`);
    await queryRunner.query(`DROP TABLE "charges"`);
    await queryRunner.query(`DROP INDEX "public"."uq_billing_run_items_subscriber"`);
    await queryRunner.query(`DROP INDEX "public"."ix_billing_run_items_run_created"`);
    await queryRunner.query(`DROP TABLE "billing_run_items"`);
    await queryRunner.query(`DROP INDEX "public"."ix_service_billing_subscriber"`);
    await queryRunner.query(`DROP TABLE "service_billing"`);
  }
}
