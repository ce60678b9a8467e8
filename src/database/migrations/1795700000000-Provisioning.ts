import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * FreeRADIUS's standard SQL tables (the layout of its PostgreSQL schema.sql, columns lower-case), created in the
 * API's database for the radius-sql network driver; a deployment whose FreeRADIUS reads another database names it in
 * RADIUS_DATABASE_URL and loads FreeRADIUS's own schema there (docs/network.md).
 */
const RADIUS_TABLES: [table: string, key: string, op: string][] = [
  ['radcheck', 'username', '=='],
  ['radreply', 'username', '='],
  ['radgroupcheck', 'groupname', '=='],
  ['radgroupreply', 'groupname', '='],
];

/**
 * Issue #15, provisioning: service plans, services (one live service per PPPoE username and per static address, held
 * by partial unique indexes), provisioning orders (one open order per service), and the RADIUS tables.
 */
export class Provisioning1795700000000 implements MigrationInterface {
  name = 'Provisioning1795700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    for (const [table, key, op] of RADIUS_TABLES) {
      await queryRunner.query(
        `CREATE TABLE IF NOT EXISTS "${table}" ("id" serial PRIMARY KEY, "${key}" text NOT NULL DEFAULT '', ` +
          `"attribute" text NOT NULL DEFAULT '', "op" varchar(2) NOT NULL DEFAULT '${op}', "value" text NOT NULL DEFAULT '')`,
      );
      await queryRunner.query(
        `CREATE INDEX IF NOT EXISTS "${table}_${key}" ON "${table}" ("${key}", "attribute")`,
      );
    }
    await queryRunner.query(
      `CREATE TABLE IF NOT EXISTS "radusergroup" ("id" serial PRIMARY KEY, "username" text NOT NULL DEFAULT '', ` +
        `"groupname" text NOT NULL DEFAULT '', "priority" integer NOT NULL DEFAULT 0)`,
    );
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS "radusergroup_username" ON "radusergroup" ("username")`,
    );
    await queryRunner.query(
      `CREATE TABLE "service_plans" ("tenant_id" text NOT NULL, "id" text NOT NULL, "name" text NOT NULL, "download_kbps" integer NOT NULL, "upload_kbps" integer NOT NULL, "price" bigint NOT NULL, "currency" text NOT NULL, "billing_period" text NOT NULL, "active" boolean NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_service_plans_billing_period" CHECK ("billing_period" IN ('monthly', 'quarterly', 'yearly')), CONSTRAINT "chk_service_plans_price" CHECK ("price" >= 0), CONSTRAINT "chk_service_plans_speeds" CHECK ("download_kbps" > 0 AND "upload_kbps" > 0), CONSTRAINT "PK_679a9e435f1af95a94d9749a087" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_service_plans_tenant_id" ON "service_plans"  ("tenant_id", "id") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_service_plans_name" ON "service_plans"  ("tenant_id", "name") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_service_plans_tenant_created" ON "service_plans"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "services" ("tenant_id" text NOT NULL, "id" text NOT NULL, "subscriber_id" text NOT NULL, "plan_id" text NOT NULL, "status" text NOT NULL, "pppoe_username" text NOT NULL, "radius_username" text NOT NULL, "pppoe_password" text NOT NULL, "static_ipv4" text, "cpe_mac" text, "installation_address" text, "activated_at" TIMESTAMP(3) WITH TIME ZONE, "terminated_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_services_status" CHECK ("status" IN ('pending', 'active', 'suspended', 'terminated')), CONSTRAINT "PK_ba2d347a3168a296416c6c5ccb2" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_services_static_ipv4" ON "services"  ("tenant_id", "static_ipv4") WHERE "status" <> 'terminated' AND "static_ipv4" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_services_pppoe_username" ON "services"  ("tenant_id", "pppoe_username") WHERE "status" <> 'terminated'`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_services_tenant_id" ON "services"  ("tenant_id", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_services_tenant_username" ON "services"  ("tenant_id", "pppoe_username") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_services_tenant_plan_created" ON "services"  ("tenant_id", "plan_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_services_tenant_status_created" ON "services"  ("tenant_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_services_tenant_subscriber_created" ON "services"  ("tenant_id", "subscriber_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_services_tenant_created" ON "services"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "provisioning_orders" ("tenant_id" text NOT NULL, "id" text NOT NULL, "service_id" text NOT NULL, "subscriber_id" text NOT NULL, "action" text NOT NULL, "status" text NOT NULL, "plan_id" text NOT NULL, "changes" text array, "reason" text, "attempts" integer NOT NULL, "last_error" text, "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "lease_id" text, "lease_until" TIMESTAMP(3) WITH TIME ZONE, "completed_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_provisioning_orders_attempts" CHECK ("attempts" >= 0), CONSTRAINT "chk_provisioning_orders_action" CHECK ("action" IN ('activate', 'suspend', 'resume', 'change_plan', 'modify', 'terminate')), CONSTRAINT "chk_provisioning_orders_status" CHECK ("status" IN ('acknowledged', 'in_progress', 'completed', 'failed', 'cancelled')), CONSTRAINT "PK_2fb1bd020a2c8dcfd9abdd91baa" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_provisioning_orders_claimable" ON "provisioning_orders"  ("next_attempt_at") WHERE "status" IN ('acknowledged', 'in_progress')`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_provisioning_orders_open_per_service" ON "provisioning_orders"  ("service_id") WHERE "status" IN ('acknowledged', 'in_progress')`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_provisioning_orders_tenant_action_created" ON "provisioning_orders"  ("tenant_id", "action", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_provisioning_orders_tenant_status_created" ON "provisioning_orders"  ("tenant_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_provisioning_orders_tenant_subscriber_created" ON "provisioning_orders"  ("tenant_id", "subscriber_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_provisioning_orders_tenant_service_created" ON "provisioning_orders"  ("tenant_id", "service_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_provisioning_orders_tenant_created" ON "provisioning_orders"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "service_plans" ADD CONSTRAINT "fk_service_plans_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "services" ADD CONSTRAINT "fk_services_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "services" ADD CONSTRAINT "fk_services_plan" FOREIGN KEY ("tenant_id", "plan_id") REFERENCES "service_plans"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "services" ADD CONSTRAINT "fk_services_subscriber" FOREIGN KEY ("tenant_id", "subscriber_id") REFERENCES "subscribers"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "provisioning_orders" ADD CONSTRAINT "fk_provisioning_orders_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "provisioning_orders" ADD CONSTRAINT "fk_provisioning_orders_service" FOREIGN KEY ("tenant_id", "service_id") REFERENCES "services"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['radusergroup', ...RADIUS_TABLES.map(([name]) => name)]) {
      await queryRunner.query(`DROP TABLE IF EXISTS "${table}"`);
    }
    await queryRunner.query(
      `ALTER TABLE "provisioning_orders" DROP CONSTRAINT "fk_provisioning_orders_service"`,
    );
    await queryRunner.query(
      `ALTER TABLE "provisioning_orders" DROP CONSTRAINT "fk_provisioning_orders_tenant"`,
    );
    await queryRunner.query(`ALTER TABLE "services" DROP CONSTRAINT "fk_services_subscriber"`);
    await queryRunner.query(`ALTER TABLE "services" DROP CONSTRAINT "fk_services_plan"`);
    await queryRunner.query(`ALTER TABLE "services" DROP CONSTRAINT "fk_services_tenant"`);
    await queryRunner.query(`ALTER TABLE "service_plans" DROP CONSTRAINT "fk_service_plans_tenant"`);
    await queryRunner.query(`DROP INDEX "public"."ix_provisioning_orders_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_provisioning_orders_tenant_service_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_provisioning_orders_tenant_subscriber_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_provisioning_orders_tenant_status_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_provisioning_orders_tenant_action_created"`);
    await queryRunner.query(`DROP INDEX "public"."uq_provisioning_orders_open_per_service"`);
    await queryRunner.query(`DROP INDEX "public"."ix_provisioning_orders_claimable"`);
    await queryRunner.query(`DROP TABLE "provisioning_orders"`);
    await queryRunner.query(`DROP INDEX "public"."ix_services_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_services_tenant_subscriber_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_services_tenant_status_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_services_tenant_plan_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_services_tenant_username"`);
    await queryRunner.query(`DROP INDEX "public"."uq_services_tenant_id"`);
    await queryRunner.query(`DROP INDEX "public"."uq_services_pppoe_username"`);
    await queryRunner.query(`DROP INDEX "public"."uq_services_static_ipv4"`);
    await queryRunner.query(`DROP TABLE "services"`);
    await queryRunner.query(`DROP INDEX "public"."ix_service_plans_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."uq_service_plans_name"`);
    await queryRunner.query(`DROP INDEX "public"."uq_service_plans_tenant_id"`);
    await queryRunner.query(`DROP TABLE "service_plans"`);
  }
}
