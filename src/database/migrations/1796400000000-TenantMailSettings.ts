import { MigrationInterface, QueryRunner } from 'typeorm';

const KINDS = [
  'invoice_issued',
  'payment_received',
  'credit_note_issued',
  'invoice_reminder',
  'suspended_for_non_payment',
  'service_restored',
  'service_activated',
  'ticket_reply',
];

/**
 * Issue 31 items 1 and 2: a tenant's own mail server in `tenant_settings` (all null: the instance's SMTP_URL and
 * MAIL_FROM are used; the password kept as given, as webhooks' secrets are) and whether it sends each kind of
 * notification (`notify_<kind>`, on for every existing tenant).
 */
export class TenantMailSettings1796400000000 implements MigrationInterface {
  name = 'TenantMailSettings1796400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" ADD "mail_host" text, ADD "mail_port" integer, ADD "mail_tls" text,
         ADD "mail_user" text, ADD "mail_password" text, ADD "mail_from" text, ADD "mail_reply_to" text,
         ${KINDS.map((kind) => `ADD "notify_${kind}" boolean NOT NULL DEFAULT true`).join(', ')}`,
    );
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" ADD CONSTRAINT "chk_tenant_settings_mail_complete" CHECK (("mail_host" IS NULL) = ("mail_port" IS NULL) AND ("mail_host" IS NULL) = ("mail_tls" IS NULL) AND ("mail_host" IS NULL) = ("mail_from" IS NULL) AND ("mail_user" IS NULL) = ("mail_password" IS NULL) AND ("mail_host" IS NOT NULL OR ("mail_user" IS NULL AND "mail_reply_to" IS NULL)))`,
    );
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" ADD CONSTRAINT "chk_tenant_settings_mail_tls" CHECK ("mail_tls" IS NULL OR "mail_tls" IN ('none', 'starttls', 'tls'))`,
    );
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" ADD CONSTRAINT "chk_tenant_settings_mail_port" CHECK ("mail_port" IS NULL OR "mail_port" BETWEEN 1 AND 65535)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" DROP CONSTRAINT "chk_tenant_settings_mail_port",
         DROP CONSTRAINT "chk_tenant_settings_mail_tls", DROP CONSTRAINT "chk_tenant_settings_mail_complete",
         DROP COLUMN "mail_host", DROP COLUMN "mail_port", DROP COLUMN "mail_tls", DROP COLUMN "mail_user",
         DROP COLUMN "mail_password", DROP COLUMN "mail_from", DROP COLUMN "mail_reply_to",
         ${KINDS.map((kind) => `DROP COLUMN "notify_${kind}"`).join(', ')}`,
    );
  }
}
