import request from 'supertest';
import { expectError, expectSuccess, expectNotFound, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  type Body,
  createBillingProfile,
  createSubscriber,
  createSubscriberInState,
  fullSubscriberBody,
  getSubscriber,
  listEvents,
  longString,
  SUBSCRIBER_KEYS,
  SUBSCRIBER_SCOPES,
  uniqueEmail,
} from '../support/subscriber-factory';
import {
  createTenantWithToken,
  type TenantWithToken,
  type TestApp,
  issueToken,
  tenantSuite,
} from '../support/test-app';

describe('Subscribers: update', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  const patch = (id: string, body: Body, token = tenant.token) =>
    request(t.http).patch(`/api/v1/subscribers/${id}`).set(bearer(token)).send(body);

  /** A subscriber with every optional field set, and its create body. */
  async function fullSubscriber(overrides: Body = {}) {
    const body = fullSubscriberBody(overrides);
    return { body, id: (await createSubscriber(t, tenant.token, body)).id };
  }

  tenantSuite([...SUBSCRIBER_SCOPES, 'billing:*'], (suite) => ({ t, tenant } = suite));

  describe('PATCH /api/v1/subscribers/{id}', () => {
    it('should require authentication', async () => {
      const { id } = await fullSubscriber();
      const res = await request(t.http).patch(`/api/v1/subscribers/${id}`).send({ full_name: 'Ada King' });
      expectError(res, 401, 'authentication_required');
    });

    it('should change name and contact fields and answer the full record', async () => {
      const { id } = await fullSubscriber();
      const before = await getSubscriber(t, tenant.token, id);
      const email = uniqueEmail();
      const res = await patch(id, { full_name: 'Ada King', email, phone: '+442071234567' });
      expect(successRecord(res, SUBSCRIBER_KEYS)).toEqual({
        ...before,
        full_name: 'Ada King',
        email,
        phone: '+442071234567',
        updated_at: expect.any(String),
      });
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
      expect(await getSubscriber(t, tenant.token, id)).toEqual(res.body.data);
    });

    it('should change only the address parts sent', async () => {
      const { id, body } = await fullSubscriber();
      const res = await patch(id, { address: { city: 'Shelbyville' } });
      expectSuccess(res);
      expect(res.body.data.address).toEqual({ ...(body.address as Body), city: 'Shelbyville' });
      expect((await getSubscriber(t, tenant.token, id)).address).toEqual(res.body.data.address);
    });

    it('should clear the address with null', async () => {
      const { id } = await fullSubscriber();
      expectSuccess(await patch(id, { address: null }));
      expect((await getSubscriber(t, tenant.token, id)).address).toBeNull();
    });

    it('should merge metadata, deleting the keys sent as null', async () => {
      const { id } = await fullSubscriber({ metadata: { plan: 'fiber-500', floor: 3, referral: 'door' } });
      const res = await patch(id, { metadata: { plan: 'fiber-1000', referral: null, vip: true } });
      expectSuccess(res);
      expect(res.body.data.metadata).toEqual({ plan: 'fiber-1000', floor: 3, vip: true });
      expect((await getSubscriber(t, tenant.token, id)).metadata).toEqual(res.body.data.metadata);
    });

    it('should clear all metadata with null', async () => {
      const { id } = await fullSubscriber();
      expectSuccess(await patch(id, { metadata: null }));
      expect((await getSubscriber(t, tenant.token, id)).metadata).toEqual({});
    });

    it('should clear the email with null and free it for another subscriber', async () => {
      const { id, body } = await fullSubscriber();
      const res = await patch(id, { email: null, phone: null });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ email: null, phone: null });
      expect((await createSubscriber(t, tenant.token, { email: body.email })).id).not.toBe(id);
    });

    it('should let a subscriber keep its own email in another case', async () => {
      const { id, body } = await fullSubscriber();
      const res = await patch(id, { email: (body.email as string).toUpperCase() });
      expectSuccess(res);
      expect(res.body.data.email).toBe((body.email as string).toUpperCase());
    });

    it('should set and clear the billing profile', async () => {
      const profile = await createBillingProfile(t, tenant.token);
      const { id } = await fullSubscriber();
      expect((await patch(id, { billing_profile_id: profile.id })).body.data.billing_profile_id).toBe(
        profile.id,
      );
      const cleared = await patch(id, { billing_profile_id: null });
      expectSuccess(cleared);
      expect(cleared.body.data.billing_profile_id).toBeNull();
    });

    it('should answer 404 not_found for the subscriber of another tenant', async () => {
      const { id } = await fullSubscriber();
      const other = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      expectNotFound(await patch(id, { full_name: 'Mallory' }, other.token));
      expect((await getSubscriber(t, tenant.token, id)).full_name).toBe('Ada Lovelace');
    });

    it('should answer 404 not_found for an id nobody issued', async () => {
      expectNotFound(await patch('sub_01JD3Z6W3R4T5Y6V7W8X9Y0ZAB', { full_name: 'Nobody' }));
    });

    it('should answer 403 insufficient_scope for a token with only subscribers:read', async () => {
      const { id } = await fullSubscriber();
      const reader = await issueToken(t, tenant.tenantId, ['subscribers:read']);
      expectError(await patch(id, { full_name: 'Ada King' }, reader.token), 403, 'insufficient_scope');
    });
  });

  describe('PATCH /api/v1/subscribers/{id}: refusals', () => {
    it('should require authentication', async () => {
      const { id } = await fullSubscriber();
      const res = await request(t.http).patch(`/api/v1/subscribers/${id}`).send({ status: 'active' });
      expectError(res, 401, 'authentication_required');
    });

    it('should answer 400 unknown_field for status, which changes only through /status', async () => {
      const { id } = await fullSubscriber();
      expectError(await patch(id, { status: 'active' }), 400, 'unknown_field', 'status');
      expect((await getSubscriber(t, tenant.token, id)).status).toBe('prospect');
    });

    it.each<[string, Body, string]>([
      ['an unknown field', { nickname: 'Ada' }, 'nickname'],
      ['an unknown address part', { address: { zip: '62701' } }, 'address.zip'],
      ['external_id, which is set once', { external_id: 'crm-new' }, 'external_id'],
    ])('should answer 400 unknown_field for %s', async (_label, body, field) => {
      const { id } = await fullSubscriber();
      expectError(await patch(id, body), 400, 'unknown_field', field);
    });

    it.each<[string, Body, string]>([
      ['an empty full_name', { full_name: '' }, 'full_name'],
      ['a full_name of 201 characters', { full_name: longString(201) }, 'full_name'],
      ['a numeric full_name', { full_name: 42 }, 'full_name'],
      ['a malformed email', { email: 'ada.example.net' }, 'email'],
      ['a phone not in E.164', { phone: '(415) 555-0123' }, 'phone'],
      ['an address that is a string', { address: 'Main Street' }, 'address'],
      ['a numeric address.city', { address: { city: 7 } }, 'address.city'],
      ['an address.city of 201 characters', { address: { city: longString(201) } }, 'address.city'],
      [
        'a metadata key of 41 characters',
        { metadata: { [longString(41, 'k')]: 1 } },
        `metadata.${longString(41, 'k')}`,
      ],
      ['a nested metadata value', { metadata: { plan: { speed: 1 } } }, 'metadata.plan'],
      ['a metadata value of 501 characters', { metadata: { note: longString(501) } }, 'metadata.note'],
    ])('should answer 422 validation_failed for %s and change nothing', async (_label, body, field) => {
      const { id } = await fullSubscriber();
      const before = await getSubscriber(t, tenant.token, id);
      expectError(await patch(id, body), 422, 'validation_failed', field);
      expect(await getSubscriber(t, tenant.token, id)).toEqual(before);
    });

    it('should answer 422 validation_failed when the merged metadata would hold more than 50 keys', async () => {
      const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
      const { id } = await fullSubscriber({ metadata: fifty });
      expectError(await patch(id, { metadata: { k50: 50 } }), 422, 'validation_failed', 'metadata');
      expectSuccess(await patch(id, { metadata: { k0: null, k50: 50 } }));
    });

    it('should answer 422 invalid_reference for a billing profile of another tenant', async () => {
      const other = await createTenantWithToken(t, ['billing:write']);
      const foreign = await createBillingProfile(t, other.token);
      const { id } = await fullSubscriber();
      expectError(
        await patch(id, { billing_profile_id: foreign.id }),
        422,
        'invalid_reference',
        'billing_profile_id',
      );
    });

    it('should answer 409 duplicate_subscriber for an email another subscriber holds, in any case', async () => {
      const first = await fullSubscriber();
      const { id } = await fullSubscriber();
      const res = await patch(id, { email: (first.body.email as string).toUpperCase() });
      expectError(res, 409, 'duplicate_subscriber', 'email');
      expect((await getSubscriber(t, tenant.token, id)).email).not.toBe(first.body.email);
    });

    it('should take an email only an archived subscriber holds', async () => {
      const email = uniqueEmail();
      await createSubscriberInState(t, tenant.token, 'archived', { email });
      const { id } = await fullSubscriber();
      expectSuccess(await patch(id, { email }));
    });

    it('should answer 409 invalid_state_transition for an archived subscriber', async () => {
      const archived = await createSubscriberInState(t, tenant.token, 'archived');
      expectError(
        await patch(archived.id, { full_name: 'Too late' }),
        409,
        'invalid_state_transition',
        'status',
      );
      expect((await getSubscriber(t, tenant.token, archived.id)).full_name).toBe('Ada Lovelace');
    });
  });

  describe('PATCH /api/v1/subscribers/{id}: events', () => {
    it('should require authentication', async () => {
      const { id } = await fullSubscriber();
      const res = await request(t.http).patch(`/api/v1/subscribers/${id}`).send({ full_name: 'Anonymous' });
      expectError(res, 401, 'authentication_required');
      const events = await listEvents(t, tenant.token, { subject_id: id });
      expect(events.map((event) => event.type)).toEqual(['subscriber.created']);
    });

    it('should write subscriber.updated naming the changed fields', async () => {
      const { id, body } = await fullSubscriber();
      const res = await patch(id, {
        full_name: 'Ada King',
        phone: body.phone,
        address: { city: 'Shelbyville' },
        metadata: { vip: true },
      });
      expectSuccess(res);
      const [event] = await listEvents(t, tenant.token, { subject_id: id, type: 'subscriber.updated' });
      expect(event).toMatchObject({ type: 'subscriber.updated', request_id: res.body.meta.request_id });
      expect((event.data.changed_fields as string[]).sort()).toEqual(['address', 'full_name', 'metadata']);
      expect(event.data.object).toEqual(res.body.data);
    });

    it('should write no event for a PATCH that changes nothing', async () => {
      const { id, body } = await fullSubscriber();
      expectSuccess(await patch(id, { full_name: body.full_name, email: body.email }));
      expectSuccess(await patch(id, {}));
      const events = await listEvents(t, tenant.token, { subject_id: id });
      expect(events.map((event) => event.type)).toEqual(['subscriber.created']);
    });

    it('should write no event for a refused PATCH', async () => {
      const first = await fullSubscriber();
      const { id } = await fullSubscriber();
      expectError(
        await patch(id, { full_name: 'Ada King', email: first.body.email }),
        409,
        'duplicate_subscriber',
        'email',
      );
      expect((await getSubscriber(t, tenant.token, id)).full_name).toBe('Ada Lovelace');
      const events = await listEvents(t, tenant.token, { subject_id: id });
      expect(events.map((event) => event.type)).toEqual(['subscriber.created']);
    });
  });
});
