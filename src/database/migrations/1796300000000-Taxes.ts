import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 29 items 1 and 2: the tenant's tax rates (`tax_rates`, percent 0–100 with four decimals; `first_used_at` set
 * by the first invoice that applies one, after which it is archived and replaced rather than edited), and which rates
 * apply: `billing_profiles.tax_rate_ids` (the defaults), `service_plans.tax_rate_ids` and `charges.tax_rate_ids`
 * (null: the profile's; empty: untaxed), and a subscriber's exemption (`tax_exempt` with its reason) and `tax_id`.
 * Ids in a list are checked on write by the API (arrays take no foreign keys).
 */
export class Taxes1796300000000 implements MigrationInterface {
  name = 'Taxes1796300000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "tax_rates" ("tenant_id" text NOT NULL, "id" text NOT NULL, "name" text NOT NULL, "percentage" numeric(8,4) NOT NULL, "inclusive" boolean NOT NULL DEFAULT false, "compound" boolean NOT NULL DEFAULT false, "country" text, "region" text, "description" text, "active" boolean NOT NULL DEFAULT true, "first_used_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_tax_rates_country" CHECK ("country" IS NULL OR "country" ~ '^[A-Z]{2}$'), CONSTRAINT "chk_tax_rates_percentage" CHECK ("percentage" >= 0 AND "percentage" <= 100), CONSTRAINT "PK_41164a748f3dafa373c7e508ca2" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_tax_rates_tenant_created" ON "tax_rates"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "tax_rates" ADD CONSTRAINT "fk_tax_rates_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_profiles" ADD "tax_rate_ids" text array NOT NULL DEFAULT '{}'`,
    );
    await queryRunner.query(`ALTER TABLE "service_plans" ADD "tax_rate_ids" text array`);
    await queryRunner.query(`ALTER TABLE "charges" ADD "tax_rate_ids" text array`);
    await queryRunner.query(`ALTER TABLE "subscribers" ADD "tax_exempt" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`ALTER TABLE "subscribers" ADD "tax_exempt_reason" text`);
    await queryRunner.query(`ALTER TABLE "subscribers" ADD "tax_id" text`);
    await queryRunner.query(
      `ALTER TABLE "subscribers" ADD CONSTRAINT "chk_subscribers_tax_exempt" CHECK ("tax_exempt" = ("tax_exempt_reason" IS NOT NULL))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "subscribers" DROP CONSTRAINT "chk_subscribers_tax_exempt"`);
    await queryRunner.query(`ALTER TABLE "subscribers" DROP COLUMN "tax_id"`);
    await queryRunner.query(`ALTER TABLE "subscribers" DROP COLUMN "tax_exempt_reason"`);
    await queryRunner.query(`ALTER TABLE "subscribers" DROP COLUMN "tax_exempt"`);
    await queryRunner.query(`ALTER TABLE "charges" DROP COLUMN "tax_rate_ids"`);
    await queryRunner.query(`ALTER TABLE "service_plans" DROP COLUMN "tax_rate_ids"`);
    await queryRunner.query(`ALTER TABLE "billing_profiles" DROP COLUMN "tax_rate_ids"`);
    await queryRunner.query(`ALTER TABLE "tax_rates" DROP CONSTRAINT "fk_tax_rates_tenant"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tax_rates_tenant_created"`);
    await queryRunner.query(`DROP TABLE "tax_rates"`);
  }
}
