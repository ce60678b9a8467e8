import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #32 item 4 (reports, docs/reports.md): the indexes the reports' statements read through on a million
 * subscribers. Revenue takes the invoices issued in its window (finalized_at); aging as of a past day finds the
 * invoices settled since (paid, voided or written off after it) and the money applied or refunded since, instead of
 * scanning every invoice and transaction of the tenant.
 */
export class ReportIndexes1796630000000 implements MigrationInterface {
  name = 'ReportIndexes1796630000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // Index builds on large tables may outlast a request's statement_timeout.
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_finalized" ON "invoices" ("tenant_id", "finalized_at") WHERE "finalized_at" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_paid" ON "invoices" ("tenant_id", "paid_at") WHERE "paid_at" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_voided" ON "invoices" ("tenant_id", "voided_at") WHERE "voided_at" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_written_off" ON "invoices" ("tenant_id", "written_off_at") WHERE "written_off_at" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_transactions_tenant_refund_of" ON "transactions" ("tenant_id", "refund_of") WHERE "refund_of" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_allocations_tenant_created" ON "allocations" ("tenant_id", "created_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_allocations_tenant_to_balance" ON "allocations" ("tenant_id", "transaction_id") WHERE "invoice_id" IS NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const index of [
      'ix_allocations_tenant_to_balance',
      'ix_allocations_tenant_created',
      'ix_transactions_tenant_refund_of',
      'ix_invoices_tenant_written_off',
      'ix_invoices_tenant_voided',
      'ix_invoices_tenant_paid',
      'ix_invoices_tenant_finalized',
    ]) {
      await queryRunner.query(`DROP INDEX "public"."${index}"`);
    }
  }
}
