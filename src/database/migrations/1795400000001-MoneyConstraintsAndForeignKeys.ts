import { MigrationInterface, QueryRunner } from 'typeorm';

/** Number.MAX_SAFE_INTEGER: the largest amount or balance kept exactly in JavaScript (src/common/money.ts). */
const MAX = '9007199254740991';

/** [table, constraint, expression]: the billing invariants the services keep, now held by the database too. */
const CHECKS: [string, string, string][] = [
  ['invoices', 'chk_invoices_status', `"status" IN ('draft', 'open', 'partially_paid', 'paid', 'void')`],
  ['invoices', 'chk_invoices_number', `"number" > 0`],
  ['invoices', 'chk_invoices_amounts', `"total" >= 0 AND "amount_paid" >= 0 AND "amount_paid" <= "total"`],
  [
    'invoices',
    'chk_invoices_paid_by_status',
    `("status" IN ('draft', 'open', 'void') AND "amount_paid" = 0) OR ("status" = 'partially_paid' AND "amount_paid" > 0 AND "amount_paid" < "total") OR ("status" = 'paid' AND "amount_paid" = "total")`,
  ],
  ['invoices', 'chk_invoices_paid_at', `("status" = 'paid') = ("paid_at" IS NOT NULL)`],
  ['invoices', 'chk_invoices_voided_at', `("status" = 'void') = ("voided_at" IS NOT NULL)`],
  ['invoices', 'chk_invoices_lines', `isp_invoice_lines_valid("lines", "total")`],
  ['invoice_counters', 'chk_invoice_counters_last_number', `"last_number" > 0`],
  ['transactions', 'chk_transactions_kind', `"kind" IN ('payment', 'credit', 'debit', 'refund')`],
  ['transactions', 'chk_transactions_source', `"source" IN ('external', 'adjustment')`],
  [
    'transactions',
    'chk_transactions_amounts',
    `"amount" > 0 AND "amount" <= ${MAX} AND "allocated_amount" >= 0 AND "refunded_amount" >= 0 AND "allocated_amount" + "refunded_amount" <= "amount"`,
  ],
  [
    'transactions',
    'chk_transactions_allocatable',
    `("allocated_amount" = 0 OR "kind" IN ('payment', 'credit')) AND ("refunded_amount" = 0 OR "kind" = 'payment')`,
  ],
  ['transactions', 'chk_transactions_refund_of', `("kind" = 'refund') = ("refund_of" IS NOT NULL)`],
  ['allocations', 'chk_allocations_amount', `"amount" > 0`],
  [
    'ledger_entries',
    'chk_ledger_entries_type',
    `"type" IN ('invoice', 'invoice_voided', 'payment', 'credit', 'debit', 'refund')`,
  ],
  ['ledger_entries', 'chk_ledger_entries_amount', `"amount" <> 0 AND abs("amount") <= ${MAX}`],
  ['ledger_entries', 'chk_ledger_entries_balance', `abs("balance_after") <= ${MAX}`],
  ['subscriber_balances', 'chk_subscriber_balances_balance', `abs("balance") <= ${MAX}`],
  [
    'billing_profiles',
    'chk_billing_profiles_terms',
    `"billing_day" BETWEEN 1 AND 28 AND "payment_terms_days" >= 0 AND ("auto_suspend_after_days" IS NULL OR "auto_suspend_after_days" >= 1)`,
  ],
  [
    'webhook_deliveries',
    'chk_webhook_deliveries_status',
    `"status" IN ('pending', 'succeeded', 'failed', 'cancelled')`,
  ],
  ['webhook_deliveries', 'chk_webhook_deliveries_attempts', `"attempts" >= 0`],
];

