import { MigrationInterface, QueryRunner } from 'typeorm';

export class Billing1795236130814 implements MigrationInterface {
  name = 'Billing1795236130814';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "invoices" ("tenant_id" text NOT NULL, "id" text NOT NULL, "number" integer NOT NULL, "subscriber_id" text NOT NULL, "currency" text NOT NULL, "status" text NOT NULL, "lines" jsonb NOT NULL, "total" bigint NOT NULL, "amount_paid" bigint NOT NULL, "due_date" date NOT NULL, "finalized_at" TIMESTAMP(3) WITH TIME ZONE, "paid_at" TIMESTAMP(3) WITH TIME ZONE, "voided_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_668cef7c22a427fd822cc1be3ce" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_invoices_tenant_number" ON "invoices"  ("tenant_id", "number") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_subscriber_status" ON "invoices"  ("tenant_id", "subscriber_id", "status", "due_date") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_tenant_created" ON "invoices"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "invoice_counters" ("tenant_id" text NOT NULL, "last_number" integer NOT NULL, CONSTRAINT "PK_2e6899112b9cb70d49f17c3bc48" PRIMARY KEY ("tenant_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "ledger_entries" ("tenant_id" text NOT NULL, "id" text NOT NULL, "subscriber_id" text NOT NULL, "currency" text NOT NULL, "type" text NOT NULL, "amount" bigint NOT NULL, "balance_after" bigint NOT NULL, "source_id" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_6efcb84411d3f08b08450ae75d5" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_ledger_subscriber_created" ON "ledger_entries"  ("tenant_id", "subscriber_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_ledger_subscriber_currency_created" ON "ledger_entries"  ("tenant_id", "subscriber_id", "currency", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "subscriber_balances" ("tenant_id" text NOT NULL, "subscriber_id" text NOT NULL, "currency" text NOT NULL, "balance" bigint NOT NULL, CONSTRAINT "PK_65989d714bb73f209b6b8ee976d" PRIMARY KEY ("tenant_id", "subscriber_id", "currency"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "transactions" ("tenant_id" text NOT NULL, "id" text NOT NULL, "subscriber_id" text NOT NULL, "kind" text NOT NULL, "source" text NOT NULL, "amount" bigint NOT NULL, "currency" text NOT NULL, "external_id" text, "reference" text, "description" text, "method" text, "occurred_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "refund_of" text, "metadata" jsonb NOT NULL, "allocated_amount" bigint NOT NULL, "refunded_amount" bigint NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_a219afd8dd77ed80f5a862f1db9" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_transactions_external_id" ON "transactions"  ("tenant_id", "external_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_transactions_tenant_subscriber_created" ON "transactions"  ("tenant_id", "subscriber_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_transactions_tenant_created" ON "transactions"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "allocations" ("tenant_id" text NOT NULL, "id" text NOT NULL, "transaction_id" text NOT NULL, "invoice_id" text, "subscriber_id" text NOT NULL, "amount" bigint NOT NULL, "currency" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_ca63099fc248466264af0fa6f1f" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_allocations_invoice" ON "allocations"  ("tenant_id", "invoice_id", "created_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_allocations_transaction" ON "allocations"  ("tenant_id", "transaction_id", "created_at") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ix_allocations_transaction"`);
    await queryRunner.query(`DROP INDEX "public"."ix_allocations_invoice"`);
    await queryRunner.query(`DROP TABLE "allocations"`);
    await queryRunner.query(`DROP INDEX "public"."ix_transactions_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_transactions_tenant_subscriber_created"`);
    await queryRunner.query(`DROP INDEX "public"."uq_transactions_external_id"`);
    await queryRunner.query(`DROP TABLE "transactions"`);
    await queryRunner.query(`DROP TABLE "subscriber_balances"`);
    await queryRunner.query(`DROP INDEX "public"."ix_ledger_subscriber_currency_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_ledger_subscriber_created"`);
    await queryRunner.query(`DROP TABLE "ledger_entries"`);
    await queryRunner.query(`DROP TABLE "invoice_counters"`);
    await queryRunner.query(`DROP INDEX "public"."ix_invoices_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_invoices_tenant_subscriber_status"`);
    await queryRunner.query(`DROP INDEX "public"."uq_invoices_tenant_number"`);
    await queryRunner.query(`DROP TABLE "invoices"`);
  }
}
