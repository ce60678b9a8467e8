import request from 'supertest';
import {
  allocate,
  type BillingTenant,
  createBillingTenant,
  createInvoice,
  createPayment,
  createTransaction,
  getBalance,
  getTransaction,
  listIds,
  newSubscriberId,
  postTransaction,
  TRANSACTION_ID,
  transactionBody,
  type TransactionRecord,
  uniqueExternalId,
  billingSuite,
  refundBody,
  refundOf,
} from '../support/billing-factory';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { ISO_MS } from '../support/subscriber-factory';
import { type TestApp } from '../support/test-app';
import { letTimePass } from '../support/wait-for';
import { itRequiresAuthentication, itRefusesBadListQueries, walkPages } from '../support/shared-cases';

describe('Billing: transactions', () => {
  let t: TestApp;
  let a: BillingTenant;
  let b: BillingTenant;

  billingSuite((suite) => ({ t, a, b } = suite), { tenants: 2 });

  describe('POST /api/v1/transactions', () => {
    itRequiresAuthentication(
      () => t,
      'post',
      '/api/v1/transactions',
      () => transactionBody(a.subscriberId),
    );

    it('should record a payment with nothing allocated, nothing refunded and all of it unallocated', async () => {
      const before = Date.now();
      const res = await postTransaction(t, a.token, transactionBody(a.subscriberId, { amount: 4999 }));
      expectSuccess(res, 201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(TRANSACTION_ID),
        subscriber_id: a.subscriberId,
        kind: 'payment',
        source: 'external',
        amount: 4999,
        currency: 'USD',
        external_id: null,
        reference: null,
        description: null,
        method: null,
        occurred_at: expect.stringMatching(ISO_MS),
        refund_of: null,
        metadata: {},
        allocated_amount: 0,
        unallocated_amount: 4999,
        refunded_amount: 0,
        auto_apply: true,
        created_at: expect.stringMatching(ISO_MS),
        // Auto-apply found nothing owed (the subscriber has no open invoice).
        allocations: [],
      });
      expect(Date.parse(res.body.data.occurred_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(res.body.data.occurred_at)).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it('should keep every optional field', async () => {
      const body = transactionBody(a.subscriberId, {
        kind: 'credit',
        source: 'adjustment',
        amount: 250,
        currency: 'EUR',
        external_id: uniqueExternalId(),
        reference: 'INV-42',
        description: 'Goodwill credit for the outage',
        method: 'manual',
        occurred_at: '2026-01-02T03:04:05.678Z',
        metadata: { ticket: 'TKT-7', approved: true, minutes: 90 },
      });
      const res = await postTransaction(t, a.token, body);
      expectSuccess(res, 201);
      const { subscriber_id, kind, source, amount, currency, external_id, reference, description, method } =
        body;
      expect(res.body.data).toMatchObject({
        subscriber_id,
        kind,
        source,
        amount,
        currency,
        external_id,
        reference,
        description,
        method,
        occurred_at: '2026-01-02T03:04:05.678Z',
        metadata: body.metadata,
        unallocated_amount: 250,
      });
      expect(await getTransaction(t, a.token, res.body.data.id)).toMatchObject({
        external_id,
        metadata: body.metadata,
        occurred_at: '2026-01-02T03:04:05.678Z',
      });
    });

    it.each([
      ['payment', 'external'],
      ['payment', 'adjustment'],
      ['credit', 'external'],
      ['credit', 'adjustment'],
      ['debit', 'external'],
      ['debit', 'adjustment'],
    ])('should record a %s from source %s', async (kind, source) => {
      const res = await postTransaction(
        t,
        a.token,
        transactionBody(a.subscriberId, { kind, source, amount: 10 }),
      );
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject({
        kind,
        source,
        amount: 10,
        allocated_amount: 0,
        refunded_amount: 0,
      });
    });

    it.each([0, -5, 1.5, '100', null])('should answer 422 on amount for %p', async (amount) => {
      const res = await postTransaction(t, a.token, transactionBody(a.subscriberId, { amount }));
      if (amount === null) {
        expectError(res, 400, 'missing_field', 'amount');
      } else {
        expectError(res, 422, 'validation_failed', 'amount');
      }
    });

    it.each(['subscriber_id', 'kind', 'source', 'amount', 'currency'])(
      'should answer 400 missing_field when %s is absent',
      async (field) => {
        const body = transactionBody(a.subscriberId);
        delete body[field];
        expectError(await postTransaction(t, a.token, body), 400, 'missing_field', field);
      },
    );

    it.each([
      ['kind', 'chargeback'],
      ['source', 'manual'],
      ['currency', 'usd'],
      ['currency', 'ZZZ'],
      ['occurred_at', 'yesterday'],
      ['occurred_at', '2026-02-30T00:00:00Z'],
      ['external_id', ''],
      ['metadata', 'plain'],
    ])('should answer 422 on %s for %p', async (field, value) => {
      const res = await postTransaction(t, a.token, transactionBody(a.subscriberId, { [field]: value }));
      expectError(res, 422, 'validation_failed', field);
    });

    it('should answer 400 unknown_field for a derived field sent by the client', async () => {
      const res = await postTransaction(t, a.token, transactionBody(a.subscriberId, { allocated_amount: 5 }));
      expectError(res, 400, 'unknown_field', 'allocated_amount');
    });

    it('should answer 422 invalid_reference on subscriber_id for an unknown subscriber', async () => {
      const res = await postTransaction(t, a.token, transactionBody('sub_00000000000000000000000000'));
      expectError(res, 422, 'invalid_reference', 'subscriber_id');
    });

    it("should answer 422 invalid_reference on subscriber_id for another tenant's subscriber", async () => {
      const res = await postTransaction(t, a.token, transactionBody(b.subscriberId));
      expectError(res, 422, 'invalid_reference', 'subscriber_id');
      expect(await listIds(t, b.token, '/api/v1/transactions', { subscriber_id: b.subscriberId })).toEqual(
        [],
      );
    });

    it('should answer 409 duplicate_transaction on external_id for a repeated external_id and keep one', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const external_id = uniqueExternalId();
      expectSuccess(
        await postTransaction(t, a.token, transactionBody(subscriberId, { external_id, amount: 100 })),
        201,
      );
      const res = await postTransaction(
        t,
        a.token,
        transactionBody(subscriberId, { external_id, amount: 200 }),
      );
      expectError(res, 409, 'duplicate_transaction', 'external_id');
      expect(await listIds(t, a.token, '/api/v1/transactions', { external_id })).toHaveLength(1);
      expect((await getBalance(t, a.token, subscriberId))?.balance).toBe(-100);
    });

    it('should treat external_id as unique per tenant only', async () => {
      const external_id = uniqueExternalId();
      expectSuccess(await postTransaction(t, a.token, transactionBody(a.subscriberId, { external_id })), 201);
      const res = await postTransaction(t, b.token, transactionBody(b.subscriberId, { external_id }));
      expectSuccess(res, 201);
      expect(res.body.data.external_id).toBe(external_id);
    });

    it('should allow many transactions without an external_id', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      await createPayment(t, a.token, subscriberId, 10);
      await createPayment(t, a.token, subscriberId, 10);
      expect(await listIds(t, a.token, '/api/v1/transactions', { subscriber_id: subscriberId })).toHaveLength(
        2,
      );
    });
  });

  describe('POST /api/v1/transactions: refunds', () => {
    it('should require authentication', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      const res = await request(t.http)
        .post('/api/v1/transactions')
        .send(refundBody(a.subscriberId, payment.id, 10));
      expectError(res, 401, 'authentication_required');
      expect((await getTransaction(t, a.token, payment.id)).refunded_amount).toBe(0);
    });

    it('should record a refund and draw it from the payment', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 1000);
      const res = await postTransaction(t, a.token, refundBody(a.subscriberId, payment.id, 300));
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject({
        id: expect.stringMatching(TRANSACTION_ID),
        kind: 'refund',
        amount: 300,
        refund_of: payment.id,
        allocated_amount: 0,
        refunded_amount: 0,
      });
      expect(await getTransaction(t, a.token, payment.id)).toMatchObject({
        amount: 1000,
        allocated_amount: 0,
        refunded_amount: 300,
        unallocated_amount: 700,
      });
    });

    it('should answer 400 missing_field on refund_of for a refund without it', async () => {
      const res = await postTransaction(
        t,
        a.token,
        transactionBody(a.subscriberId, { kind: 'refund', amount: 10 }),
      );
      expectError(res, 400, 'missing_field', 'refund_of');
    });

    it.each(['payment', 'credit', 'debit'])(
      'should answer 422 on refund_of for a %s naming it',
      async (kind) => {
        const payment = await createPayment(t, a.token, a.subscriberId, 100);
        const res = await postTransaction(
          t,
          a.token,
          transactionBody(a.subscriberId, { kind, refund_of: payment.id }),
        );
        expectError(res, 422, 'validation_failed', 'refund_of');
        expect((await getTransaction(t, a.token, payment.id)).refunded_amount).toBe(0);
      },
    );

    it('should answer 422 invalid_reference on refund_of for an unknown transaction', async () => {
      const res = await postTransaction(
        t,
        a.token,
        transactionBody(a.subscriberId, {
          kind: 'refund',
          amount: 10,
          refund_of: 'txn_00000000000000000000000000',
        }),
      );
      expectError(res, 422, 'invalid_reference', 'refund_of');
    });

    it("should answer 422 invalid_reference on refund_of for another tenant's payment", async () => {
      const payment = await createPayment(t, b.token, b.subscriberId, 100);
      const res = await postTransaction(t, a.token, refundBody(a.subscriberId, payment.id, 10));
      expectError(res, 422, 'invalid_reference', 'refund_of');
      expect((await getTransaction(t, b.token, payment.id)).refunded_amount).toBe(0);
    });

    it('should answer 422 invalid_reference on refund_of for a credit, which is not a payment', async () => {
      const credit = await createTransaction(t, a.token, a.subscriberId, { kind: 'credit', amount: 100 });
      const res = await postTransaction(t, a.token, refundBody(a.subscriberId, credit.id, 10));
      expectError(res, 422, 'invalid_reference', 'refund_of');
    });

    it("should answer 422 invalid_reference on refund_of for another subscriber's payment", async () => {
      const otherSubscriber = await newSubscriberId(t, a.token);
      const payment = await createPayment(t, a.token, otherSubscriber, 100);
      const res = await postTransaction(t, a.token, refundBody(a.subscriberId, payment.id, 10));
      expectError(res, 422, 'invalid_reference', 'refund_of');
    });

    it('should answer 422 currency_mismatch on currency for a refund in another currency', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100, { currency: 'EUR' });
      const res = await postTransaction(
        t,
        a.token,
        transactionBody(a.subscriberId, {
          kind: 'refund',
          amount: 10,
          currency: 'USD',
          refund_of: payment.id,
        }),
      );
      expectError(res, 422, 'currency_mismatch', 'currency');
      expect((await getTransaction(t, a.token, payment.id)).refunded_amount).toBe(0);
    });

    it('should answer 422 refund_exceeds_refundable on amount beyond the payment', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      const res = await postTransaction(t, a.token, refundBody(a.subscriberId, payment.id, 101));
      expectError(res, 422, 'refund_exceeds_refundable', 'amount');
      expect((await getTransaction(t, a.token, payment.id)).refunded_amount).toBe(0);
    });

    it('should limit refunds to what is neither allocated nor already refunded', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await createInvoice(t, a.token, subscriberId, 1000);
      // Not auto-applied: this test allocates part of it by hand.
      const payment = await createPayment(t, a.token, subscriberId, 100, { auto_apply: false });
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 60 }] }),
      );
      const refund = (amount: number) =>
        postTransaction(
          t,
          a.token,
          transactionBody(subscriberId, { kind: 'refund', amount, refund_of: payment.id }),
        );

      expectError(await refund(41), 422, 'refund_exceeds_refundable', 'amount');
      expectSuccess(await refund(25), 201);
      expectError(await refund(16), 422, 'refund_exceeds_refundable', 'amount');
      expectSuccess(await refund(15), 201);
      expectError(await refund(1), 422, 'refund_exceeds_refundable', 'amount');
      expect(await getTransaction(t, a.token, payment.id)).toMatchObject({
        allocated_amount: 60,
        refunded_amount: 40,
        unallocated_amount: 0,
      });
      // Nothing is left to allocate either.
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 1 }],
      });
      expectError(res, 422, 'allocation_exceeds_unallocated', 'allocations');
    });

    it('should answer 422 refund_exceeds_refundable for a refund of a fully allocated payment', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const payment = await createPayment(t, a.token, subscriberId, 100);
      expectSuccess(await allocate(t, a.token, payment.id, { target: 'balance', amount: 100 }));
      const res = await postTransaction(t, a.token, refundBody(subscriberId, payment.id, 1));
      expectError(res, 422, 'refund_exceeds_refundable', 'amount');
    });

    it('should answer 422 invalid_reference for a refund of a refund', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      const refund = await createTransaction(t, a.token, a.subscriberId, refundOf(payment.id, 50));
      const res = await postTransaction(t, a.token, refundBody(a.subscriberId, refund.id, 10));
      expectError(res, 422, 'invalid_reference', 'refund_of');
    });
  });

  describe('GET /api/v1/transactions/{transaction_id}', () => {
    it('should require authentication', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      expectError(
        await request(t.http).get(`/api/v1/transactions/${payment.id}`),
        401,
        'authentication_required',
      );
    });

    it('should return the transaction with allocated, unallocated, refunded and its allocations', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await createInvoice(t, a.token, subscriberId, 1000);
      const payment = await createPayment(t, a.token, subscriberId, 900, { auto_apply: false });
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 400 }] }),
      );
      expectSuccess(await allocate(t, a.token, payment.id, { target: 'balance', amount: 100 }));
      await createTransaction(t, a.token, subscriberId, refundOf(payment.id, 150));

      const res = await request(t.http).get(`/api/v1/transactions/${payment.id}`).set(bearer(a.token));
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        id: payment.id,
        amount: 900,
        allocated_amount: 500,
        unallocated_amount: 250,
        refunded_amount: 150,
      });
      expect(res.body.data.allocations).toEqual([
        expect.objectContaining({
          invoice_id: invoice.id,
          target: 'invoice',
          amount: 400,
          transaction_id: payment.id,
        }),
        expect.objectContaining({
          invoice_id: null,
          target: 'balance',
          amount: 100,
          transaction_id: payment.id,
        }),
      ]);
    });

    it('should return an empty list of allocations for a fresh transaction', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      expect((await getTransaction(t, a.token, payment.id)).allocations).toEqual([]);
    });

    it("should answer 404 not_found for another tenant's transaction", async () => {
      const payment = await createPayment(t, b.token, b.subscriberId, 100);
      const res = await request(t.http).get(`/api/v1/transactions/${payment.id}`).set(bearer(a.token));
      expectError(res, 404, 'not_found');
    });

    it('should answer 404 not_found for an unknown transaction', async () => {
      const res = await request(t.http)
        .get('/api/v1/transactions/txn_00000000000000000000000000')
        .set(bearer(a.token));
      expectError(res, 404, 'not_found');
    });
  });

  describe('GET /api/v1/transactions', () => {
    let list: BillingTenant;
    let other: string;
    let payment: TransactionRecord;
    let credit: TransactionRecord;
    let debit: TransactionRecord;
    let otherPayment: TransactionRecord;
    let refund: TransactionRecord;
    let all: string[];

    beforeAll(async () => {
      list = await createBillingTenant(t);
      other = await newSubscriberId(t, list.token);
      const sub = list.subscriberId;
      payment = await createPayment(t, list.token, sub, 1000, { occurred_at: '2026-01-01T00:00:00.000Z' });
      // 5 ms apart, so that their created_at differ and newest-first is the order they were made in.
      await letTimePass(5);
      credit = await createTransaction(t, list.token, sub, {
        kind: 'credit',
        source: 'adjustment',
        amount: 50,
        occurred_at: '2026-02-01T00:00:00.000Z',
      });
      await letTimePass(5);
      debit = await createTransaction(t, list.token, sub, {
        kind: 'debit',
        source: 'adjustment',
        amount: 70,
        occurred_at: '2026-03-01T00:00:00.000Z',
      });
      await letTimePass(5);
      otherPayment = await createPayment(t, list.token, other, 500, {
        external_id: uniqueExternalId(),
        occurred_at: '2026-04-01T00:00:00.000Z',
      });
      await letTimePass(5);
      refund = await createTransaction(t, list.token, sub, {
        kind: 'refund',
        amount: 100,
        refund_of: payment.id,
        occurred_at: '2026-05-01T00:00:00.000Z',
      });
      all = [refund, otherPayment, debit, credit, payment].map((txn) => txn.id);
    });

    itRequiresAuthentication(() => t, 'get', '/api/v1/transactions');

    it("should list the tenant's transactions newest first, with their current amounts", async () => {
      const res = await request(t.http).get('/api/v1/transactions').set(bearer(list.token));
      expectList(res);
      expect(res.body.data.map((txn: TransactionRecord) => txn.id)).toEqual(all);
      expect(res.body.meta.pagination).toEqual({ limit: 20, has_more: false, next_cursor: null });
      const listedPayment = (res.body.data as TransactionRecord[]).find((txn) => txn.id === payment.id);
      expect(listedPayment).toMatchObject({ refunded_amount: 100, unallocated_amount: 900 });
    });

    it('should filter by subscriber_id', async () => {
      expect(await listIds(t, list.token, '/api/v1/transactions', { subscriber_id: other })).toEqual([
        otherPayment.id,
      ]);
    });

    it.each([
      ['payment', () => [otherPayment.id, payment.id]],
      ['credit', () => [credit.id]],
      ['debit', () => [debit.id]],
      ['refund', () => [refund.id]],
    ])('should filter by kind %s', async (kind, expected) => {
      expect(await listIds(t, list.token, '/api/v1/transactions', { kind })).toEqual(expected());
    });

    it('should filter by source', async () => {
      expect(await listIds(t, list.token, '/api/v1/transactions', { source: 'adjustment' })).toEqual([
        debit.id,
        credit.id,
      ]);
      expect(await listIds(t, list.token, '/api/v1/transactions', { source: 'external' })).toEqual([
        refund.id,
        otherPayment.id,
        payment.id,
      ]);
    });

    it('should filter by external_id', async () => {
      expect(
        await listIds(t, list.token, '/api/v1/transactions', { external_id: otherPayment.external_id! }),
      ).toEqual([otherPayment.id]);
      expect(await listIds(t, list.token, '/api/v1/transactions', { external_id: 'nobody' })).toEqual([]);
    });

    it('should filter by the occurred range, occurred_gte inclusive and occurred_lt exclusive', async () => {
      const ids = await listIds(t, list.token, '/api/v1/transactions', {
        occurred_gte: '2026-02-01T00:00:00.000Z',
        occurred_lt: '2026-04-01T00:00:00.000Z',
      });
      expect(ids).toEqual([debit.id, credit.id]);
      expect(
        await listIds(t, list.token, '/api/v1/transactions', { occurred_gte: '2026-04-01T00:00:00.000Z' }),
      ).toEqual([refund.id, otherPayment.id]);
      expect(
        await listIds(t, list.token, '/api/v1/transactions', { occurred_lt: '2026-01-01T00:00:00.001Z' }),
      ).toEqual([payment.id]);
    });

    it('should filter by the created range, created_gte inclusive and created_lt exclusive', async () => {
      expect(
        await listIds(t, list.token, '/api/v1/transactions', {
          created_gte: credit.created_at,
          created_lt: otherPayment.created_at,
        }),
      ).toEqual([debit.id, credit.id]);
      expect(
        await listIds(t, list.token, '/api/v1/transactions', { created_gte: refund.created_at }),
      ).toEqual([refund.id]);
    });

    it('should combine filters', async () => {
      const ids = await listIds(t, list.token, '/api/v1/transactions', {
        subscriber_id: list.subscriberId,
        kind: 'payment',
        occurred_lt: '2026-06-01T00:00:00.000Z',
      });
      expect(ids).toEqual([payment.id]);
    });

    it('should page through every transaction once with limit and starting_after', async () => {
      expect(await walkPages(t, list.token, '/api/v1/transactions', 2)).toEqual({ ids: all, pages: 3 });
    });

    itRefusesBadListQueries(
      () => t,
      () => list.token,
      '/api/v1/transactions',
      [
        ['kind', 'chargeback'],
        ['source', 'bank'],
        ['occurred_gte', 'last week'],
        ['occurred_lt', '2026-13-01T00:00:00Z'],
        ['created_lt', 'soon'],
        ['limit', '1000'],
        ['amount', '5'],
      ],
      'abc',
    );
  });
});
