import { MigrationInterface, QueryRunner } from 'typeorm';

/** [table, constraint, expression before, expression after]: the checks a write-off changes. */
const CHANGED: [string, string, string, string][] = [
  [
    'invoices',
    'chk_invoices_status',
    `"status" IN ('draft', 'open', 'partially_paid', 'paid', 'void')`,
    `"status" IN ('draft', 'open', 'partially_paid', 'paid', 'void', 'written_off')`,
  ],
  [
    'invoices',
    'chk_invoices_paid_by_status',
    `("status" IN ('draft', 'open', 'void') AND "amount_paid" = 0) OR ("status" = 'partially_paid' AND "amount_paid" > 0 AND "amount_paid" < "total") OR ("status" = 'paid' AND "amount_paid" = "total")`,
    `("status" IN ('draft', 'open', 'void') AND "amount_paid" = 0) OR ("status" = 'partially_paid' AND "amount_paid" > 0 AND "amount_paid" < "total") OR ("status" = 'paid' AND "amount_paid" = "total") OR ("status" = 'written_off' AND "amount_paid" < "total")`,
  ],
  [
    'ledger_entries',
    'chk_ledger_entries_type',
    `"type" IN ('invoice', 'invoice_voided', 'payment', 'credit', 'debit', 'refund')`,
    `"type" IN ('invoice', 'invoice_voided', 'payment', 'credit', 'debit', 'refund', 'write_off')`,
  ],
];

/** A written-off invoice records when, why and how much; nothing else does, and the amount is what was still due. */
const WRITTEN_OFF = `("status" = 'written_off') = ("written_off_at" IS NOT NULL) AND ("status" = 'written_off') = ("write_off_reason" IS NOT NULL) AND ("status" = 'written_off') = ("amount_written_off" IS NOT NULL) AND ("amount_written_off" IS NULL OR "amount_written_off" = "total" - "amount_paid")`;

/**
 * Issue 28 item 5: `POST /invoices/{id}/write-off`. The invoice's new status `written_off` and its three columns
 * (when, why, how much), and the ledger's `write_off` entry type that closes what was due.
 */
export class InvoiceWriteOff1796200000100 implements MigrationInterface {
  name = 'InvoiceWriteOff1796200000100';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "invoices" ADD "written_off_at" TIMESTAMP(3) WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "invoices" ADD "write_off_reason" text`);
    await queryRunner.query(`ALTER TABLE "invoices" ADD "amount_written_off" bigint`);
    for (const [table, name, , after] of CHANGED) {
      await queryRunner.query(`ALTER TABLE "${table}" DROP CONSTRAINT "${name}"`);
      await queryRunner.query(`ALTER TABLE "${table}" ADD CONSTRAINT "${name}" CHECK (${after})`);
    }
    await queryRunner.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "chk_invoices_written_off" CHECK (${WRITTEN_OFF})`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "invoices" DROP CONSTRAINT "chk_invoices_written_off"`);
    for (const [table, name, before] of CHANGED) {
      await queryRunner.query(`ALTER TABLE "${table}" DROP CONSTRAINT "${name}"`);
      await queryRunner.query(`ALTER TABLE "${table}" ADD CONSTRAINT "${name}" CHECK (${before})`);
    }
    await queryRunner.query(`ALTER TABLE "invoices" DROP COLUMN "amount_written_off"`);
    await queryRunner.query(`ALTER TABLE "invoices" DROP COLUMN "write_off_reason"`);
    await queryRunner.query(`ALTER TABLE "invoices" DROP COLUMN "written_off_at"`);
  }
}
