import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #34 item 1 (docs/portal.md): invites sent by email (no code until the notification worker mints it), one-time
 * sign-in codes by email, and the tenant's switches of the two portal notification kinds.
 */
export class PortalEmail1796750000000 implements MigrationInterface {
  name = 'PortalEmail1796750000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "portal_invites" ALTER COLUMN "code_hash" DROP NOT NULL`);
    await queryRunner.query(
      `CREATE TABLE "portal_sign_in_codes" ("tenant_id" text NOT NULL, "id" text NOT NULL, "subscriber_id" text NOT NULL, "code_hash" text, "attempts" integer NOT NULL DEFAULT 0, "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP(3) WITH TIME ZONE, "superseded_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_portal_sign_in_codes" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_portal_sign_in_codes_subscriber" ON "portal_sign_in_codes" ("tenant_id", "subscriber_id", "created_at") `,
    );
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" ADD "notify_portal_invite" boolean NOT NULL DEFAULT true`,
    );
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" ADD "notify_portal_sign_in_code" boolean NOT NULL DEFAULT true`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "tenant_settings" DROP COLUMN "notify_portal_sign_in_code"`);
    await queryRunner.query(`ALTER TABLE "tenant_settings" DROP COLUMN "notify_portal_invite"`);
    await queryRunner.query(`DROP TABLE "portal_sign_in_codes"`);
    await queryRunner.query(`DELETE FROM "portal_invites" WHERE "code_hash" IS NULL`);
    await queryRunner.query(`ALTER TABLE "portal_invites" ALTER COLUMN "code_hash" SET NOT NULL`);
  }
}
