import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 31: notifications (one per event that tells a subscriber something, written in that event's statement), the
 * attempts at sending each, a tenant's own templates, and the kinds a subscriber switched off.
 */
export class Notifications1796500000000 implements MigrationInterface {
  name = 'Notifications1796500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "notifications" ("tenant_id" text NOT NULL, "id" text NOT NULL, "kind" text NOT NULL, "subscriber_id" text, "event_id" text NOT NULL, "event_type" text NOT NULL, "status" text NOT NULL, "reason" text, "recipient" text, "subject" text, "message_id" text, "attempts" integer NOT NULL, "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "locked_until" TIMESTAMP(3) WITH TIME ZONE, "sent_at" TIMESTAMP(3) WITH TIME ZONE, "send_started_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_notifications_attempts" CHECK ("attempts" >= 0), CONSTRAINT "chk_notifications_status" CHECK ("status" IN ('queued', 'sent', 'failed', 'skipped')), CONSTRAINT "PK_6a72c3c0f683f6462415e653c3a" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_notifications_tenant_id" ON "notifications"  ("tenant_id", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notifications_tenant_subscriber" ON "notifications"  ("tenant_id", "subscriber_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notifications_tenant_send_started" ON "notifications"  ("tenant_id", "send_started_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notifications_tenant_kind" ON "notifications"  ("tenant_id", "kind", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notifications_tenant_status" ON "notifications"  ("tenant_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notifications_tenant_created" ON "notifications"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notifications_claimable" ON "notifications"  ("next_attempt_at") WHERE "status" = 'queued'`,
    );
    await queryRunner.query(
      `CREATE TABLE "notification_attempts" ("tenant_id" text NOT NULL, "id" text NOT NULL, "notification_id" text NOT NULL, "attempt" integer NOT NULL, "outcome" text NOT NULL, "smtp_code" integer, "response" text, "duration_ms" integer NOT NULL, "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_notification_attempts_outcome" CHECK ("outcome" IN ('sent', 'temporary', 'permanent', 'refused')), CONSTRAINT "PK_f6abd34f351bbbf11c7ae8e7565" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notification_attempts_notification" ON "notification_attempts"  ("notification_id", "attempt") `,
    );

    await queryRunner.query(
      `CREATE TABLE "notification_templates" ("tenant_id" text NOT NULL, "kind" text NOT NULL, "subject" text NOT NULL, "text" text NOT NULL, "html" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_965e187fa34765245371584ef3d" PRIMARY KEY ("tenant_id", "kind"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "notification_preferences" ("tenant_id" text NOT NULL, "subscriber_id" text NOT NULL, "kind" text NOT NULL, "enabled" boolean NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_674fd20705eea1ed24e050a23ab" PRIMARY KEY ("tenant_id", "subscriber_id", "kind"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "notifications" ADD CONSTRAINT "fk_notifications_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notifications" ADD CONSTRAINT "fk_notifications_event" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_attempts" ADD CONSTRAINT "fk_notification_attempts_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_attempts" ADD CONSTRAINT "fk_notification_attempts_notification" FOREIGN KEY ("notification_id") REFERENCES "notifications"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_templates" ADD CONSTRAINT "fk_notification_templates_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_preferences" ADD CONSTRAINT "fk_notification_preferences_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_preferences" ADD CONSTRAINT "fk_notification_preferences_subscriber" FOREIGN KEY ("subscriber_id") REFERENCES "subscribers"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "notification_preferences" DROP CONSTRAINT "fk_notification_preferences_subscriber"`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_preferences" DROP CONSTRAINT "fk_notification_preferences_tenant"`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_templates" DROP CONSTRAINT "fk_notification_templates_tenant"`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_attempts" DROP CONSTRAINT "fk_notification_attempts_notification"`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_attempts" DROP CONSTRAINT "fk_notification_attempts_tenant"`,
    );
    await queryRunner.query(`ALTER TABLE "notifications" DROP CONSTRAINT "fk_notifications_event"`);
    await queryRunner.query(`ALTER TABLE "notifications" DROP CONSTRAINT "fk_notifications_tenant"`);
    await queryRunner.query(`DROP TABLE "notification_preferences"`);
    await queryRunner.query(`DROP TABLE "notification_templates"`);
    await queryRunner.query(`DROP INDEX "public"."ix_notification_attempts_notification"`);
    await queryRunner.query(`DROP TABLE "notification_attempts"`);
    await queryRunner.query(`DROP INDEX "public"."ix_notifications_claimable"`);
    await queryRunner.query(`DROP INDEX "public"."ix_notifications_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_notifications_tenant_status"`);
    await queryRunner.query(`DROP INDEX "public"."ix_notifications_tenant_kind"`);
    await queryRunner.query(`DROP INDEX "public"."ix_notifications_tenant_send_started"`);
    await queryRunner.query(`DROP INDEX "public"."ix_notifications_tenant_subscriber"`);
    await queryRunner.query(`DROP INDEX "public"."uq_notifications_tenant_id"`);
    await queryRunner.query(`DROP TABLE "notifications"`);
  }
}
