import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 29 item 7: credit notes, numbered in the tenant's credit note series, each carried by a credit transaction.
 * And invoice_counters retires: invoices take their numbers from the invoice series (document_counters), which
 * TenantSettingsNumbering started where each tenant's counter was.
 */
export class CreditNotes1796300000300 implements MigrationInterface {
  name = 'CreditNotes1796300000300';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "credit_notes" ("tenant_id" text NOT NULL, "id" text NOT NULL, "number" text NOT NULL, "sequence" integer NOT NULL, "invoice_id" text NOT NULL, "subscriber_id" text NOT NULL, "currency" text NOT NULL, "reason" text NOT NULL, "lines" jsonb NOT NULL, "tax_amount" bigint NOT NULL, "taxes" jsonb NOT NULL, "total" bigint NOT NULL, "credit_transaction_id" text NOT NULL, "applied_to_invoice" bigint NOT NULL, "refund_transaction_id" text, "refund_of" text, "refunded" bigint, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_credit_notes_sequence" CHECK ("sequence" > 0), CONSTRAINT "chk_credit_notes_amounts" CHECK ("total" > 0 AND "tax_amount" <= "total" AND "applied_to_invoice" >= 0 AND "applied_to_invoice" <= "total" AND ("refunded" IS NULL OR ("refunded" > 0 AND "refunded" <= "total"))), CONSTRAINT "PK_4933888a20b5469e119ad74b9e9" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_credit_notes_invoice" ON "credit_notes"  ("tenant_id", "invoice_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_credit_notes_tenant_created" ON "credit_notes"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_credit_notes_tenant_number" ON "credit_notes"  ("tenant_id", "number") `,
    );
    await queryRunner.query(
      `ALTER TABLE "credit_notes" ADD CONSTRAINT "fk_credit_notes_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "credit_notes" ADD CONSTRAINT "fk_credit_notes_invoice" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "credit_notes" ADD CONSTRAINT "fk_credit_notes_subscriber" FOREIGN KEY ("subscriber_id") REFERENCES "subscribers"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`DROP TABLE "invoice_counters"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "invoice_counters" ("tenant_id" text NOT NULL, "last_number" integer NOT NULL, CONSTRAINT "chk_invoice_counters_last_number" CHECK ("last_number" > 0), CONSTRAINT "PK_2e6899112b9cb70d49f17c3bc48" PRIMARY KEY ("tenant_id"))`,
    );
    await queryRunner.query(
      `INSERT INTO "invoice_counters" ("tenant_id", "last_number")
         SELECT "tenant_id", max("last_sequence") FROM "document_counters" WHERE "series" = 'invoice' GROUP BY "tenant_id"`,
    );
    await queryRunner.query(
      `ALTER TABLE "invoice_counters" ADD CONSTRAINT "fk_invoice_counters_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`ALTER TABLE "credit_notes" DROP CONSTRAINT "fk_credit_notes_subscriber"`);
    await queryRunner.query(`ALTER TABLE "credit_notes" DROP CONSTRAINT "fk_credit_notes_invoice"`);
    await queryRunner.query(`ALTER TABLE "credit_notes" DROP CONSTRAINT "fk_credit_notes_tenant"`);
    await queryRunner.query(`DROP INDEX "public"."uq_credit_notes_tenant_number"`);
    await queryRunner.query(`DROP INDEX "public"."ix_credit_notes_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_credit_notes_invoice"`);
    await queryRunner.query(`DROP TABLE "credit_notes"`);
  }
}
