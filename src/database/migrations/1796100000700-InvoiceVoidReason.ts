import { MigrationInterface, QueryRunner } from 'typeorm';

/** `invoices.void_reason`: why an invoice was voided, as POST /invoices/{id}/void was told (null: not said). */
export class InvoiceVoidReason1796100000700 implements MigrationInterface {
  name = 'InvoiceVoidReason1796100000700';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "invoices" ADD "void_reason" text`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "invoices" DROP COLUMN "void_reason"`);
  }
}
