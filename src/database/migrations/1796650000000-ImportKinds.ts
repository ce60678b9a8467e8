import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 32 item 2, the other kinds of import: services (matched by their own external_id, which services did not
 * have: unique per tenant where set) and opening balances (through billing's transactions, nothing of their own).
 */
export class ImportKinds1796650000000 implements MigrationInterface {
  name = 'ImportKinds1796650000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "services" ADD "external_id" text`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_services_external_id" ON "services"  ("tenant_id", "external_id") WHERE "external_id" IS NOT NULL`,
    );
    await queryRunner.query(`ALTER TABLE "imports" DROP CONSTRAINT "chk_imports_kind"`);
    await queryRunner.query(
      `ALTER TABLE "imports" ADD CONSTRAINT "chk_imports_kind" CHECK ("kind" IN ('subscribers', 'services', 'opening_balances'))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "imports" DROP CONSTRAINT "chk_imports_kind"`);
    await queryRunner.query(
      `ALTER TABLE "imports" ADD CONSTRAINT "chk_imports_kind" CHECK ("kind" IN ('subscribers'))`,
    );
    await queryRunner.query(`DROP INDEX "public"."uq_services_external_id"`);
    await queryRunner.query(`ALTER TABLE "services" DROP COLUMN "external_id"`);
  }
}
