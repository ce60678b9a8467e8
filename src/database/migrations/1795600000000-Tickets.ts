import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #14, the support desk: tickets (numbered per tenant from ticket_counters), their status history, comments and
 * the per-tenant SLA. The search and tag indexes use operator classes TypeORM cannot declare (entity: synchronize
 * false): trigram GIN on lower(subject) and lower(description) for `q`, and GIN on the tags array for `tag`. pg_trgm
 * ships with PostgreSQL (contrib) and with the embedded PGlite; creating it needs a role that may create extensions.
 * Subscribers gain the unique (tenant_id, id) the tickets' composite foreign key points at.
 */
export class Tickets1795600000000 implements MigrationInterface {
  name = 'Tickets1795600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await queryRunner.query(
      `CREATE TABLE "tickets" ("tenant_id" text NOT NULL, "id" text NOT NULL, "number" integer NOT NULL, "subject" text NOT NULL, "description" text, "type" text NOT NULL, "priority" text NOT NULL, "status" text NOT NULL, "subscriber_id" text, "assignee" text, "tags" text array NOT NULL, "external_id" text, "metadata" jsonb NOT NULL, "due_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "first_response_at" TIMESTAMP(3) WITH TIME ZONE, "resolved_at" TIMESTAMP(3) WITH TIME ZONE, "closed_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_tickets_closed_at" CHECK (("status" = 'closed') = ("closed_at" IS NOT NULL)), CONSTRAINT "chk_tickets_resolved_at" CHECK (("status" IN ('resolved', 'closed')) = ("resolved_at" IS NOT NULL)), CONSTRAINT "chk_tickets_priority" CHECK ("priority" IN ('low', 'normal', 'high', 'urgent')), CONSTRAINT "chk_tickets_type" CHECK ("type" IN ('incident', 'problem', 'question', 'task', 'installation', 'billing')), CONSTRAINT "chk_tickets_status" CHECK ("status" IN ('new', 'open', 'pending_customer', 'on_hold', 'resolved', 'closed', 'cancelled')), CONSTRAINT "chk_tickets_number" CHECK ("number" > 0), CONSTRAINT "PK_343bc942ae261cf7a1377f48fd0" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_tickets_external_id" ON "tickets"  ("tenant_id", "external_id") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_tickets_tenant_number" ON "tickets"  ("tenant_id", "number") `,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_tickets_tenant_id" ON "tickets"  ("tenant_id", "id") `);
    await queryRunner.query(
      `CREATE INDEX "ix_tickets_tenant_running_due" ON "tickets"  ("tenant_id", "due_at") WHERE "status" NOT IN ('resolved', 'closed', 'cancelled')`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_tickets_tenant_assignee_created" ON "tickets"  ("tenant_id", "assignee", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_tickets_tenant_subscriber_created" ON "tickets"  ("tenant_id", "subscriber_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_tickets_tenant_type_created" ON "tickets"  ("tenant_id", "type", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_tickets_tenant_priority_created" ON "tickets"  ("tenant_id", "priority", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_tickets_tenant_status_created" ON "tickets"  ("tenant_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_tickets_tenant_created" ON "tickets"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(`CREATE INDEX "ix_tickets_tags" ON "tickets" USING gin ("tags")`);
    await queryRunner.query(
      `CREATE INDEX "ix_tickets_subject_trgm" ON "tickets" USING gin (lower("subject") gin_trgm_ops)`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_tickets_description_trgm" ON "tickets" USING gin (lower("description") gin_trgm_ops)`,
    );
    await queryRunner.query(
      `CREATE TABLE "ticket_status_changes" ("tenant_id" text NOT NULL, "id" text NOT NULL, "ticket_id" text NOT NULL, "from_status" text, "to_status" text NOT NULL, "reason" text, "actor" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_a521549da6f37a3cb77bc4519f2" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_ticket_status_changes_ticket" ON "ticket_status_changes"  ("tenant_id", "ticket_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "ticket_comments" ("tenant_id" text NOT NULL, "id" text NOT NULL, "ticket_id" text NOT NULL, "body" text NOT NULL, "public" boolean NOT NULL, "author" text, "author_type" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_ticket_comments_subscriber_public" CHECK ("author_type" <> 'subscriber' OR "public"), CONSTRAINT "chk_ticket_comments_author_type" CHECK ("author_type" IN ('agent', 'subscriber', 'system')), CONSTRAINT "PK_811ed3b81dd8df6b9a92058d89c" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_ticket_comments_ticket_public" ON "ticket_comments"  ("tenant_id", "ticket_id", "public", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_ticket_comments_ticket" ON "ticket_comments"  ("tenant_id", "ticket_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "ticket_counters" ("tenant_id" text NOT NULL, "last_number" integer NOT NULL, CONSTRAINT "chk_ticket_counters_last_number" CHECK ("last_number" > 0), CONSTRAINT "PK_180a15ac033abbbdfb56893d552" PRIMARY KEY ("tenant_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "ticket_settings" ("tenant_id" text NOT NULL, "urgent_hours" integer NOT NULL, "high_hours" integer NOT NULL, "normal_hours" integer NOT NULL, "low_hours" integer NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_ticket_settings_due_hours" CHECK ("urgent_hours" BETWEEN 1 AND 8760 AND "high_hours" BETWEEN 1 AND 8760 AND "normal_hours" BETWEEN 1 AND 8760 AND "low_hours" BETWEEN 1 AND 8760), CONSTRAINT "PK_749004760cde37ffdaa5e6dffc5" PRIMARY KEY ("tenant_id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_subscribers_tenant_id" ON "subscribers"  ("tenant_id", "id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "tickets" ADD CONSTRAINT "fk_tickets_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "tickets" ADD CONSTRAINT "fk_tickets_subscriber" FOREIGN KEY ("tenant_id", "subscriber_id") REFERENCES "subscribers"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_status_changes" ADD CONSTRAINT "fk_ticket_status_changes_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_status_changes" ADD CONSTRAINT "fk_ticket_status_changes_ticket" FOREIGN KEY ("tenant_id", "ticket_id") REFERENCES "tickets"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_comments" ADD CONSTRAINT "fk_ticket_comments_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_comments" ADD CONSTRAINT "fk_ticket_comments_ticket" FOREIGN KEY ("tenant_id", "ticket_id") REFERENCES "tickets"("tenant_id","id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_counters" ADD CONSTRAINT "fk_ticket_counters_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_settings" ADD CONSTRAINT "fk_ticket_settings_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "ticket_settings" DROP CONSTRAINT "fk_ticket_settings_tenant"`);
    await queryRunner.query(`ALTER TABLE "ticket_counters" DROP CONSTRAINT "fk_ticket_counters_tenant"`);
    await queryRunner.query(`ALTER TABLE "ticket_comments" DROP CONSTRAINT "fk_ticket_comments_ticket"`);
    await queryRunner.query(`ALTER TABLE "ticket_comments" DROP CONSTRAINT "fk_ticket_comments_tenant"`);
    await queryRunner.query(
      `ALTER TABLE "ticket_status_changes" DROP CONSTRAINT "fk_ticket_status_changes_ticket"`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_status_changes" DROP CONSTRAINT "fk_ticket_status_changes_tenant"`,
    );
    await queryRunner.query(`ALTER TABLE "tickets" DROP CONSTRAINT "fk_tickets_subscriber"`);
    await queryRunner.query(`ALTER TABLE "tickets" DROP CONSTRAINT "fk_tickets_tenant"`);
    await queryRunner.query(`DROP INDEX "public"."uq_subscribers_tenant_id"`);
    await queryRunner.query(`DROP TABLE "ticket_settings"`);
    await queryRunner.query(`DROP TABLE "ticket_counters"`);
    await queryRunner.query(`DROP INDEX "public"."ix_ticket_comments_ticket"`);
    await queryRunner.query(`DROP INDEX "public"."ix_ticket_comments_ticket_public"`);
    await queryRunner.query(`DROP TABLE "ticket_comments"`);
    await queryRunner.query(`DROP INDEX "public"."ix_ticket_status_changes_ticket"`);
    await queryRunner.query(`DROP TABLE "ticket_status_changes"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_description_trgm"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_subject_trgm"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_tags"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_tenant_status_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_tenant_priority_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_tenant_type_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_tenant_subscriber_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_tenant_assignee_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_tickets_tenant_running_due"`);
    await queryRunner.query(`DROP INDEX "public"."uq_tickets_tenant_id"`);
    await queryRunner.query(`DROP INDEX "public"."uq_tickets_tenant_number"`);
    await queryRunner.query(`DROP INDEX "public"."uq_tickets_external_id"`);
    await queryRunner.query(`DROP TABLE "tickets"`);
  }
}