/** [table, constraint, columns, referenced table, referenced columns]. */
const FOREIGN_KEYS: [string, string, string, string, string][] = [
  ['billing_profiles', 'fk_billing_profiles_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['subscribers', 'fk_subscribers_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['subscribers', 'fk_subscribers_billing_profile', '"billing_profile_id"', 'billing_profiles', '"id"'],
  ['events', 'fk_events_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['invoices', 'fk_invoices_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['invoices', 'fk_invoices_subscriber', '"subscriber_id"', 'subscribers', '"id"'],
  ['invoice_counters', 'fk_invoice_counters_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['transactions', 'fk_transactions_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['transactions', 'fk_transactions_subscriber', '"subscriber_id"', 'subscribers', '"id"'],
  ['transactions', 'fk_transactions_refund_of', '"refund_of"', 'transactions', '"id"'],
  ['allocations', 'fk_allocations_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['allocations', 'fk_allocations_transaction', '"transaction_id"', 'transactions', '"id"'],
  ['allocations', 'fk_allocations_invoice', '"invoice_id"', 'invoices', '"id"'],
  ['allocations', 'fk_allocations_subscriber', '"subscriber_id"', 'subscribers', '"id"'],
  ['ledger_entries', 'fk_ledger_entries_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['ledger_entries', 'fk_ledger_entries_subscriber', '"subscriber_id"', 'subscribers', '"id"'],
  ['subscriber_balances', 'fk_subscriber_balances_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['subscriber_balances', 'fk_subscriber_balances_subscriber', '"subscriber_id"', 'subscribers', '"id"'],
  ['webhooks', 'fk_webhooks_tenant', '"tenant_id"', 'tenants', '"id"'],
  ['webhook_deliveries', 'fk_webhook_deliveries_tenant', '"tenant_id"', 'tenants', '"id"'],
  // With tenant_id: deleting a subscription checks its deliveries through their (tenant_id, webhook_id) index.
  [
    'webhook_deliveries',
    'fk_webhook_deliveries_webhook',
    '"tenant_id", "webhook_id"',
    'webhooks',
    '"tenant_id", "id"',
  ],
  ['webhook_deliveries', 'fk_webhook_deliveries_event', '"event_id"', 'events', '"id"'],
  ['webhook_attempts', 'fk_webhook_attempts_tenant', '"tenant_id"', 'tenants', '"id"'],
  [
    'webhook_attempts',
    'fk_webhook_attempts_webhook',
    '"tenant_id", "webhook_id"',
    'webhooks',
    '"tenant_id", "id"',
  ],
  ['webhook_attempts', 'fk_webhook_attempts_event', '"event_id"', 'events', '"id"'],
];

/**
 * Issue #11 item 12. CHECK constraints hold the billing invariants at the database (positive amounts, nothing
 * allocated or refunded beyond a payment, nothing paid beyond an invoice, lines that add up to the total, balances
 * within the safe integer range) and foreign keys tie each row to what it references, so a bug fails loudly instead
 * of corrupting money. An existing row breaking one makes this migration fail, naming the constraint.
 */
export class MoneyConstraintsAndForeignKeys1795400000001 implements MigrationInterface {
  name = 'MoneyConstraintsAndForeignKeys1795400000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    // Each line: quantity > 0, unit_amount ≥ 0, amount = quantity × unit_amount; and the amounts add up to total.
    await queryRunner.query(`
      CREATE FUNCTION isp_invoice_lines_valid(lines jsonb, total bigint) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT COALESCE(
          jsonb_typeof(lines) = 'array' AND jsonb_array_length(lines) > 0
          AND bool_and(
            jsonb_typeof(line->'quantity') = 'number' AND jsonb_typeof(line->'unit_amount') = 'number'
            AND jsonb_typeof(line->'amount') = 'number'
            AND (line->>'quantity')::numeric > 0 AND (line->>'unit_amount')::numeric >= 0
            AND (line->>'amount')::numeric = (line->>'quantity')::numeric * (line->>'unit_amount')::numeric)
          AND sum((line->>'amount')::numeric) = total,
          false)
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(lines) = 'array' THEN lines ELSE '[]' END) AS line
      $$`);
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_webhooks_tenant_id" ON "webhooks" ("tenant_id", "id") `);
    for (const [table, name, expression] of CHECKS) {
      await queryRunner.query(`ALTER TABLE "${table}" ADD CONSTRAINT "${name}" CHECK (${expression})`);
    }
    for (const [table, name, columns, referenced, referencedColumns] of FOREIGN_KEYS) {
      await queryRunner.query(
        `ALTER TABLE "${table}" ADD CONSTRAINT "${name}" FOREIGN KEY (${columns}) ` +
          `REFERENCES "${referenced}"(${referencedColumns}) ON DELETE NO ACTION ON UPDATE NO ACTION`,
      );
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const [table, name] of [...FOREIGN_KEYS].reverse()) {
      await queryRunner.query(`ALTER TABLE "${table}" DROP CONSTRAINT "${name}"`);
    }
    for (const [table, name] of [...CHECKS].reverse()) {
      await queryRunner.query(`ALTER TABLE "${table}" DROP CONSTRAINT "${name}"`);
    }
    await queryRunner.query(`DROP INDEX "public"."uq_webhooks_tenant_id"`);
    await queryRunner.query(`DROP FUNCTION isp_invoice_lines_valid(jsonb, bigint)`);
  }
}
