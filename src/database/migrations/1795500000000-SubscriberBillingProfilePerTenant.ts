import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #12: the database holds a subscriber's billing profile to the subscriber's tenant. fk_subscribers_billing_profile
 * becomes (tenant_id, billing_profile_id) → billing_profiles(tenant_id, id), so a create or PATCH naming another
 * tenant's profile fails on it (answered 422 invalid_reference) and subscribers need not ask billing first. A row
 * referencing another tenant's profile (the API never wrote one) makes this migration fail, naming the constraint.
 */
export class SubscriberBillingProfilePerTenant1795500000000 implements MigrationInterface {
  name = 'SubscriberBillingProfilePerTenant1795500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_billing_profiles_tenant_id" ON "billing_profiles" ("tenant_id", "id") `,
    );
    await queryRunner.query(`ALTER TABLE "subscribers" DROP CONSTRAINT "fk_subscribers_billing_profile"`);
    await queryRunner.query(
      `ALTER TABLE "subscribers" ADD CONSTRAINT "fk_subscribers_billing_profile" ` +
        `FOREIGN KEY ("tenant_id", "billing_profile_id") REFERENCES "billing_profiles"("tenant_id", "id") ` +
        `ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "subscribers" DROP CONSTRAINT "fk_subscribers_billing_profile"`);
    await queryRunner.query(
      `ALTER TABLE "subscribers" ADD CONSTRAINT "fk_subscribers_billing_profile" ` +
        `FOREIGN KEY ("billing_profile_id") REFERENCES "billing_profiles"("id") ` +
        `ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`DROP INDEX "public"."uq_billing_profiles_tenant_id"`);
  }
}
