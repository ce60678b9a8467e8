import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 28 ("Dunning sweeps at 1M subscribers", docs/performance.md): the dunning sweeps read payable invoices a page at
 * a time in (due_date, id) order per tenant, resuming after the last (due_date, id) read. The partial index of payable
 * invoices gets `id` after `due_date`, so a page is an index range even when a bill run made a whole tenant due on one
 * day; the tenant's overdue list, which reads (tenant_id, due_date), is served as before.
 */
export class SweepOrderIndex1796200000450 implements MigrationInterface {
  name = 'SweepOrderIndex1796200000450';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // Index builds on large tables may outlast a request's statement_timeout.
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(`DROP INDEX "public"."ix_invoices_tenant_payable_due"`);
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_payable_due" ON "invoices" ("tenant_id", "due_date", "id") WHERE "status" IN ('open', 'partially_paid')`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(`DROP INDEX "public"."ix_invoices_tenant_payable_due"`);
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_payable_due" ON "invoices" ("tenant_id", "due_date") WHERE "status" IN ('open', 'partially_paid')`,
    );
  }
}
