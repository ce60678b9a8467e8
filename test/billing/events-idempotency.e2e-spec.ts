import { randomBytes } from 'node:crypto';
import request from 'supertest';
import {
  allocate,
  type BillingTenant,
  createBillingTenant,
  createInvoice,
  byHand,
  eventsOf,
  eventTypesOf,
  finalizeInvoice,
  getBalance,
  getInvoice,
  getTransaction,
  invoiceBody,
  listIds,
  newSubscriberId,
  postInvoice,
  postTransaction,
  transactionBody,
  voidInvoice,
  billingSuite,
  refundBody,
  refundOf,
} from '../support/billing-factory';
import { expectError, expectReplayOf, expectSuccess } from '../support/envelope';
import { type TestApp } from '../support/test-app';

function idempotencyKey(): Record<string, string> {
  return { 'X-Idempotency-Key': `key-${randomBytes(8).toString('hex')}` };
}

/** Its payments and credits wait unallocated (auto_apply false), for the allocations whose events it checks. */
const { createPayment, createTransaction } = byHand;

describe('Billing: events and idempotency', () => {
  let t: TestApp;
  let a: BillingTenant;

  billingSuite((suite) => ({ t, a } = suite), { listen: true });

  describe('GET /api/v1/events for billing records', () => {
    it('should require authentication', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId);
      const res = await request(t.http).get(`/api/v1/events?subject_id=${invoice.id}`);
      expectError(res, 401, 'authentication_required');
    });

    it('should write invoice.created for a draft and invoice.finalized when it is finalized', async () => {
      const draft = await createInvoice(t, a.token, a.subscriberId, 1000, { draft: true });
      expect(await eventTypesOf(t, a.token, draft.id)).toEqual(['invoice.created']);
      const finalized = await finalizeInvoice(t, a.token, draft.id);
      expectSuccess(finalized);
      const events = await eventsOf(t, a.token, draft.id);
      expect(events.map((event) => event.type)).toEqual(['invoice.created', 'invoice.finalized']);
      expect(events[0].data.object).toMatchObject({ id: draft.id, status: 'draft', total: 1000 });
      expect(events[1].data.object).toMatchObject({ id: draft.id, status: 'open' });
      expect(events[1].request_id).toBe(finalized.body.meta.request_id);
      expect(events[1].actor).toEqual({ type: 'token', id: a.tokenId });
    });

    it('should write invoice.created for an invoice created open', async () => {
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId));
      expectSuccess(res, 201);
      const events = await eventsOf(t, a.token, res.body.data.id);
      expect(events[0]).toMatchObject({
        type: 'invoice.created',
        subject_id: res.body.data.id,
        request_id: res.body.meta.request_id,
      });
      expect(events[0].data.object).toMatchObject({ id: res.body.data.id, number: res.body.data.number });
      expect(events.map((event) => event.type)).not.toContain('invoice.paid');
    });

    it('should write invoice.paid once, when the invoice is paid in full', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId, 1000);
      const payment = await createPayment(t, a.token, a.subscriberId, 1000);
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 600 }] }),
      );
      expect(await eventTypesOf(t, a.token, invoice.id)).not.toContain('invoice.paid');
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 400 }] }),
      );
      const paid = await eventsOf(t, a.token, invoice.id, 'invoice.paid');
      expect(paid).toHaveLength(1);
      expect(paid[0].data.object).toMatchObject({
        id: invoice.id,
        status: 'paid',
        amount_paid: 1000,
        amount_due: 0,
      });
    });

    it('should write invoice.voided when an invoice is voided, and nothing for a refused void', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId);
      const voided = await voidInvoice(t, a.token, invoice.id);
      expectSuccess(voided);
      expectError(await voidInvoice(t, a.token, invoice.id), 409, 'invalid_state_transition');
      const events = await eventsOf(t, a.token, invoice.id, 'invoice.voided');
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ subject_id: invoice.id, request_id: voided.body.meta.request_id });
      expect(events[0].data.object).toMatchObject({ id: invoice.id, status: 'void' });
    });

    it('should write transaction.created with the transaction', async () => {
      const res = await postTransaction(
        t,
        a.token,
        transactionBody(a.subscriberId, { amount: 321, auto_apply: false }),
      );
      expectSuccess(res, 201);
      const events = await eventsOf(t, a.token, res.body.data.id);
      expect(events.map((event) => event.type)).toEqual(['transaction.created']);
      expect(events[0]).toMatchObject({
        request_id: res.body.meta.request_id,
        actor: { type: 'token', id: a.tokenId },
      });
      // The answer adds what auto-apply allocated (nothing here) to the record the event holds.
      const { allocations, ...recorded } = res.body.data;
      expect(allocations).toEqual([]);
      expect(events[0].data.object).toEqual(recorded);
    });

    it('should write transaction.allocated for every successful allocation and none for a refused one', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId, 1000);
      const payment = await createPayment(t, a.token, a.subscriberId, 500);
      const first = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 200 }],
      });
      expectSuccess(first);
      expectSuccess(await allocate(t, a.token, payment.id, { target: 'balance', amount: 100 }));
      const refused = await allocate(t, a.token, payment.id, { target: 'balance', amount: 1000 });
      expectError(refused, 422, 'allocation_exceeds_unallocated', 'amount');

      const events = await eventsOf(t, a.token, payment.id, 'transaction.allocated');
      expect(events).toHaveLength(2);
      expect(events[0].request_id).toBe(first.body.meta.request_id);
      expect(events[0].data.object).toMatchObject({ id: payment.id, allocated_amount: 200 });
      expect(events[1].data.object).toMatchObject({
        id: payment.id,
        allocated_amount: 300,
        unallocated_amount: 200,
      });
      expect(await eventTypesOf(t, a.token, payment.id)).toEqual([
        'transaction.created',
        'transaction.allocated',
        'transaction.allocated',
      ]);
    });

    it('should write transaction.refunded on the payment and transaction.created on the refund', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 500);
      const refund = await createTransaction(t, a.token, a.subscriberId, refundOf(payment.id, 120));
      const refunded = await eventsOf(t, a.token, payment.id, 'transaction.refunded');
      expect(refunded).toHaveLength(1);
      expect(refunded[0].data.object).toMatchObject({
        id: payment.id,
        refunded_amount: 120,
        unallocated_amount: 380,
      });
      expect(JSON.stringify(refunded[0].data)).toContain(refund.id);
      expect(await eventTypesOf(t, a.token, refund.id)).toEqual(['transaction.created']);
    });

    it('should write no event for a refused refund', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 50);
      const res = await postTransaction(t, a.token, refundBody(a.subscriberId, payment.id, 60));
      expectError(res, 422, 'refund_exceeds_refundable', 'amount');
      expect(await eventTypesOf(t, a.token, payment.id)).toEqual(['transaction.created']);
    });

    it('should list billing events by type prefix', async () => {
      const fresh = await createBillingTenant(t);
      const invoice = await createInvoice(t, fresh.token, fresh.subscriberId, 100);
      const payment = await createPayment(t, fresh.token, fresh.subscriberId, 100);
      expectSuccess(await allocate(t, fresh.token, payment.id, { strategy: 'oldest_first' }));
      const invoiceEvents = await listIds(t, fresh.token, '/api/v1/events', { type: 'invoice.*' });
      const transactionEvents = await listIds(t, fresh.token, '/api/v1/events', { type: 'transaction.*' });
      expect(invoiceEvents.length).toBeGreaterThanOrEqual(2); // created and paid, at least
      expect(transactionEvents).toHaveLength(2); // created and allocated
      expect(await eventTypesOf(t, fresh.token, invoice.id)).toContain('invoice.paid');
    });
  });

  describe('POST /api/v1/transactions with X-Idempotency-Key', () => {
    it('should require authentication', async () => {
      const res = await request(t.http)
        .post('/api/v1/transactions')
        .set(idempotencyKey())
        .send(transactionBody(a.subscriberId));
      expectError(res, 401, 'authentication_required');
    });

    it('should record one transaction and replay the answer for the same key and body', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const key = idempotencyKey();
      const body = transactionBody(subscriberId, { amount: 777 });
      const first = await postTransaction(t, a.token, body, key);
      expectSuccess(first, 201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const second = await postTransaction(t, a.token, body, key);
      expect(second.status).toBe(201);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expectReplayOf(second, first);
      expect(await listIds(t, a.token, '/api/v1/transactions', { subscriber_id: subscriberId })).toEqual([
        first.body.data.id,
      ]);
      expect((await getBalance(t, a.token, subscriberId))?.balance).toBe(-777);
      expect(await eventTypesOf(t, a.token, first.body.data.id)).toEqual(['transaction.created']);
    });

    it('should answer 422 idempotency_key_reused for the same key with another body', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const key = idempotencyKey();
      expectSuccess(
        await postTransaction(t, a.token, transactionBody(subscriberId, { amount: 100 }), key),
        201,
      );
      const res = await postTransaction(t, a.token, transactionBody(subscriberId, { amount: 200 }), key);
      expectError(res, 422, 'idempotency_key_reused', 'X-Idempotency-Key');
      expect(await listIds(t, a.token, '/api/v1/transactions', { subscriber_id: subscriberId })).toHaveLength(
        1,
      );
    });

    it('should record exactly one transaction when the same request is sent ten times at once', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const key = idempotencyKey();
      const body = transactionBody(subscriberId, { amount: 55 });
      const results = await Promise.all(
        Array.from({ length: 10 }, () => postTransaction(t, a.token, body, key)),
      );
      for (const res of results) {
        expect([201, 409]).toContain(res.status);
        if (res.status === 409) {
          expect(res.body.error.code).toBe('idempotency_request_in_progress');
        }
      }
      const created = results.filter((res) => res.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((res) => res.body.data.id as string)).size).toBe(1);
      expect(await listIds(t, a.token, '/api/v1/transactions', { subscriber_id: subscriberId })).toHaveLength(
        1,
      );
      expect((await getBalance(t, a.token, subscriberId))?.balance).toBe(-55);
    });

    it('should record a second transaction for a new key', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const body = transactionBody(subscriberId, { amount: 10 });
      expectSuccess(await postTransaction(t, a.token, body, idempotencyKey()), 201);
      expectSuccess(await postTransaction(t, a.token, body, idempotencyKey()), 201);
      expect(await listIds(t, a.token, '/api/v1/transactions', { subscriber_id: subscriberId })).toHaveLength(
        2,
      );
    });
  });

  describe('POST /api/v1/transactions/{id}/allocate with X-Idempotency-Key', () => {
    it('should require authentication', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      const res = await request(t.http)
        .post(`/api/v1/transactions/${payment.id}/allocate`)
        .set(idempotencyKey())
        .send({ target: 'balance', amount: 10 });
      expectError(res, 401, 'authentication_required');
    });

    it('should not allocate twice when an allocation is replayed', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await createInvoice(t, a.token, subscriberId, 1000);
      const payment = await createPayment(t, a.token, subscriberId, 800);
      const key = idempotencyKey();
      const body = { allocations: [{ invoice_id: invoice.id, amount: 300 }] };
      const first = await allocate(t, a.token, payment.id, body, key);
      expectSuccess(first, 200);
      const replay = await allocate(t, a.token, payment.id, body, key);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expectReplayOf(replay, first);

      const after = await getTransaction(t, a.token, payment.id);
      expect(after).toMatchObject({ allocated_amount: 300, unallocated_amount: 500 });
      expect(after.allocations).toHaveLength(1);
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({ amount_paid: 300, amount_due: 700 });
      expect(await eventsOf(t, a.token, payment.id, 'transaction.allocated')).toHaveLength(1);
    });

    it('should not allocate twice when the same allocation is sent five times at once', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const payment = await createPayment(t, a.token, subscriberId, 800);
      const key = idempotencyKey();
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          allocate(t, a.token, payment.id, { target: 'balance', amount: 100 }, key),
        ),
      );
      for (const res of results) {
        expect([200, 409]).toContain(res.status);
      }
      expect((await getTransaction(t, a.token, payment.id)).allocated_amount).toBe(100);
    });

    it('should allocate again for the same body under a new key', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const payment = await createPayment(t, a.token, subscriberId, 800);
      const body = { target: 'balance', amount: 100 };
      expectSuccess(await allocate(t, a.token, payment.id, body, idempotencyKey()));
      expectSuccess(await allocate(t, a.token, payment.id, body, idempotencyKey()));
      expect((await getTransaction(t, a.token, payment.id)).allocated_amount).toBe(200);
    });
  });

  describe('POST /api/v1/invoices with X-Idempotency-Key', () => {
    it('should require authentication', async () => {
      const res = await request(t.http)
        .post('/api/v1/invoices')
        .set(idempotencyKey())
        .send(invoiceBody(a.subscriberId));
      expectError(res, 401, 'authentication_required');
    });

    it('should create one invoice and replay it for the same key and body', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const key = idempotencyKey();
      const body = invoiceBody(subscriberId);
      const first = await postInvoice(t, a.token, body, key);
      expectSuccess(first, 201);
      const replay = await postInvoice(t, a.token, body, key);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expectReplayOf(replay, first);
      expect(await listIds(t, a.token, '/api/v1/invoices', { subscriber_id: subscriberId })).toEqual([
        first.body.data.id,
      ]);
      expect((await getBalance(t, a.token, subscriberId))?.balance).toBe(1000);
    });
  });
});
