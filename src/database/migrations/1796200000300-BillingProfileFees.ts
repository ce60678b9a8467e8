import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A late fee is none (every late_fee_* column empty, after_days 0), fixed (an amount ≥ 1) or a percentage (0 < p ≤ 100,
 * two decimals, with optional caps min ≤ max), charged after 0–365 days past due; the entity's `@Check` says the same.
 */
const LATE_FEE_CHECK = `("late_fee_after_days" BETWEEN 0 AND 365) AND (("late_fee_type" IS NULL AND "late_fee_amount" IS NULL AND "late_fee_percentage" IS NULL AND "late_fee_min_amount" IS NULL AND "late_fee_max_amount" IS NULL AND "late_fee_after_days" = 0) OR ("late_fee_type" = 'fixed' AND "late_fee_amount" BETWEEN 1 AND 9007199254740991 AND "late_fee_percentage" IS NULL AND "late_fee_min_amount" IS NULL AND "late_fee_max_amount" IS NULL) OR ("late_fee_type" = 'percentage' AND "late_fee_amount" IS NULL AND "late_fee_percentage" > 0 AND "late_fee_percentage" <= 100 AND ("late_fee_min_amount" IS NULL OR "late_fee_min_amount" BETWEEN 1 AND 9007199254740991) AND ("late_fee_max_amount" IS NULL OR "late_fee_max_amount" BETWEEN 1 AND 9007199254740991) AND ("late_fee_min_amount" IS NULL OR "late_fee_max_amount" IS NULL OR "late_fee_min_amount" <= "late_fee_max_amount")))`;

/** A reconnection fee is none or an amount ≥ 1. */
const RECONNECTION_FEE_CHECK = `"reconnection_fee" IS NULL OR "reconnection_fee" BETWEEN 1 AND 9007199254740991`;

/**
 * Issue 28 item 9: a billing profile's fees. `late_fee_*` (a fixed amount or a percentage of the overdue amount, once
 * per invoice, `late_fee_after_days` past due), `reconnection_fee` (charged when a non-payment suspension is lifted)
 * and `fees_before_restoration` (a non-payment suspension is lifted only once the fees are paid too).
 */
export class BillingProfileFees1796200000300 implements MigrationInterface {
  name = 'BillingProfileFees1796200000300';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing_profiles" ADD "late_fee_type" text`);
    await queryRunner.query(`ALTER TABLE "billing_profiles" ADD "late_fee_amount" bigint`);
    await queryRunner.query(`ALTER TABLE "billing_profiles" ADD "late_fee_percentage" numeric(5,2)`);
    await queryRunner.query(`ALTER TABLE "billing_profiles" ADD "late_fee_min_amount" bigint`);
    await queryRunner.query(`ALTER TABLE "billing_profiles" ADD "late_fee_max_amount" bigint`);
    await queryRunner.query(
      `ALTER TABLE "billing_profiles" ADD "late_fee_after_days" integer NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(`ALTER TABLE "billing_profiles" ADD "reconnection_fee" bigint`);
    await queryRunner.query(
      `ALTER TABLE "billing_profiles" ADD "fees_before_restoration" boolean NOT NULL DEFAULT false`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_profiles" ADD CONSTRAINT "chk_billing_profiles_late_fee" CHECK (${LATE_FEE_CHECK})`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_profiles" ADD CONSTRAINT "chk_billing_profiles_reconnection_fee" CHECK (${RECONNECTION_FEE_CHECK})`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "billing_profiles" DROP CONSTRAINT "chk_billing_profiles_reconnection_fee"`,
    );
    await queryRunner.query(`ALTER TABLE "billing_profiles" DROP CONSTRAINT "chk_billing_profiles_late_fee"`);
    for (const column of [
      'fees_before_restoration',
      'reconnection_fee',
      'late_fee_after_days',
      'late_fee_max_amount',
      'late_fee_min_amount',
      'late_fee_percentage',
      'late_fee_amount',
      'late_fee_type',
    ]) {
      await queryRunner.query(`ALTER TABLE "billing_profiles" DROP COLUMN "${column}"`);
    }
  }
}
