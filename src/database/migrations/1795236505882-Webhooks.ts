import { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1795236505882 implements MigrationInterface {
  name = 'Webhooks1795236505882';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "webhooks" ("tenant_id" text NOT NULL, "id" text NOT NULL, "url" text NOT NULL, "events" text array NOT NULL, "description" text, "enabled" boolean NOT NULL, "disabled_reason" text, "secret" text NOT NULL, "previous_secret" text, "previous_secret_expires_at" TIMESTAMP(3) WITH TIME ZONE, "failing_since" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_9e8795cfc899ab7bdaa831e8527" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhooks_tenant_created" ON "webhooks"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "webhook_deliveries" ("tenant_id" text NOT NULL, "id" text NOT NULL, "webhook_id" text NOT NULL, "event_id" text NOT NULL, "event_type" text NOT NULL, "status" text NOT NULL, "attempts" integer NOT NULL, "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "locked_until" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_535dd409947fb6d8fc6dfc0112a" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_webhook" ON "webhook_deliveries"  ("tenant_id", "webhook_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_due" ON "webhook_deliveries"  ("status", "next_attempt_at") `,
    );
    await queryRunner.query(
      `CREATE TABLE "webhook_attempts" ("tenant_id" text NOT NULL, "id" text NOT NULL, "webhook_id" text NOT NULL, "delivery_id" text NOT NULL, "event_id" text NOT NULL, "event_type" text NOT NULL, "attempt" integer NOT NULL, "status_code" integer, "duration_ms" integer NOT NULL, "error" text, "response_body" text, "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_2de7e7887ad97de459adab62638" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_attempts_webhook_created" ON "webhook_attempts"  ("tenant_id", "webhook_id", "created_at", "id") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_attempts_webhook_created"`);
    await queryRunner.query(`DROP TABLE "webhook_attempts"`);
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_deliveries_due"`);
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_deliveries_webhook"`);
    await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
    await queryRunner.query(`DROP INDEX "public"."ix_webhooks_tenant_created"`);
    await queryRunner.query(`DROP TABLE "webhooks"`);
  }
}
