import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 32 item 5: test clocks (docs/test-clocks.md), each the time of one test tenant made with it, owned by the
 * tenant that made it; `status = 'advancing'` rows are claimed with a lease by the advance worker.
 */
export class TestClocks1796640000000 implements MigrationInterface {
  name = 'TestClocks1796640000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "test_clocks" ("id" text NOT NULL, "tenant_id" text NOT NULL, "owner_tenant_id" text NOT NULL, "name" text NOT NULL, "frozen_time" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "status" text NOT NULL, "advance_to" TIMESTAMP(3) WITH TIME ZONE, "lease_id" uuid, "lease_until" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_test_clocks_status" CHECK ("status" IN ('ready', 'advancing', 'internal_failure')), CONSTRAINT "PK_test_clocks" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_test_clocks_tenant" ON "test_clocks" ("tenant_id") `);
    await queryRunner.query(
      `CREATE INDEX "ix_test_clocks_owner" ON "test_clocks" ("owner_tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_test_clocks_advancing" ON "test_clocks" ("lease_until") WHERE "status" = 'advancing'`,
    );
    await queryRunner.query(
      `ALTER TABLE "test_clocks" ADD CONSTRAINT "fk_test_clocks_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "test_clocks" ADD CONSTRAINT "fk_test_clocks_owner" FOREIGN KEY ("owner_tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "test_clocks"`);
  }
}
