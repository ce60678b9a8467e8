import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1795235342641 implements MigrationInterface {
  name = 'Foundation1795235342641';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "events" ("tenant_id" text NOT NULL, "id" text NOT NULL, "type" text NOT NULL, "subject_id" text, "data" jsonb NOT NULL, "request_id" text, "actor" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_40731c7151fe4be3116e45ddf73" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_events_tenant_type_created" ON "events"  ("tenant_id", "type", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_events_tenant_subject_created" ON "events"  ("tenant_id", "subject_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_events_tenant_created" ON "events"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "api_tokens" ("tenant_id" text NOT NULL, "id" text NOT NULL, "name" text NOT NULL, "token_hash" text NOT NULL, "prefix" text NOT NULL, "last4" text NOT NULL, "scopes" text array NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE, "revoked_at" TIMESTAMP(3) WITH TIME ZONE, "last_used_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_c587455266b5fa8dace7194caac" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_api_tokens_hash" ON "api_tokens"  ("token_hash") `);
    await queryRunner.query(
      `CREATE INDEX "ix_api_tokens_tenant_created" ON "api_tokens"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "tenants" ("id" text NOT NULL, "slug" text NOT NULL, "name" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_53be67a04681c66b87ee27c9321" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_tenants_slug" ON "tenants"  ("slug") `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."uq_tenants_slug"`);
    await queryRunner.query(`DROP TABLE "tenants"`);
    await queryRunner.query(`DROP INDEX "public"."ix_api_tokens_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."uq_api_tokens_hash"`);
    await queryRunner.query(`DROP TABLE "api_tokens"`);
    await queryRunner.query(`DROP INDEX "public"."ix_events_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_events_tenant_subject_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_events_tenant_type_created"`);
    await queryRunner.query(`DROP TABLE "events"`);
  }
}
