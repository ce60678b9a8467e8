import { MigrationInterface, QueryRunner } from 'typeorm';

export class SubscribersBillingProfilesIdempotency1795235750197 implements MigrationInterface {
  name = 'SubscribersBillingProfilesIdempotency1795235750197';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "billing_profiles" ("tenant_id" text NOT NULL, "id" text NOT NULL, "name" text NOT NULL, "currency" text NOT NULL, "billing_day" integer NOT NULL, "payment_terms_days" integer NOT NULL, "auto_suspend_after_days" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_fb247d683c38c985ce8ac3a6b78" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_billing_profiles_tenant_created" ON "billing_profiles"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "idempotency_keys" ("tenant_id" text NOT NULL, "token_id" text NOT NULL, "key" text NOT NULL, "fingerprint" text NOT NULL, "response_status" integer, "response_body" json, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_4a26e59a85b6d9c482ad7b6aaae" PRIMARY KEY ("tenant_id", "token_id", "key"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_idempotency_keys_expires" ON "idempotency_keys"  ("expires_at") `,
    );
    await queryRunner.query(
      `CREATE TABLE "subscribers" ("tenant_id" text NOT NULL, "id" text NOT NULL, "external_id" text, "full_name" text NOT NULL, "email" text, "email_normalized" text, "phone" text, "status" text NOT NULL, "suspension_reason" text, "billing_profile_id" text, "address" jsonb, "metadata" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_cbe0a7a9256c826f403c0236b67" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_subscribers_email" ON "subscribers"  ("tenant_id", "email_normalized") WHERE "status" <> 'archived' AND "email_normalized" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_subscribers_external_id" ON "subscribers"  ("tenant_id", "external_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_subscribers_tenant_status_created" ON "subscribers"  ("tenant_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_subscribers_tenant_created" ON "subscribers"  ("tenant_id", "created_at", "id") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ix_subscribers_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_subscribers_tenant_status_created"`);
    await queryRunner.query(`DROP INDEX "public"."uq_subscribers_external_id"`);
    await queryRunner.query(`DROP INDEX "public"."uq_subscribers_email"`);
    await queryRunner.query(`DROP TABLE "subscribers"`);
    await queryRunner.query(`DROP INDEX "public"."ix_idempotency_keys_expires"`);
    await queryRunner.query(`DROP TABLE "idempotency_keys"`);
    await queryRunner.query(`DROP INDEX "public"."ix_billing_profiles_tenant_created"`);
    await queryRunner.query(`DROP TABLE "billing_profiles"`);
  }
}
