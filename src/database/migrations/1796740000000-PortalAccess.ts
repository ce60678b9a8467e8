import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #34 item 1 (docs/portal.md): portal invites and portal sessions, each kept as the
 * SHA-256 of its secret.
 */
export class PortalAccess1796740000000 implements MigrationInterface {
  name = 'PortalAccess1796740000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "portal_invites" ("tenant_id" text NOT NULL, "id" text NOT NULL, "subscriber_id" text NOT NULL, "code_hash" text NOT NULL, "delivery" text NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_portal_invites" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_portal_invites_hash" ON "portal_invites" ("code_hash") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_portal_invites_subscriber" ON "portal_invites" ("tenant_id", "subscriber_id", "created_at") `,
    );
    await queryRunner.query(
      `CREATE TABLE "portal_sessions" ("tenant_id" text NOT NULL, "id" text NOT NULL, "subscriber_id" text NOT NULL, "token_hash" text NOT NULL, "method" text NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "revoked_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_portal_sessions" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_portal_sessions_hash" ON "portal_sessions" ("token_hash") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_portal_sessions_subscriber" ON "portal_sessions" ("tenant_id", "subscriber_id", "created_at") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "portal_sessions"`);
    await queryRunner.query(`DROP TABLE "portal_invites"`);
  }
}
