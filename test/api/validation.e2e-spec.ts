import request, { type Response } from 'supertest';
import {
  allocate,
  createInvoice,
  createPayment,
  invoiceBody,
  postInvoice,
  postTransaction,
  transactionBody,
  uniqueExternalId,
  type BillingTenant,
  billingSuite,
} from '../support/billing-factory';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  type Body,
  createBillingProfile,
  createSubscriber,
  getSubscriber,
  postBillingProfile,
  postSubscriber,
  subscriberBody,
  uniqueEmail,
  uniqueRef,
} from '../support/subscriber-factory';
import { type TestApp } from '../support/test-app';

/** The error a request answered, as one comparable value. */
function errorOf(res: Response) {
  return {
    status: res.status,
    code: res.body.error?.code,
    field: res.body.error?.field,
    message: res.body.error?.message,
  };
}

/**
 * Issue #11 item 13: names and other required text may not be blank; identifiers, emails, phones and names are trimmed
 * before they are validated and stored; a wrong type answers a type message; `error.field` is the dotted path of the
 * offending value, inside metadata, nested objects and arrays too.
 */
describe('Hardening: validation of text, types and paths', () => {
  let t: TestApp;
  let billing: BillingTenant;

  const patchSubscriber = (id: string, body: Body) =>
    request(t.http).patch(`/api/v1/subscribers/${id}`).set(bearer(billing.token)).send(body);
  const patchProfile = (id: string, body: Body) =>
    request(t.http).patch(`/api/v1/billing-profiles/${id}`).set(bearer(billing.token)).send(body);

  billingSuite((suite) => ({ t, a: billing } = suite));

  describe('blank required text', () => {
    it.each(['   ', '\t\n', ''])('should refuse full_name %j on POST /subscribers as 422', async (blank) => {
      const res = await postSubscriber(t, billing.token, subscriberBody({ full_name: blank }));
      expect(errorOf(res)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'full_name',
        message: 'full_name must not be blank',
      });
      expectError(res, 422, 'validation_failed', 'full_name');
    });

    it('should refuse a blank full_name on PATCH /subscribers/{id} as 422', async () => {
      const { id } = await createSubscriber(t, billing.token);
      const res = await patchSubscriber(id, { full_name: '   ' });
      expectError(res, 422, 'validation_failed', 'full_name');
      expect(res.body.error.message).toBe('full_name must not be blank');
      expect((await getSubscriber(t, billing.token, id)).full_name).toBe('Ada Lovelace');
    });

    it('should refuse a blank billing profile name on create and on PATCH as 422', async () => {
      const created = await postBillingProfile(t, billing.token, {
        name: '  ',
        currency: 'USD',
        billing_day: 1,
      });
      expect(errorOf(created)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'name',
        message: 'name must not be blank',
      });
      const profile = await createBillingProfile(t, billing.token);
      const patched = await patchProfile(profile.id, { name: ' \t ' });
      expect(errorOf(patched)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'name',
        message: 'name must not be blank',
      });
    });

    it('should refuse a blank invoice line description with its dotted path', async () => {
      const res = await postInvoice(
        t,
        billing.token,
        invoiceBody(billing.subscriberId, {
          lines: [
            { description: 'Fiber', quantity: 1, unit_amount: 100 },
            { description: '   ', quantity: 1, unit_amount: 100 },
          ],
        }),
      );
      expect(errorOf(res)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'lines.1.description',
        message: 'lines.1.description must not be blank',
      });
    });

    it('should refuse a blank token name and a blank tenant name as 422', async () => {
      const token = await request(t.http)
        .post('/api/v1/tokens')
        .set(bearer(t.adminToken))
        .send({ name: '   ', scopes: ['billing:read'] });
      expectError(token, 422, 'validation_failed', 'name');
      expect(token.body.error.message).toBe('name must not be blank');
      const tenant = await request(t.http)
        .post('/api/v1/tenants')
        .set(bearer(t.adminToken))
        .send({ slug: uniqueRef('blank'), name: ' ' });
      expectError(tenant, 422, 'validation_failed', 'name');
    });

    it('should keep answering 400 missing_field for a null required field', async () => {
      const res = await postSubscriber(t, billing.token, subscriberBody({ full_name: null }));
      expectError(res, 400, 'missing_field', 'full_name');
    });
  });

  describe('trimming', () => {
    it('should store and echo a trimmed external_id, full_name, email and phone', async () => {
      const externalId = uniqueRef();
      const email = uniqueEmail();
      const res = await postSubscriber(t, billing.token, {
        external_id: `  ${externalId} `,
        full_name: ' Ada Lovelace\t',
        email: ` ${email}  `,
        phone: ' +14155550123 ',
        status: 'prospect',
      });
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject({ external_id: externalId, full_name: 'Ada Lovelace' });
      const stored = await getSubscriber(t, billing.token, res.body.data.id);
      expect(stored).toMatchObject({
        external_id: externalId,
        full_name: 'Ada Lovelace',
        email,
        phone: '+14155550123',
      });
    });

    it('should answer 409 duplicate_subscriber for "x1 " when "x1" exists', async () => {
      const externalId = uniqueRef();
      await createSubscriber(t, billing.token, { external_id: externalId });
      const res = await postSubscriber(t, billing.token, subscriberBody({ external_id: `${externalId} ` }));
      expectError(res, 409, 'duplicate_subscriber', 'external_id');
    });

    it('should answer 409 duplicate_subscriber for an email padded with spaces, on create and on PATCH', async () => {
      const email = uniqueEmail();
      await createSubscriber(t, billing.token, { email });
      const created = await postSubscriber(t, billing.token, subscriberBody({ email: ` ${email} ` }));
      expectError(created, 409, 'duplicate_subscriber', 'email');
      const { id } = await createSubscriber(t, billing.token);
      expectError(await patchSubscriber(id, { email: `${email}  ` }), 409, 'duplicate_subscriber', 'email');
    });

    it('should refuse an external_id of only spaces as 422', async () => {
      const res = await postSubscriber(t, billing.token, subscriberBody({ external_id: '   ' }));
      expectError(res, 422, 'validation_failed', 'external_id');
      expect(res.body.error.message).toBe('external_id must not be blank');
    });

    it('should store a trimmed full_name on PATCH', async () => {
      const { id } = await createSubscriber(t, billing.token);
      const res = await patchSubscriber(id, { full_name: '  Ada King ' });
      expectSuccess(res);
      expect(res.body.data.full_name).toBe('Ada King');
    });

    it('should answer 409 duplicate_transaction for a transaction external_id padded with a space', async () => {
      const externalId = uniqueExternalId();
      await createPayment(t, billing.token, billing.subscriberId, 100, { external_id: externalId });
      const res = await postTransaction(
        t,
        billing.token,
        transactionBody(billing.subscriberId, { external_id: ` ${externalId}` }),
      );
      expectError(res, 409, 'duplicate_transaction', 'external_id');
    });

    it('should keep free text such as a transaction description and metadata values verbatim', async () => {
      const res = await postTransaction(
        t,
        billing.token,
        transactionBody(billing.subscriberId, { description: '  November  ', metadata: { note: ' a b ' } }),
      );
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject({ description: '  November  ', metadata: { note: ' a b ' } });
    });
  });

  describe('a wrong type answers a type message', () => {
    it.each([
      ['full_name', 5, 'full_name must be a string'],
      ['full_name', ['Ada'], 'full_name must be a string'],
      ['external_id', 7, 'external_id must be a string'],
      ['email', true, 'email must be a string'],
      ['phone', 14155550123, 'phone must be a string'],
    ])('should answer POST /subscribers {%s: %j} with %j', async (field, value, message) => {
      const res = await postSubscriber(t, billing.token, subscriberBody({ [field]: value }));
      expect(errorOf(res)).toEqual({ status: 422, code: 'validation_failed', field, message });
    });

    it('should answer a type message for full_name: 5 on PATCH /subscribers/{id}', async () => {
      const { id } = await createSubscriber(t, billing.token);
      expect(errorOf(await patchSubscriber(id, { full_name: 5 }))).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'full_name',
        message: 'full_name must be a string',
      });
    });

    it('should answer type messages on billing profiles and transactions', async () => {
      expect(
        errorOf(await postBillingProfile(t, billing.token, { name: 5, currency: 'USD', billing_day: 1 })),
      ).toEqual({ status: 422, code: 'validation_failed', field: 'name', message: 'name must be a string' });
      expect(
        errorOf(
          await postBillingProfile(t, billing.token, { name: 'Monthly', currency: 'USD', billing_day: '0' }),
        ),
      ).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'billing_day',
        message: 'billing_day must be an integer number',
      });
      expect(
        errorOf(
          await postTransaction(t, billing.token, transactionBody(billing.subscriberId, { amount: '0' })),
        ),
      ).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'amount',
        message: 'amount must be an integer number',
      });
      expect(
        errorOf(
          await postTransaction(t, billing.token, transactionBody(billing.subscriberId, { external_id: 12 })),
        ),
      ).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'external_id',
        message: 'external_id must be a string',
      });
    });
  });

  describe('error.field is the dotted path', () => {
    it('should name metadata.plan for a metadata value that is too long or not flat', async () => {
      const long = await postSubscriber(
        t,
        billing.token,
        subscriberBody({ metadata: { plan: 'x'.repeat(501) } }),
      );
      expect(errorOf(long)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'metadata.plan',
        message: 'metadata.plan may be at most 500 characters',
      });
      const nested = await postSubscriber(
        t,
        billing.token,
        subscriberBody({ metadata: { ok: 1, plan: { a: 1 } } }),
      );
      expect(errorOf(nested)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'metadata.plan',
        message: 'metadata.plan must be a string, number, boolean or null',
      });
    });

    it('should name metadata itself when metadata is not an object or has too many keys', async () => {
      expectError(
        await postSubscriber(t, billing.token, subscriberBody({ metadata: 'x' })),
        422,
        'validation_failed',
        'metadata',
      );
      const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
      expectError(
        await postSubscriber(t, billing.token, subscriberBody({ metadata: many })),
        422,
        'validation_failed',
        'metadata',
      );
    });

    it('should name metadata.<key> on PATCH /subscribers/{id}', async () => {
      const { id } = await createSubscriber(t, billing.token);
      const res = await patchSubscriber(id, { metadata: { plan: ['fiber'] } });
      expect(errorOf(res)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'metadata.plan',
        message: 'metadata.plan must be a string, number, boolean or null',
      });
    });

    it('should name metadata.<key> on POST /transactions', async () => {
      const res = await postTransaction(
        t,
        billing.token,
        transactionBody(billing.subscriberId, { metadata: { gateway: { name: 'stripe' } } }),
      );
      expectError(res, 422, 'validation_failed', 'metadata.gateway');
    });

    it('should name address.city, with the path in the message, on create and on PATCH', async () => {
      const created = await postSubscriber(t, billing.token, subscriberBody({ address: { city: 5 } }));
      expect(errorOf(created)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'address.city',
        message: 'address.city must be a string',
      });
      const { id } = await createSubscriber(t, billing.token);
      const patched = await patchSubscriber(id, { address: { line1: 'x'.repeat(201) } });
      expectError(patched, 422, 'validation_failed', 'address.line1');
      expect(patched.body.error.message).toMatch(/^address\.line1 /);
    });

    it('should name allocations.0.amount for a bad allocation item', async () => {
      const invoice = await createInvoice(t, billing.token, billing.subscriberId, 1000);
      const payment = await createPayment(t, billing.token, billing.subscriberId, 1000);
      const res = await allocate(t, billing.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 0 }],
      });
      expect(errorOf(res)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'allocations.0.amount',
        message: 'allocations.0.amount must not be less than 1',
      });
      const typed = await allocate(t, billing.token, payment.id, {
        allocations: [
          { invoice_id: invoice.id, amount: 500 },
          { invoice_id: invoice.id, amount: 'x' },
        ],
      });
      expect(errorOf(typed)).toEqual({
        status: 422,
        code: 'validation_failed',
        field: 'allocations.1.amount',
        message: 'allocations.1.amount must be an integer number',
      });
    });
  });
});
