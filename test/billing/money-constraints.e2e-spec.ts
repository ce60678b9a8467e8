import request from 'supertest';
import { expectError } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  allocate,
  createBillingTenant,
  createInvoice,
  createPayment,
  createTransaction,
  getBalance,
  postInvoice,
  postTransaction,
  transactionBody,
  type BillingTenant,
  type InvoiceRecord,
  type TransactionRecord,
  invoiceBody,
  billingSuite,
} from '../support/billing-factory';
import type { TestApp } from '../support/test-app';

const MAX = Number.MAX_SAFE_INTEGER;

/** Postgres' verdict on a statement: its SQLSTATE, or 'accepted'. */
async function verdict(t: TestApp, sql: string, params: unknown[] = []): Promise<string> {
  try {
    await t.dataSource.query(sql, params);
    return 'accepted';
  } catch (error) {
    return (error as { driverError?: { code?: string } }).driverError?.code ?? String(error);
  }
}

const CHECK_VIOLATION = '23514';
const FOREIGN_KEY_VIOLATION = '23503';

/** Issue #11 item 12: the database itself refuses writes that would break a billing invariant. */
describe('Money constraints at the database', () => {
  let t: TestApp;
  let tenant: BillingTenant;
  let invoice: InvoiceRecord;
  let payment: TransactionRecord;

  billingSuite(
    async (suite) => {
      ({ t, a: tenant } = suite);
      invoice = await createInvoice(t, tenant.token, tenant.subscriberId, 1000);
      payment = await createPayment(t, tenant.token, tenant.subscriberId, 1000, { auto_apply: false });
      const res = await allocate(t, tenant.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 400 }],
      });
      expect(res.status).toBe(200);
    },
    { env: { WEBHOOK_WORKER_ENABLED: 'false' } },
  );

  /** Writes that bypass the services, each breaking one invariant, and what Postgres must answer. */
  const BYPASSES: [string, string, (ids: Ids) => unknown[], string][] = [
    [
      'a transaction allocated beyond its amount',
      'UPDATE transactions SET allocated_amount = amount + 1 WHERE id = $1',
      (ids) => [ids.payment],
      CHECK_VIOLATION,
    ],
    [
      'a transaction allocated and refunded beyond its amount',
      'UPDATE transactions SET refunded_amount = amount - allocated_amount + 1 WHERE id = $1',
      (ids) => [ids.payment],
      CHECK_VIOLATION,
    ],
    [
      'a transaction of amount 0',
      'UPDATE transactions SET amount = 0, allocated_amount = 0 WHERE id = $1',
      (ids) => [ids.payment],
      CHECK_VIOLATION,
    ],
    [
      'a refund without the payment it returns',
      "UPDATE transactions SET kind = 'refund' WHERE id = $1",
      (ids) => [ids.payment],
      CHECK_VIOLATION,
    ],
    [
      'a refund of a payment that does not exist',
      "UPDATE transactions SET refund_of = 'txn_NOPE' WHERE id = $1",
      (ids) => [ids.payment],
      CHECK_VIOLATION,
    ],
    [
      'an invoice paid beyond its total',
      'UPDATE invoices SET amount_paid = total + 1 WHERE id = $1',
      (ids) => [ids.invoice],
      CHECK_VIOLATION,
    ],
    [
      'a negative amount paid',
      'UPDATE invoices SET amount_paid = -1 WHERE id = $1',
      (ids) => [ids.invoice],
      CHECK_VIOLATION,
    ],
    [
      'an invoice marked paid with an amount still due',
      "UPDATE invoices SET status = 'paid', paid_at = now() WHERE id = $1",
      (ids) => [ids.invoice],
      CHECK_VIOLATION,
    ],
    [
      'an invoice whose lines do not add up to its total',
      'UPDATE invoices SET total = total + 1 WHERE id = $1',
      (ids) => [ids.invoice],
      CHECK_VIOLATION,
    ],
    [
      'an invoice line of quantity 0',
      `UPDATE invoices SET lines = '[{"description": "x", "quantity": 0, "unit_amount": 1000, "amount": 0}]',
         total = 0, amount_paid = 0, status = 'open' WHERE id = $1`,
      (ids) => [ids.invoice],
      CHECK_VIOLATION,
    ],
    [
      'an invoice of an unknown status',
      "UPDATE invoices SET status = 'settled' WHERE id = $1",
      (ids) => [ids.invoice],
      CHECK_VIOLATION,
    ],
    [
      'an allocation of 0',
      'UPDATE allocations SET amount = 0 WHERE transaction_id = $1',
      (ids) => [ids.payment],
      CHECK_VIOLATION,
    ],
    [
      'an allocation to an invoice that does not exist',
      "UPDATE allocations SET invoice_id = 'inv_NOPE' WHERE transaction_id = $1",
      (ids) => [ids.payment],
      FOREIGN_KEY_VIOLATION,
    ],
    [
      'an allocation of a transaction that does not exist',
      "UPDATE allocations SET transaction_id = 'txn_NOPE' WHERE transaction_id = $1",
      (ids) => [ids.payment],
      FOREIGN_KEY_VIOLATION,
    ],
    [
      'a balance beyond the largest safe integer',
      `UPDATE subscriber_balances SET balance = ${MAX} + 1 WHERE subscriber_id = $1`,
      (ids) => [ids.subscriber],
      CHECK_VIOLATION,
    ],
    [
      'a ledger entry of 0',
      'UPDATE ledger_entries SET amount = 0 WHERE subscriber_id = $1',
      (ids) => [ids.subscriber],
      CHECK_VIOLATION,
    ],
    [
      'a running balance beyond the largest safe integer',
      `UPDATE ledger_entries SET balance_after = -${MAX} - 1 WHERE subscriber_id = $1`,
      (ids) => [ids.subscriber],
      CHECK_VIOLATION,
    ],
    [
      'an invoice of a subscriber that does not exist',
      "UPDATE invoices SET subscriber_id = 'sub_NOPE' WHERE id = $1",
      (ids) => [ids.invoice],
      FOREIGN_KEY_VIOLATION,
    ],
    [
      'a transaction of a tenant that does not exist',
      "UPDATE transactions SET tenant_id = 'ten_NOPE' WHERE id = $1",
      (ids) => [ids.payment],
      FOREIGN_KEY_VIOLATION,
    ],
    [
      'a subscriber on a billing profile that does not exist',
      "UPDATE subscribers SET billing_profile_id = 'bp_NOPE' WHERE id = $1",
      (ids) => [ids.subscriber],
      FOREIGN_KEY_VIOLATION,
    ],
    [
      'an event of a tenant that does not exist',
      "UPDATE events SET tenant_id = 'ten_NOPE' WHERE subject_id = $1",
      (ids) => [ids.invoice],
      FOREIGN_KEY_VIOLATION,
    ],
    [
      'a billing day past the 28th',
      `INSERT INTO billing_profiles (tenant_id, id, name, currency, billing_day, payment_terms_days,
         auto_suspend_after_days, created_at, updated_at) VALUES ($1, 'bp_BAD', 'x', 'USD', 31, 14, NULL, now(), now())`,
      (ids) => [ids.tenant],
      CHECK_VIOLATION,
    ],
  ];

  interface Ids {
    tenant: string;
    subscriber: string;
    invoice: string;
    payment: string;
  }

  it.each(BYPASSES)('should refuse %s', async (_name, sql, params, code) => {
    const ids: Ids = {
      tenant: tenant.tenantId,
      subscriber: tenant.subscriberId,
      invoice: invoice.id,
      payment: payment.id,
    };
    expect(await verdict(t, sql, params(ids))).toBe(code);
  });

  it('should refuse a delivery for a webhook that does not exist', async () => {
    const sql = `INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, status, attempts,
        next_attempt_at, locked_until, created_at, updated_at)
      SELECT tenant_id, 'dlv_ORPHAN' || substr(id, 15), 'whk_NOPE', id, type, 'pending', 0, now(), NULL, now(), now()
      FROM events WHERE tenant_id = $1 LIMIT 1`;
    expect(await verdict(t, sql, [tenant.tenantId])).toBe(FOREIGN_KEY_VIOLATION);
  });

  describe('sums the API answers stay safe integers', () => {
    it('should refuse an invoice that would take the open invoices due beyond the largest amount', async () => {
      const other = await createBillingTenant(t);
      await createInvoice(t, other.token, other.subscriberId, MAX);
      // The ledger balance is back to 0, but the first invoice is still open (the payment waits for an allocation by
      // hand): both would be owed at once.
      await createPayment(t, other.token, other.subscriberId, MAX, { auto_apply: false });
      const res = await postInvoice(
        t,
        other.token,
        invoiceBody(other.subscriberId, { lines: [{ description: 'More', quantity: 1, unit_amount: MAX }] }),
      );
      expectError(res, 422, 'validation_failed', 'lines');
      expect(res.body.error.message).toContain(String(MAX));
      expect(await getBalance(t, other.token, other.subscriberId)).toEqual({
        currency: 'USD',
        balance: 0,
        open_invoices_due: MAX,
        unallocated_credit: MAX,
      });
    });

    it('should refuse an invoice whose pending charges would take its total beyond the largest amount', async () => {
      const other = await createBillingTenant(t);
      const debit = await createTransaction(t, other.token, other.subscriberId, {
        kind: 'debit',
        amount: MAX,
      });
      expect(debit.unallocated_amount).toBeNull();
      expect(await getBalance(t, other.token, other.subscriberId)).toBeUndefined(); // pending, not owed yet
      const res = await postInvoice(t, other.token, invoiceBody(other.subscriberId));
      expectError(res, 422, 'validation_failed', 'lines');
      expect(res.body.error.message).toContain('pending charges');
      expect(await getBalance(t, other.token, other.subscriberId)).toBeUndefined();
      const pending = await request(t.http)
        .get(`/api/v1/subscribers/${other.subscriberId}/charges`)
        .set(bearer(other.token));
      expect(pending.status).toBe(200);
      expect(pending.body.data).toEqual([
        expect.objectContaining({ source: 'debit', source_id: debit.id, amount: MAX, status: 'pending' }),
      ]);
    });

    it('should refuse a payment that would take the unallocated credit beyond the largest amount', async () => {
      const other = await createBillingTenant(t);
      // An open invoice of MAX brings the balance back to 0 (a debit no longer does: it waits as a pending charge), so
      // only the unallocated credit would overflow: the payments wait for an allocation by hand.
      await createInvoice(t, other.token, other.subscriberId, MAX);
      await createPayment(t, other.token, other.subscriberId, MAX, { auto_apply: false });
      const res = await postTransaction(
        t,
        other.token,
        transactionBody(other.subscriberId, { amount: MAX, auto_apply: false }),
      );
      expectError(res, 422, 'validation_failed', 'amount');
      expect(await getBalance(t, other.token, other.subscriberId)).toEqual({
        currency: 'USD',
        balance: 0,
        open_invoices_due: MAX,
        unallocated_credit: MAX,
      });
    });
  });
});
