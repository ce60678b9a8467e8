import request from 'supertest';
import {
  allocate,
  type BillingTenant,
  createPayment,
  getTransaction,
  newSubscriberId,
  postTransaction,
  transactionBody,
  billingSuite,
} from '../support/billing-factory';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer, sendJsonText } from '../support/factories';
import { createBillingProfile, createSubscriber, fullSubscriberBody } from '../support/subscriber-factory';
import { type TestApp } from '../support/test-app';

/**
 * Issue 27 items 4, 9 and 23: `null` for an optional field is refused unless the field is nullable (then it clears),
 * a body with several wrong fields lists them all in error.details, and a JSON number the parser would change
 * (1e309, 2^53 + 1) is refused naming where it is, instead of being stored as null or rounded.
 */
describe('Hardening: nulls, every failure, exact numbers', () => {
  let t: TestApp;
  let a: BillingTenant;

  billingSuite((suite) => ({ t, a } = suite));

  /** A JSON text sent as it is (supertest would re-serialise an object, and 1e309 is no JS number). */
  const raw = (method: 'post' | 'patch', path: string, text: string) =>
    sendJsonText(t.http, method, path, a.token, text);

  describe('null for an optional field that is not nullable', () => {
    it.each([
      ['target with an amount', { target: null, amount: 7 }, 'target'],
      ['strategy', { strategy: null }, 'strategy'],
      ['allocations', { allocations: null }, 'allocations'],
      ['amount with target balance', { target: 'balance', amount: null }, 'amount'],
    ])('should answer 422 for a null %s on allocate and allocate nothing', async (_label, body, field) => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      const res = await allocate(t, a.token, payment.id, body);
      expectError(res, 422, 'validation_failed', field);
      expect(res.body.error.message).toBe(`${field} must not be null`);
      expect(await getTransaction(t, a.token, payment.id)).toMatchObject({
        allocated_amount: 0,
        unallocated_amount: 100,
        allocations: [],
      });
    });

    it('should answer 422 for a refund whose refund_of is null', async () => {
      const res = await postTransaction(
        t,
        a.token,
        transactionBody(a.subscriberId, { kind: 'refund', refund_of: null }),
      );
      expectError(res, 422, 'validation_failed', 'refund_of');
      expect(res.body.error.message).toBe('refund_of must not be null');
    });

    it('should answer 422 for a null on a PATCH field that cannot be cleared', async () => {
      const subscriber = await createSubscriber(t, a.token);
      const res = await request(t.http)
        .patch(`/api/v1/subscribers/${subscriber.id}`)
        .set(bearer(a.token))
        .send({ full_name: null });
      expectError(res, 422, 'validation_failed', 'full_name');
      expect(res.body.error.message).toBe('full_name must not be null');
    });

    it('should answer 422 for a null optional field of a create', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(a.token))
        .send({ full_name: 'Ada', status: 'prospect', email: null });
      expectError(res, 422, 'validation_failed', 'email');
    });
  });

  describe('null for a required field', () => {
    it('should answer 400 missing_field', async () => {
      const res = await postTransaction(t, a.token, transactionBody(a.subscriberId, { amount: null }));
      expectError(res, 400, 'missing_field', 'amount');
    });

    it('should answer 400 missing_field inside an array item', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      const res = await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: null, amount: 5 }] });
      expectError(res, 400, 'missing_field', 'allocations.0.invoice_id');
    });
  });

  describe('null for a nullable PATCH field', () => {
    it('should clear a subscriber’s email, phone, billing profile, address and metadata', async () => {
      const profile = await createBillingProfile(t, a.token);
      const subscriber = await createSubscriber(
        t,
        a.token,
        fullSubscriberBody({ billing_profile_id: profile.id }),
      );
      const res = await request(t.http)
        .patch(`/api/v1/subscribers/${subscriber.id}`)
        .set(bearer(a.token))
        .send({ email: null, phone: null, billing_profile_id: null, address: null, metadata: null });
      expectSuccess(res, 200);
      expect(res.body.data).toMatchObject({
        email: null,
        phone: null,
        billing_profile_id: null,
        address: null,
        metadata: {},
      });
    });

    it('should clear one part of an address with null', async () => {
      const subscriber = await createSubscriber(t, a.token, {
        address: { line1: '1 Main St', city: 'Springfield' },
      });
      const res = await request(t.http)
        .patch(`/api/v1/subscribers/${subscriber.id}`)
        .set(bearer(a.token))
        .send({ address: { city: null } });
      expectSuccess(res, 200);
      expect(res.body.data.address).toMatchObject({ line1: '1 Main St', city: null });
    });

    it('should clear a billing profile’s auto_suspend_after_days and refuse a null name', async () => {
      const profile = await createBillingProfile(t, a.token, { auto_suspend_after_days: 30 });
      const path = `/api/v1/billing-profiles/${profile.id}`;
      const cleared = await request(t.http)
        .patch(path)
        .set(bearer(a.token))
        .send({ auto_suspend_after_days: null });
      expectSuccess(cleared, 200);
      expect(cleared.body.data.auto_suspend_after_days).toBeNull();
      expectError(
        await request(t.http).patch(path).set(bearer(a.token)).send({ name: null }),
        422,
        'validation_failed',
        'name',
      );
    });
  });

  describe('every failure in error.details', () => {
    it('should list every wrong field, the first being error’s own', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(a.token))
        .send({ full_name: 5, status: 'bogus', email: 'not-an-email', phone: null });
      expectError(res, 422, 'validation_failed', 'full_name');
      expect(res.body.error.details).toEqual([
        { code: 'validation_failed', field: 'full_name', message: res.body.error.message },
        { code: 'validation_failed', field: 'email', message: expect.any(String) as string },
        { code: 'validation_failed', field: 'phone', message: 'phone must not be null' },
        { code: 'validation_failed', field: 'status', message: expect.any(String) as string },
      ]);
    });

    it('should put an unknown field first, then a missing one, then wrong values', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(a.token))
        .send({ email: 'nope', colour: 'blue', status: 'active' });
      expectError(res, 400, 'unknown_field', 'colour');
      expect(res.body.error.details.map((d: { code: string; field: string }) => [d.code, d.field])).toEqual([
        ['unknown_field', 'colour'],
        ['missing_field', 'full_name'],
        ['validation_failed', 'email'],
      ]);
    });

    it('should carry one detail for a single failure, and none for an error that is not a validation one', async () => {
      const one = await postTransaction(t, a.token, transactionBody(a.subscriberId, { amount: 0 }));
      expectError(one, 422, 'validation_failed', 'amount');
      expect(one.body.error.details).toHaveLength(1);
      const notFound = await request(t.http)
        .get('/api/v1/transactions/txn_00000000000000000000000000')
        .set(bearer(a.token));
      expectError(notFound, 404, 'not_found');
    });
  });

  describe('numbers JSON cannot hold exactly', () => {
    let subscriberId: string;
    beforeAll(async () => {
      subscriberId = await newSubscriberId(t, a.token);
    });
    const metadataPatch = (number: string) =>
      raw('patch', `/api/v1/subscribers/${subscriberId}`, `{"metadata":{"plan":"fiber","limit":${number}}}`);

    it.each([
      ['1e309', 'beyond the range'],
      ['-1e309', 'beyond the range'],
      ['9007199254740993', '9007199254740991'],
      ['-9007199254740993', '9007199254740991'],
      ['1e-400', 'read as 0'],
    ])('should refuse metadata %s naming the key, and store nothing', async (number, says) => {
      const res = await metadataPatch(number);
      expectError(res, 422, 'validation_failed', 'metadata.limit');
      expect(res.body.error.message).toContain(says);
      const stored = await request(t.http).get(`/api/v1/subscribers/${subscriberId}`).set(bearer(a.token));
      expect(stored.body.data.metadata).not.toHaveProperty('limit');
    });

    it.each([
      ['1.5', 1.5],
      ['9007199254740991', 9007199254740991],
      ['-0.25e2', -25],
    ])('should store metadata %s as sent', async (number, value) => {
      const res = await metadataPatch(number);
      expectSuccess(res, 200);
      expect(res.body.data.metadata).toEqual({ plan: 'fiber', limit: value });
    });

    it('should refuse an amount of 1e309 with a 422, not a 500', async () => {
      const body = JSON.stringify(transactionBody(a.subscriberId)).replace('"amount":1000', '"amount":1e309');
      const res = await raw('post', '/api/v1/transactions', body);
      expectError(res, 422, 'validation_failed', 'amount');
    });

    it('should name an array item', async () => {
      const payment = await createPayment(t, a.token, a.subscriberId, 100);
      const res = await raw(
        'post',
        `/api/v1/transactions/${payment.id}/allocate`,
        '{"allocations":[{"invoice_id":"inv_x","amount":1},{"invoice_id":"inv_y","amount":9007199254740993}]}',
      );
      expectError(res, 422, 'validation_failed', 'allocations.1.amount');
    });

    it('should still answer 400 invalid_json for a text that is not JSON, whatever its numbers', async () => {
      expectError(await raw('post', '/api/v1/transactions', '{"amount":1e309'), 400, 'invalid_json');
    });
  });
});
