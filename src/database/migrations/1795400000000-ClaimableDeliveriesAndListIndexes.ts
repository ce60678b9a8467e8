import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #11 item 15. Deliveries of a disabled subscription are cancelled (they used to wait in the claim's path), the
 * claim walks a partial index of pending deliveries only, and every list filter has an index leading with tenant_id.
 */
export class ClaimableDeliveriesAndListIndexes1795400000000 implements MigrationInterface {
  name = 'ClaimableDeliveriesAndListIndexes1795400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // Index builds on large tables may outlast a request's statement_timeout.
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(
      `UPDATE "webhook_deliveries" SET "status" = 'cancelled', "next_attempt_at" = NULL, "updated_at" = now()
       WHERE "status" = 'pending' AND "webhook_id" IN (SELECT "id" FROM "webhooks" WHERE NOT "enabled")`,
    );
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_deliveries_due"`);
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_claimable" ON "webhook_deliveries" ("next_attempt_at") WHERE "status" = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_webhook_status" ON "webhook_deliveries" ("tenant_id", "webhook_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_subscribers_tenant_email_created" ON "subscribers" ("tenant_id", "email_normalized", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_transactions_tenant_kind_created" ON "transactions" ("tenant_id", "kind", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_transactions_tenant_source_created" ON "transactions" ("tenant_id", "source", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_transactions_tenant_occurred" ON "transactions" ("tenant_id", "occurred_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_status_created" ON "invoices" ("tenant_id", "status", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_payable_due" ON "invoices" ("tenant_id", "due_date") WHERE "status" IN ('open', 'partially_paid')`,
    );
    // `type=prefix.*` is a LIKE 'prefix.%': a btree serves it under any collation only with text_pattern_ops.
    await queryRunner.query(
      `CREATE INDEX "ix_events_tenant_type_pattern" ON "events" ("tenant_id", "type" text_pattern_ops)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ix_events_tenant_type_pattern"`);
    await queryRunner.query(`DROP INDEX "public"."ix_invoices_tenant_payable_due"`);
    await queryRunner.query(`DROP INDEX "public"."ix_invoices_tenant_status_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_transactions_tenant_occurred"`);
    await queryRunner.query(`DROP INDEX "public"."ix_transactions_tenant_source_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_transactions_tenant_kind_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_subscribers_tenant_email_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_deliveries_webhook_status"`);
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_deliveries_claimable"`);
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_due" ON "webhook_deliveries" ("status", "next_attempt_at") `,
    );
    // Cancelled deliveries stay cancelled: the status is still a valid one for the older code to ignore.
  }
}
