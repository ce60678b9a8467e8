import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 29 items 5 and 6: `tenant_settings` (the tenant as the issuer of its documents, and the format of each
 * numbering series; one row per tenant, made by its first PATCH /tenant/settings) and `document_counters` (each
 * series' last sequence per period: the issue year while it restarts yearly, else 0). Each tenant's invoice series
 * starts where invoice_counters is (period 0, last issued on its latest invoice's day), so its invoices continue
 * their sequence; invoice_counters stays until the invoices take their numbers from the series.
 */
export class TenantSettingsNumbering1796300000100 implements MigrationInterface {
  name = 'TenantSettingsNumbering1796300000100';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "tenant_settings" ("tenant_id" text NOT NULL, "legal_name" text, "address_line1" text, "address_line2" text, "address_city" text, "address_postal_code" text, "address_region" text, "address_country" text, "tax_id" text, "registration_number" text, "contact_email" text, "contact_phone" text, "contact_website" text, "payment_instructions" text, "invoice_footer" text, "locale" text NOT NULL, "time_zone" text NOT NULL, "invoice_number_format" text NOT NULL, "invoice_number_restart_yearly" boolean NOT NULL, "credit_note_number_format" text NOT NULL, "credit_note_number_restart_yearly" boolean NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "chk_tenant_settings_number_formats" CHECK (char_length("invoice_number_format") BETWEEN 1 AND 40 AND char_length("credit_note_number_format") BETWEEN 1 AND 40), CONSTRAINT "chk_tenant_settings_country" CHECK ("address_country" IS NULL OR "address_country" ~ '^[A-Z]{2}$'), CONSTRAINT "PK_a6abc1c3ed0df635955fc852f1c" PRIMARY KEY ("tenant_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "document_counters" ("tenant_id" text NOT NULL, "series" text NOT NULL, "period" integer NOT NULL, "last_sequence" integer NOT NULL, "last_issued_on" date, CONSTRAINT "chk_document_counters_last_sequence" CHECK ("last_sequence" >= 0), CONSTRAINT "chk_document_counters_period" CHECK ("period" = 0 OR "period" BETWEEN 1 AND 9999), CONSTRAINT "chk_document_counters_series" CHECK ("series" IN ('invoice', 'credit_note')), CONSTRAINT "PK_664beae077d376637d2cdc0099b" PRIMARY KEY ("tenant_id", "series", "period"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" ADD CONSTRAINT "fk_tenant_settings_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "document_counters" ADD CONSTRAINT "fk_document_counters_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    // Existing tenants' invoices go on from their last number, in the never-restarting period.
    await queryRunner.query(
      `INSERT INTO "document_counters" ("tenant_id", "series", "period", "last_sequence", "last_issued_on")
       SELECT ic."tenant_id", 'invoice', 0, ic."last_number",
              (SELECT max(COALESCE(i."finalized_at", i."created_at") AT TIME ZONE 'UTC')::date
                 FROM "invoices" i WHERE i."tenant_id" = ic."tenant_id")
         FROM "invoice_counters" ic`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "document_counters" DROP CONSTRAINT "fk_document_counters_tenant"`);
    await queryRunner.query(`ALTER TABLE "tenant_settings" DROP CONSTRAINT "fk_tenant_settings_tenant"`);
    await queryRunner.query(`DROP TABLE "document_counters"`);
    await queryRunner.query(`DROP TABLE "tenant_settings"`);
  }
}
