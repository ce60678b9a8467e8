import request from 'supertest';
import {
  allocate,
  createInvoice,
  createPayment,
  eventTypesOf,
  getBalances,
  getInvoice,
  newSubscriberId,
  postInvoice,
  postTransaction,
  transactionBody,
  type BillingTenant,
  billingSuite,
} from '../support/billing-factory';
import { expectError, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import type { TestApp } from '../support/test-app';
import { itRequiresAuthentication } from '../support/shared-cases';

const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

/** Inputs at the edges that once reached the database unguarded (found in review). */
describe('Edge cases', () => {
  let t: TestApp;
  let tenant: BillingTenant;

  billingSuite((suite) => ({ t, a: tenant } = suite));

  describe('zero-total invoices', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/invoices', {});

    it('should issue an invoice of total 0 as paid, and keep it out of oldest_first allocations', async () => {
      const subscriber = await newSubscriberId(t, tenant.token);
      const free = await createInvoice(t, tenant.token, subscriber, 0);
      expect(free).toMatchObject({ status: 'paid', total: 0, amount_due: 0, overdue: false });
      expect(free.paid_at).toEqual(expect.any(String));
      expect(await eventTypesOf(t, tenant.token, free.id)).toEqual(
        expect.arrayContaining(['invoice.created', 'invoice.finalized', 'invoice.paid']),
      );

      const owed = await createInvoice(t, tenant.token, subscriber, 300);
      const payment = await createPayment(t, tenant.token, subscriber, 1000);
      const res = await allocate(t, tenant.token, payment.id, { strategy: 'oldest_first' });
      expect(res.status).toBe(200);
      expect(res.body.data.allocations).toEqual([
        expect.objectContaining({ invoice_id: owed.id, amount: 300 }),
      ]);
      expect((await getInvoice(t, tenant.token, free.id)).allocations).toEqual([]);
    });
  });

  describe('balances near the largest amount kept', () => {
    it('should refuse with 422 a posting that would take the balance past 2^53 - 1, and keep the ledger readable', async () => {
      const subscriberId = await newSubscriberId(t, tenant.token);
      await createInvoice(t, tenant.token, subscriberId, MAX_AMOUNT);
      const second = await postInvoice(t, tenant.token, {
        subscriber_id: subscriberId,
        currency: 'USD',
        due_date: '2099-12-31',
        lines: [{ description: 'More', quantity: 1, unit_amount: 1 }],
      });
      expectError(second, 422, 'validation_failed', 'amount');
      // A debit posts nothing itself: it waits as a pending charge, and the invoice that would carry it is refused.
      const debit = await postTransaction(
        t,
        tenant.token,
        transactionBody(subscriberId, { kind: 'debit', amount: 5 }),
      );
      expect(debit.status).toBe(201);
      expect(debit.body.data.unallocated_amount).toBeNull();
      const carrying = await postInvoice(t, tenant.token, {
        subscriber_id: subscriberId,
        currency: 'USD',
        due_date: '2099-12-31',
        lines: [{ description: 'Nothing', quantity: 1, unit_amount: 0 }],
      });
      expectError(carrying, 422, 'validation_failed', 'amount');

      const [balance] = await getBalances(t, tenant.token, subscriberId);
      expect(balance.balance).toBe(MAX_AMOUNT);
      const ledger = await request(t.http)
        .get(`/api/v1/subscribers/${subscriberId}/ledger`)
        .set(bearer(tenant.token));
      expect(ledger.status).toBe(200);
      expect(ledger.body.data).toHaveLength(1);
      const pending = await request(t.http)
        .get(`/api/v1/subscribers/${subscriberId}/charges`)
        .set(bearer(tenant.token));
      expect(pending.status).toBe(200);
      expect(pending.body.data).toEqual([
        expect.objectContaining({ source_id: debit.body.data.id, amount: 5, status: 'pending' }),
      ]);
    });
  });

  describe('archived subscribers', () => {
    it('should refuse invoices, debits and credits for an archived subscriber with 409, and record its payments', async () => {
      const subscriberId = await newSubscriberId(t, tenant.token);
      const archive = await request(t.http)
        .post(`/api/v1/subscribers/${subscriberId}/status`)
        .set(bearer(tenant.token))
        .send({ status: 'archived' });
      expect(archive.status).toBe(200);
      expectError(
        await postInvoice(t, tenant.token, {
          subscriber_id: subscriberId,
          currency: 'USD',
          due_date: '2099-12-31',
          lines: [{ description: 'x', quantity: 1, unit_amount: 1 }],
        }),
        409,
        'invalid_state_transition',
        'subscriber_id',
      );
      for (const kind of ['debit', 'credit']) {
        expectError(
          await postTransaction(
            t,
            tenant.token,
            transactionBody(subscriberId, { kind, source: 'adjustment' }),
          ),
          409,
          'invalid_state_transition',
          'subscriber_id',
        );
      }
      // Money that really arrived is always recorded (issue #28 item 5), and the subscriber stays archived.
      const payment = await postTransaction(t, tenant.token, transactionBody(subscriberId));
      expect(payment.status).toBe(201);
      expect(payment.body.data).toMatchObject({ kind: 'payment', amount: 1000, unallocated_amount: 1000 });
      const subscriber = await request(t.http)
        .get(`/api/v1/subscribers/${subscriberId}`)
        .set(bearer(tenant.token));
      expect(subscriber.body.data.status).toBe('archived');
    });
  });

  describe('NUL characters and broken URL encoding', () => {
    it('should answer 4xx, never 500, to a NUL in a path id, a query value or a body field', async () => {
      const auth = bearer(tenant.token);
      expectNotFound(await request(t.http).get('/api/v1/transactions/a%00b').set(auth));
      expectError(
        await request(t.http).get('/api/v1/subscribers?email=a%00b').set(auth),
        400,
        'invalid_query',
        'email',
      );
      expectError(
        await request(t.http)
          .post('/api/v1/subscribers')
          .set(auth)
          .send({ full_name: 'a\u0000b', status: 'prospect' }),
        422,
        'validation_failed',
        'full_name',
      );
      expectError(
        await request(t.http)
          .post('/api/v1/subscribers')
          .set(auth)
          .send({ full_name: 'Ada', status: 'prospect', metadata: { note: 'x\u0000' } }),
        422,
        'validation_failed',
        'metadata.note',
      );
    });

    it('should answer a path that is not valid percent-encoding with 400 invalid_query', async () => {
      const res = await request(t.http).get('/api/v1/transactions/%E0%A4%A').set(bearer(tenant.token));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_query');
    });
  });
});
