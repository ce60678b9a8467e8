import { MigrationInterface, QueryRunner } from 'typeorm';

const ACTIONS_BEFORE = `'activate', 'suspend', 'resume', 'change_plan', 'modify', 'terminate'`;
const CAP_ACTIONS = `'cap_throttle', 'cap_block', 'cap_restore'`;

/**
 * Issue 33 items 2 and 3: data caps (a plan's cap per billing period, throttle or block, the throttle rates; a
 * service's cap state; the periods the worker warned and capped in; top-ups) and burst rates on plans.
 */
export class DataCapsAndBurst1796710000000 implements MigrationInterface {
  name = 'DataCapsAndBurst1796710000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "service_plans" ADD "data_cap_bytes" bigint, ADD "cap_action" text, ADD "throttle_download_kbps" integer, ADD "throttle_upload_kbps" integer, ADD "burst_download_kbps" integer, ADD "burst_upload_kbps" integer, ADD "burst_threshold_download_kbps" integer, ADD "burst_threshold_upload_kbps" integer, ADD "burst_time_s" integer`,
    );
    await queryRunner.query(
      `ALTER TABLE "service_plans" ADD CONSTRAINT "chk_service_plans_data_cap" CHECK (("data_cap_bytes" IS NULL AND "cap_action" IS NULL) OR ("data_cap_bytes" > 0 AND "cap_action" IN ('throttle', 'block')))`,
    );
    await queryRunner.query(
      `ALTER TABLE "service_plans" ADD CONSTRAINT "chk_service_plans_throttle" CHECK (("throttle_download_kbps" IS NULL AND "throttle_upload_kbps" IS NULL AND "cap_action" IS DISTINCT FROM 'throttle') OR ("throttle_download_kbps" > 0 AND "throttle_upload_kbps" > 0 AND "cap_action" = 'throttle'))`,
    );
    await queryRunner.query(
      `ALTER TABLE "service_plans" ADD CONSTRAINT "chk_service_plans_burst" CHECK (("burst_download_kbps" IS NULL AND "burst_upload_kbps" IS NULL AND "burst_threshold_download_kbps" IS NULL AND "burst_threshold_upload_kbps" IS NULL AND "burst_time_s" IS NULL) OR ("burst_download_kbps" > "download_kbps" AND "burst_upload_kbps" > "upload_kbps" AND "burst_threshold_download_kbps" BETWEEN 1 AND "download_kbps" AND "burst_threshold_upload_kbps" BETWEEN 1 AND "upload_kbps" AND "burst_time_s" > 0))`,
    );
    await queryRunner.query(`ALTER TABLE "services" ADD "cap_state" text NOT NULL DEFAULT 'normal'`);
    await queryRunner.query(
      `ALTER TABLE "services" ADD CONSTRAINT "chk_services_cap_state" CHECK ("cap_state" IN ('normal', 'throttled', 'blocked'))`,
    );
    await queryRunner.query(
      `ALTER TABLE "provisioning_orders" DROP CONSTRAINT "chk_provisioning_orders_action"`,
    );
    await queryRunner.query(
      `ALTER TABLE "provisioning_orders" ADD CONSTRAINT "chk_provisioning_orders_action" CHECK ("action" IN (${ACTIONS_BEFORE}, ${CAP_ACTIONS}))`,
    );
    await queryRunner.query(`ALTER TABLE "charges" DROP CONSTRAINT "chk_charges_source"`);
    await queryRunner.query(
      `ALTER TABLE "charges" ADD CONSTRAINT "chk_charges_source" CHECK ("source" IN ('api', 'debit', 'termination', 'late_fee', 'reconnection_fee', 'top_up'))`,
    );
    await queryRunner.query(
      `CREATE TABLE "service_usage_periods" ("tenant_id" text NOT NULL, "service_id" text NOT NULL, "period_start" date NOT NULL, "period_end" date NOT NULL, "warned_at" TIMESTAMP(3) WITH TIME ZONE, "reached_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_service_usage_periods_range" CHECK ("period_end" > "period_start"), CONSTRAINT "PK_service_usage_periods" PRIMARY KEY ("tenant_id", "service_id", "period_start"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "service_usage_periods" ADD CONSTRAINT "fk_service_usage_periods_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "service_usage_periods" ADD CONSTRAINT "fk_service_usage_periods_service" FOREIGN KEY ("tenant_id", "service_id") REFERENCES "services"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "service_top_ups" ("tenant_id" text NOT NULL, "id" text NOT NULL, "service_id" text NOT NULL, "subscriber_id" text NOT NULL, "bytes" bigint NOT NULL, "price" bigint NOT NULL, "currency" text NOT NULL, "description" text NOT NULL, "period_start" date NOT NULL, "period_end" date NOT NULL, "charge_id" text, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_service_top_ups_bytes" CHECK ("bytes" > 0), CONSTRAINT "chk_service_top_ups_price" CHECK ("price" >= 0), CONSTRAINT "PK_service_top_ups" PRIMARY KEY ("tenant_id", "id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_service_top_ups_service_period" ON "service_top_ups" ("tenant_id", "service_id", "period_start")`,
    );
    await queryRunner.query(
      `ALTER TABLE "service_top_ups" ADD CONSTRAINT "fk_service_top_ups_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "service_top_ups" ADD CONSTRAINT "fk_service_top_ups_service" FOREIGN KEY ("tenant_id", "service_id") REFERENCES "services"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "service_top_ups"`);
    await queryRunner.query(`DROP TABLE "service_usage_periods"`);
    await queryRunner.query(`ALTER TABLE "charges" DROP CONSTRAINT "chk_charges_source"`);
    await queryRunner.query(
      `ALTER TABLE "charges" ADD CONSTRAINT "chk_charges_source" CHECK ("source" IN ('api', 'debit', 'termination', 'late_fee', 'reconnection_fee'))`,
    );
    await queryRunner.query(
      `ALTER TABLE "provisioning_orders" DROP CONSTRAINT "chk_provisioning_orders_action"`,
    );
    await queryRunner.query(
      `ALTER TABLE "provisioning_orders" ADD CONSTRAINT "chk_provisioning_orders_action" CHECK ("action" IN (${ACTIONS_BEFORE}))`,
    );
    await queryRunner.query(`ALTER TABLE "services" DROP CONSTRAINT "chk_services_cap_state"`);
    await queryRunner.query(`ALTER TABLE "services" DROP COLUMN "cap_state"`);
    for (const check of ['burst', 'throttle', 'data_cap']) {
      await queryRunner.query(`ALTER TABLE "service_plans" DROP CONSTRAINT "chk_service_plans_${check}"`);
    }
    await queryRunner.query(
      `ALTER TABLE "service_plans" DROP COLUMN "data_cap_bytes", DROP COLUMN "cap_action", DROP COLUMN "throttle_download_kbps", DROP COLUMN "throttle_upload_kbps", DROP COLUMN "burst_download_kbps", DROP COLUMN "burst_upload_kbps", DROP COLUMN "burst_threshold_download_kbps", DROP COLUMN "burst_threshold_upload_kbps", DROP COLUMN "burst_time_s"`,
    );
  }
}
