import request, { type Response } from 'supertest';
import {
  allocate,
  type BillingTenant,
  createInvoice,
  byHand,
  getBalance,
  getInvoice,
  getTransaction,
  invoiceBody,
  type LedgerEntryRecord,
  listAll,
  listIds,
  newSubscriberId,
  postInvoice,
  postTransaction,
  transactionBody,
  voidInvoice,
  billingSuite,
  refundBody,
} from '../support/billing-factory';
import { expectError } from '../support/envelope';
import { type TestApp } from '../support/test-app';

function statuses(results: Response[]): number[] {
  return results.map((res) => res.status);
}

function count(results: Response[], status: number): number {
  return results.filter((res) => res.status === status).length;
}

/** No answer is a 5xx; a failure lists the bodies of those that were. */
function expectNo5xx(results: Response[]): void {
  const crashed = results
    .filter((res) => res.status >= 500)
    .map((res) => `${res.status} ${JSON.stringify(res.body)}`);
  expect(crashed).toEqual([]);
}

/** Its payments wait unallocated (auto_apply false) for the racing allocations and refunds under test. */
const { createPayment } = byHand;

describe('Billing: concurrency', () => {
  let t: TestApp;
  let a: BillingTenant;

  billingSuite((suite) => ({ t, a } = suite), { listen: true });

  /** The subscriber's latest ledger balance_after in USD and the sum of its USD entries. */
  async function ledgerTotals(subscriberId: string) {
    const entries = (
      await listAll<LedgerEntryRecord>(t, a.token, `/api/v1/subscribers/${subscriberId}/ledger`)
    ).filter((entry) => entry.currency === 'USD');
    return {
      latest: entries[0]?.balance_after ?? 0,
      sum: entries.reduce((total, entry) => total + entry.amount, 0),
    };
  }

  describe('POST /api/v1/transactions/{id}/allocate under concurrency', () => {
    it('should require authentication', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      const results = await Promise.all(
        [1, 2, 3].map(() =>
          request(t.http)
            .post(`/api/v1/transactions/${payment.id}/allocate`)
            .send({ target: 'balance', amount: 10 }),
        ),
      );
      for (const res of results) {
        expectError(res, 401, 'authentication_required');
      }
    });

    it('should let exactly 10 of 30 simultaneous allocations of 10 from a payment of 100 through', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await createInvoice(t, a.token, subscriberId, 300);
      const payment = await createPayment(t, a.token, subscriberId, 100);
      const body = { allocations: [{ invoice_id: invoice.id, amount: 10 }] };

      const results = await Promise.all(
        Array.from({ length: 30 }, () => allocate(t, a.token, payment.id, body)),
      );

      expectNo5xx(results);
      expect(count(results, 200)).toBe(10);
      expect(count(results, 422)).toBe(20);
      for (const res of results.filter((r) => r.status === 422)) {
        expectError(res, 422, 'allocation_exceeds_unallocated', 'allocations');
      }
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({
        status: 'partially_paid',
        amount_paid: 100,
        amount_due: 200,
      });
      const after = await getTransaction(t, a.token, payment.id);
      expect(after).toMatchObject({ allocated_amount: 100, unallocated_amount: 0, refunded_amount: 0 });
      expect(after.allocations).toHaveLength(10);
    });

    it('should never over-pay an invoice when 30 payments race to pay it', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await createInvoice(t, a.token, subscriberId, 95);
      const payments = [];
      for (let i = 0; i < 30; i++) {
        payments.push(await createPayment(t, a.token, subscriberId, 10));
      }

      const results = await Promise.all(
        payments.map((payment) =>
          allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 10 }] }),
        ),
      );

      expectNo5xx(results);
      expect(count(results, 200)).toBe(9);
      expect(count(results, 422)).toBe(21);
      for (const res of results.filter((r) => r.status !== 200)) {
        expectError(res, 422, 'allocation_exceeds_amount_due', 'allocations.0.amount');
      }
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({ amount_paid: 90, amount_due: 5 });
    });

    it('should neither deadlock nor over-allocate when allocations name two invoices in opposite orders', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const first = await createInvoice(t, a.token, subscriberId, 1000);
      const second = await createInvoice(t, a.token, subscriberId, 1000);
      const payments = [];
      for (let i = 0; i < 20; i++) {
        payments.push(await createPayment(t, a.token, subscriberId, 100));
      }

      const results = await Promise.all(
        payments.map((payment, i) => {
          const pair = [
            { invoice_id: first.id, amount: 50 },
            { invoice_id: second.id, amount: 50 },
          ];
          return allocate(t, a.token, payment.id, { allocations: i % 2 ? pair : pair.reverse() });
        }),
      );

      expectNo5xx(results);
      expect(statuses(results)).toEqual(Array(20).fill(200));
      expect((await getInvoice(t, a.token, first.id)).amount_paid).toBe(1000);
      expect((await getInvoice(t, a.token, second.id)).amount_paid).toBe(1000);
      expect((await getInvoice(t, a.token, first.id)).status).toBe('paid');
    });

    it('should not over-allocate when oldest_first runs for 10 payments at once', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const older = await createInvoice(t, a.token, subscriberId, 250, { due_date: '2099-01-01' });
      const newer = await createInvoice(t, a.token, subscriberId, 250, { due_date: '2099-02-01' });
      const payments = [];
      for (let i = 0; i < 10; i++) {
        payments.push(await createPayment(t, a.token, subscriberId, 100));
      }

      const results = await Promise.all(
        payments.map((payment) => allocate(t, a.token, payment.id, { strategy: 'oldest_first' })),
      );

      expectNo5xx(results);
      expect(await getInvoice(t, a.token, older.id)).toMatchObject({ status: 'paid', amount_paid: 250 });
      expect(await getInvoice(t, a.token, newer.id)).toMatchObject({ status: 'paid', amount_paid: 250 });
      let allocated = 0;
      for (const payment of payments) {
        const after = await getTransaction(t, a.token, payment.id);
        expect(after.allocated_amount + after.unallocated_amount).toBe(100);
        allocated += after.allocated_amount;
      }
      expect(allocated).toBe(500);
    });
  });

  describe('auto-apply under concurrency', () => {
    it('should apply 30 payments racing on receipt exactly up to what is owed, oldest due first, never over-paying', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const older = await createInvoice(t, a.token, subscriberId, 1000, { due_date: '2099-01-01' });
      const newer = await createInvoice(t, a.token, subscriberId, 550, { due_date: '2099-02-01' });
      const body = transactionBody(subscriberId, { amount: 100 });

      const results = await Promise.all(Array.from({ length: 30 }, () => postTransaction(t, a.token, body)));

      expectNo5xx(results);
      expect(statuses(results)).toEqual(Array(30).fill(201));
      expect(await getInvoice(t, a.token, older.id)).toMatchObject({ status: 'paid', amount_paid: 1000 });
      expect(await getInvoice(t, a.token, newer.id)).toMatchObject({ status: 'paid', amount_paid: 550 });
      let applied = 0;
      for (const res of results) {
        const after = await getTransaction(t, a.token, res.body.data.id);
        expect(after.allocated_amount + after.unallocated_amount).toBe(100);
        expect(after.allocations).toEqual(res.body.data.allocations);
        applied += after.allocated_amount;
      }
      expect(applied).toBe(1550);
      expect(await getBalance(t, a.token, subscriberId)).toMatchObject({
        balance: 1550 - 3000,
        open_invoices_due: 0,
        unallocated_credit: 3000 - 1550,
      });
    });

    it('should let every payment meet the invoice issued at the same moment, whichever commits first', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2
            ? postTransaction(t, a.token, transactionBody(subscriberId, { amount: 100 }))
            : postInvoice(
                t,
                a.token,
                invoiceBody(subscriberId, {
                  lines: [{ description: 'Service', quantity: 1, unit_amount: 100 }],
                }),
              ),
        ),
      );

      expectNo5xx(results);
      expect(statuses(results)).toEqual(Array(20).fill(201));
      // Ten invoices of 100 and ten payments of 100: each payment found an invoice, or the invoice found it.
      const balance = await getBalance(t, a.token, subscriberId);
      expect(balance).toMatchObject({ balance: 0, open_invoices_due: 0, unallocated_credit: 0 });
    });
  });

  describe('POST /api/v1/transactions (refunds) under concurrency', () => {
    it('should require authentication', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      const body = refundBody(a.subscriberId, payment.id, 10);
      const results = await Promise.all(
        [1, 2, 3].map(() => request(t.http).post('/api/v1/transactions').send(body)),
      );
      for (const res of results) {
        expectError(res, 401, 'authentication_required');
      }
    });

    it('should let exactly 10 of 30 simultaneous refunds of 10 against a payment of 100 through', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const payment = await createPayment(t, a.token, subscriberId, 100);
      const body = refundBody(subscriberId, payment.id, 10);

      const results = await Promise.all(Array.from({ length: 30 }, () => postTransaction(t, a.token, body)));

      expectNo5xx(results);
      expect(count(results, 201)).toBe(10);
      expect(count(results, 422)).toBe(20);
      for (const res of results.filter((r) => r.status === 422)) {
        expectError(res, 422, 'refund_exceeds_refundable', 'amount');
      }
      expect(await getTransaction(t, a.token, payment.id)).toMatchObject({
        refunded_amount: 100,
        allocated_amount: 0,
        unallocated_amount: 0,
      });
      expect(
        await listIds(t, a.token, '/api/v1/transactions', { subscriber_id: subscriberId, kind: 'refund' }),
      ).toHaveLength(10);
      // -100 for the payment, +10 for each of the ten refunds.
      expect((await getBalance(t, a.token, subscriberId))?.balance).toBe(0);
      const totals = await ledgerTotals(subscriberId);
      expect(totals).toEqual({ latest: 0, sum: 0 });
    });

    it('should never let refunds and allocations together take more than the payment', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await createInvoice(t, a.token, subscriberId, 1000);
      const payment = await createPayment(t, a.token, subscriberId, 100);
      const refund = refundBody(subscriberId, payment.id, 10);
      const allocation = { allocations: [{ invoice_id: invoice.id, amount: 10 }] };

      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          i % 2 ? postTransaction(t, a.token, refund) : allocate(t, a.token, payment.id, allocation),
        ),
      );

      expectNo5xx(results);
      expect(count(results, 200) + count(results, 201)).toBe(10);
      const after = await getTransaction(t, a.token, payment.id);
      expect(after.allocated_amount + after.refunded_amount).toBe(100);
      expect(after.unallocated_amount).toBe(0);
      expect(after.allocated_amount).toBe(10 * count(results, 200));
      expect(after.refunded_amount).toBe(10 * count(results, 201));
      expect((await getInvoice(t, a.token, invoice.id)).amount_paid).toBe(after.allocated_amount);
    });
  });

  describe('POST /api/v1/invoices/{id}/void racing an allocation', () => {
    it('should require authentication', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId, 100);
      const results = await Promise.all(
        [1, 2].map(() => request(t.http).post(`/api/v1/invoices/${invoice.id}/void`)),
      );
      for (const res of results) {
        expectError(res, 401, 'authentication_required');
      }
    });

    it('should let either the allocation or the void win, never both, on 10 fresh invoices', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const outcomes: string[] = [];
      for (let round = 0; round < 10; round++) {
        const invoice = await createInvoice(t, a.token, subscriberId, 1000);
        const payment = await createPayment(t, a.token, subscriberId, 300);
        const body = { allocations: [{ invoice_id: invoice.id, amount: 200 }] };
        const [allocated, voided] =
          round % 2
            ? await Promise.all([allocate(t, a.token, payment.id, body), voidInvoice(t, a.token, invoice.id)])
            : await Promise.all([
                voidInvoice(t, a.token, invoice.id),
                allocate(t, a.token, payment.id, body),
              ]).then(([v, al]) => [al, v]);

        expectNo5xx([allocated, voided]);
        const after = await getInvoice(t, a.token, invoice.id);
        const txn = await getTransaction(t, a.token, payment.id);
        if (allocated.status === 200) {
          outcomes.push('allocation');
          expectError(voided, 409, 'invalid_state_transition');
          expect(after).toMatchObject({ status: 'partially_paid', amount_paid: 200, voided_at: null });
          expect(txn.allocated_amount).toBe(200);
        } else {
          outcomes.push('void');
          expectError(allocated, 409, 'invalid_state_transition', 'allocations.0.invoice_id');
          expect(voided.status).toBe(200);
          expect(after).toMatchObject({ status: 'void', amount_paid: 0 });
          expect(after.allocations).toEqual([]);
          expect(txn.allocated_amount).toBe(0);
        }
      }
      expect(outcomes).toHaveLength(10);
      const totals = await ledgerTotals(subscriberId);
      expect(totals.latest).toBe(totals.sum);
      expect((await getBalance(t, a.token, subscriberId))?.balance).toBe(totals.sum);
    });
  });
});
