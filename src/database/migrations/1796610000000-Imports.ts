import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 32: bulk imports. A job (imports), its uploaded rows waiting for the worker (import_rows, deleted batch by
 * batch) and its refused rows (import_errors).
 */
export class Imports1796610000000 implements MigrationInterface {
  name = 'Imports1796610000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "imports" ("tenant_id" text NOT NULL, "id" text NOT NULL, "kind" text NOT NULL, "format" text NOT NULL, "dry_run" boolean NOT NULL, "status" text NOT NULL, "rows_total" integer NOT NULL, "rows_done" integer NOT NULL, "created" integer NOT NULL, "updated" integer NOT NULL, "unchanged" integer NOT NULL, "failed" integer NOT NULL, "error" text, "actor" jsonb NOT NULL, "request_id" text, "lease_id" text, "lease_until" TIMESTAMP(3) WITH TIME ZONE, "completed_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_imports_counts" CHECK ("rows_done" >= 0 AND "rows_done" <= "rows_total" AND "created" >= 0 AND "updated" >= 0 AND "unchanged" >= 0 AND "failed" >= 0), CONSTRAINT "chk_imports_format" CHECK ("format" IN ('csv', 'jsonl')), CONSTRAINT "chk_imports_kind" CHECK ("kind" IN ('subscribers')), CONSTRAINT "chk_imports_status" CHECK ("status" IN ('receiving', 'queued', 'running', 'completed', 'failed')), CONSTRAINT "PK_ea10c62f5eb1d75e83d8b5225db" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_imports_claimable" ON "imports"  ("lease_until") WHERE "status" IN ('queued', 'running')`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_imports_tenant_id" ON "imports"  ("tenant_id", "id") `);
    await queryRunner.query(
      `CREATE INDEX "ix_imports_tenant_status_created" ON "imports"  ("tenant_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_imports_tenant_created" ON "imports"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "import_rows" ("import_id" text NOT NULL, "row" integer NOT NULL, "data" jsonb, "problem" jsonb, CONSTRAINT "PK_dd8a1f8f02efacd44fd2fff78d1" PRIMARY KEY ("import_id", "row"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "import_errors" ("tenant_id" text NOT NULL, "import_id" text NOT NULL, "id" text NOT NULL, "row" integer NOT NULL, "external_id" text, "field" text, "code" text NOT NULL, "message" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_60ef92e35410c96c7d495ecf864" PRIMARY KEY ("import_id", "id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_import_errors_page" ON "import_errors"  ("tenant_id", "import_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "imports" ADD CONSTRAINT "fk_imports_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "import_rows" ADD CONSTRAINT "fk_import_rows_import" FOREIGN KEY ("import_id") REFERENCES "imports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "import_errors" ADD CONSTRAINT "fk_import_errors_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "import_errors" ADD CONSTRAINT "fk_import_errors_import" FOREIGN KEY ("import_id") REFERENCES "imports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "import_errors" DROP CONSTRAINT "fk_import_errors_import"`);
    await queryRunner.query(`ALTER TABLE "import_errors" DROP CONSTRAINT "fk_import_errors_tenant"`);
    await queryRunner.query(`ALTER TABLE "import_rows" DROP CONSTRAINT "fk_import_rows_import"`);
    await queryRunner.query(`ALTER TABLE "imports" DROP CONSTRAINT "fk_imports_tenant"`);
    await queryRunner.query(`DROP INDEX "public"."ix_import_errors_page"`);
    await queryRunner.query(`DROP TABLE "import_errors"`);
    await queryRunner.query(`DROP TABLE "import_rows"`);
    await queryRunner.query(`DROP INDEX "public"."ix_imports_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_imports_tenant_status_created"`);
    await queryRunner.query(`DROP INDEX "public"."uq_imports_tenant_id"`);
    await queryRunner.query(`DROP INDEX "public"."ix_imports_claimable"`);
    await queryRunner.query(`DROP TABLE "imports"`);
  }
}
