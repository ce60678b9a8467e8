import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Invoice lines with taxes (issue 29 item 3): every line is quantity > 0 × unit_amount = amount as priced; a taxed line
 * (one with net_amount) splits it into a net and a tax that add up to it when priced inclusive (net + tax = amount) or
 * keep it as the net when exclusive (net = amount); the lines' nets and taxes sum to the invoice's total. A line issued
 * before taxes has no net_amount: its amount is its net and it has no tax.
 */
const LINES_VALID = `CREATE OR REPLACE FUNCTION isp_invoice_lines_valid(lines jsonb, total bigint) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT COALESCE(
          jsonb_typeof(lines) = 'array' AND jsonb_array_length(lines) > 0
          AND bool_and(
            jsonb_typeof(line->'quantity') = 'number' AND jsonb_typeof(line->'unit_amount') = 'number'
            AND jsonb_typeof(line->'amount') = 'number'
            AND (line->>'quantity')::numeric > 0
            AND (line->>'amount')::numeric = (line->>'quantity')::numeric * (line->>'unit_amount')::numeric
            AND (line->'net_amount' IS NULL OR (
              jsonb_typeof(line->'net_amount') = 'number' AND jsonb_typeof(line->'tax_amount') = 'number'
              AND ((line->>'net_amount')::numeric = (line->>'amount')::numeric
                   OR (line->>'net_amount')::numeric + (line->>'tax_amount')::numeric = (line->>'amount')::numeric))))
          AND sum(COALESCE(line->>'net_amount', line->>'amount')::numeric
                  + COALESCE(line->>'tax_amount', '0')::numeric) = total,
          false)
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(lines) = 'array' THEN lines ELSE '[]' END) AS line
      $$`;

/** The function as RecurringBillingAutomation left it (credit lines may be negative), for `down`. */
const LINES_VALID_BEFORE = `CREATE OR REPLACE FUNCTION isp_invoice_lines_valid(lines jsonb, total bigint) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT COALESCE(
          jsonb_typeof(lines) = 'array' AND jsonb_array_length(lines) > 0
          AND bool_and(
            jsonb_typeof(line->'quantity') = 'number' AND jsonb_typeof(line->'unit_amount') = 'number'
            AND jsonb_typeof(line->'amount') = 'number'
            AND (line->>'quantity')::numeric > 0
            AND (line->>'amount')::numeric = (line->>'quantity')::numeric * (line->>'unit_amount')::numeric)
          AND sum((line->>'amount')::numeric) = total,
          false)
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(lines) = 'array' THEN lines ELSE '[]' END) AS line
      $$`;

/**
 * Issue 29 items 3 and 5: an invoice carries its tax (tax_amount, and one summary row per rate in `taxes`), and a
 * document number from the tenant's series (`number`, text) with its place in the series (`sequence`, the integer
 * `number` was). Issued invoices keep their integer as their number ("42"); a draft keeps the number it was given
 * at creation (drafts made from now on are numbered when issued).
 */
export class InvoiceTaxesNumbers1796300000200 implements MigrationInterface {
  name = 'InvoiceTaxesNumbers1796300000200';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "uq_invoices_tenant_number"`);
    await queryRunner.query(`ALTER TABLE "invoices" DROP CONSTRAINT "chk_invoices_number"`);
    await queryRunner.query(`ALTER TABLE "invoices" RENAME COLUMN "number" TO "sequence"`);
    await queryRunner.query(`ALTER TABLE "invoices" ALTER COLUMN "sequence" DROP NOT NULL`);
    await queryRunner.query(`ALTER TABLE "invoices" ADD "number" text`);
    await queryRunner.query(`UPDATE "invoices" SET "number" = "sequence"::text`);
    // Added with a default so the existing rows need no rewrite, which is then dropped: every writer names them.
    await queryRunner.query(`ALTER TABLE "invoices" ADD "tax_amount" bigint NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE "invoices" ALTER COLUMN "tax_amount" DROP DEFAULT`);
    await queryRunner.query(`ALTER TABLE "invoices" ADD "taxes" jsonb NOT NULL DEFAULT '[]'`);
    await queryRunner.query(`ALTER TABLE "invoices" ALTER COLUMN "taxes" DROP DEFAULT`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_invoices_tenant_number" ON "invoices" ("tenant_id", "number") WHERE "number" IS NOT NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "chk_invoices_sequence" CHECK ("sequence" > 0)`,
    );
    await queryRunner.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "chk_invoices_numbered" CHECK (("status" IN ('draft', 'void') OR "number" IS NOT NULL) AND ("number" IS NULL) = ("sequence" IS NULL))`,
    );
    await queryRunner.query(LINES_VALID);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(LINES_VALID_BEFORE);
    await queryRunner.query(`ALTER TABLE "invoices" DROP CONSTRAINT "chk_invoices_numbered"`);
    await queryRunner.query(`ALTER TABLE "invoices" DROP CONSTRAINT "chk_invoices_sequence"`);
    await queryRunner.query(`DROP INDEX "uq_invoices_tenant_number"`);
    await queryRunner.query(`ALTER TABLE "invoices" DROP COLUMN "taxes"`);
    await queryRunner.query(`ALTER TABLE "invoices" DROP COLUMN "tax_amount"`);
    await queryRunner.query(`ALTER TABLE "invoices" DROP COLUMN "number"`);
    await queryRunner.query(`ALTER TABLE "invoices" ALTER COLUMN "sequence" SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE "invoices" RENAME COLUMN "sequence" TO "number"`);
    await queryRunner.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "chk_invoices_number" CHECK ("number" > 0)`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_invoices_tenant_number" ON "invoices" ("tenant_id", "number")`,
    );
  }
}
