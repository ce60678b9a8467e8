import { MigrationInterface, QueryRunner } from 'typeorm';

/** At most 10 reminder offsets, each from 60 days before the due date to 365 after (uniqueness: the DTO). */
const REMINDER_OFFSETS = `cardinality("reminder_offsets") <= 10 AND -60 <= ALL("reminder_offsets") AND 365 >= ALL("reminder_offsets")`;

/**
 * Issue 28 items 3 and 10: a billing profile's `auto_apply` (payments and credits applied on receipt and to each
 * invoice issued) and `reminder_offsets` (days from the due date an `invoice.reminder` is sent on); a transaction's
 * `auto_apply` (false: recorded with `auto_apply: false`, left for an allocation by hand); and a partial index of the
 * money not yet applied, which auto-apply and dunning look up per subscriber and currency.
 */
export class AutoApplyReminders1796200000200 implements MigrationInterface {
  name = 'AutoApplyReminders1796200000200';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing_profiles" ADD "auto_apply" boolean NOT NULL DEFAULT true`);
    await queryRunner.query(
      `ALTER TABLE "billing_profiles" ADD "reminder_offsets" integer array NOT NULL DEFAULT '{}'`,
    );
    await queryRunner.query(
      `ALTER TABLE "billing_profiles" ADD CONSTRAINT "chk_billing_profiles_reminder_offsets" CHECK (${REMINDER_OFFSETS})`,
    );
    await queryRunner.query(`ALTER TABLE "transactions" ADD "auto_apply" boolean NOT NULL DEFAULT true`);
    await queryRunner.query(
      `CREATE INDEX "ix_transactions_unallocated" ON "transactions" ("tenant_id", "subscriber_id", "currency") WHERE "kind" IN ('payment', 'credit') AND "amount" > "allocated_amount" + "refunded_amount"`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ix_transactions_unallocated"`);
    await queryRunner.query(`ALTER TABLE "transactions" DROP COLUMN "auto_apply"`);
    await queryRunner.query(
      `ALTER TABLE "billing_profiles" DROP CONSTRAINT "chk_billing_profiles_reminder_offsets"`,
    );
    await queryRunner.query(`ALTER TABLE "billing_profiles" DROP COLUMN "reminder_offsets"`);
    await queryRunner.query(`ALTER TABLE "billing_profiles" DROP COLUMN "auto_apply"`);
  }
}
