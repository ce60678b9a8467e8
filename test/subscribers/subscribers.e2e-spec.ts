import { expectError, expectSuccess, successRecord } from '../support/envelope';
import {
  type Body,
  createBillingProfile,
  CREATED_SUBSCRIBER_KEYS,
  createSubscriber,
  fullSubscriberBody,
  getSubscriber,
  ISO_MS,
  listEvents,
  listSubscriberIds,
  longString,
  postSubscriber,
  SUBSCRIBER_ID,
  SUBSCRIBER_SCOPES,
  subscriberBody,
  createdEvent,
} from '../support/subscriber-factory';
import {
  createTenantWithToken,
  type TenantWithToken,
  type TestApp,
  issueToken,
  tenantSuite,
} from '../support/test-app';
import { itRequiresAuthentication, itAnswersInvalidJson } from '../support/shared-cases';

/** Metadata with `count` keys k0, k1, …. */
function metadataWithKeys(count: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v']));
}

describe('Subscribers: create', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  tenantSuite(SUBSCRIBER_SCOPES, (suite) => ({ t, tenant } = suite));

  describe('POST /api/v1/subscribers', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/subscribers', subscriberBody());

    it('should answer 201 with exactly the six fields the README shows, omitting contact, address and metadata', async () => {
      const body = fullSubscriberBody({ status: 'active' });
      const res = await postSubscriber(t, tenant.token, body);
      expect(successRecord(res, CREATED_SUBSCRIBER_KEYS, 201)).toEqual({
        id: expect.stringMatching(SUBSCRIBER_ID),
        external_id: body.external_id,
        full_name: 'Ada Lovelace',
        status: 'active',
        billing_profile_id: null,
        created_at: expect.stringMatching(ISO_MS),
      });
      expect(Math.abs(Date.parse(res.body.data.created_at) - Date.now())).toBeLessThan(60_000);
    });

    it('should answer null for the optional values that were not sent', async () => {
      const res = await postSubscriber(t, tenant.token, { full_name: 'Grace Hopper', status: 'prospect' });
      expectSuccess(res, 201);
      expect(Object.keys(res.body.data).sort()).toEqual(CREATED_SUBSCRIBER_KEYS);
      expect(res.body.data).toMatchObject({ external_id: null, billing_profile_id: null });
    });

    it.each(['prospect', 'pending', 'active', 'suspended'])(
      'should create a subscriber in status %s',
      async (status) => {
        const res = await postSubscriber(t, tenant.token, subscriberBody({ status }));
        expectSuccess(res, 201);
        expect(res.body.data.status).toBe(status);
        expect((await getSubscriber(t, tenant.token, res.body.data.id)).status).toBe(status);
      },
    );

    it('should keep email, phone, address and metadata for reads', async () => {
      const body = fullSubscriberBody();
      const created = await createSubscriber(t, tenant.token, body);
      const record = await getSubscriber(t, tenant.token, created.id);
      expect(record).toMatchObject({
        email: body.email,
        phone: body.phone,
        address: body.address,
        metadata: body.metadata,
        suspension_reason: null,
      });
    });

    it('should link a billing profile of the tenant and echo its id', async () => {
      const billing = await createTenantWithToken(t, ['subscribers:*', 'billing:*']);
      const profile = await createBillingProfile(t, billing.token);
      const res = await postSubscriber(t, billing.token, subscriberBody({ billing_profile_id: profile.id }));
      expectSuccess(res, 201);
      expect(res.body.data.billing_profile_id).toBe(profile.id);
    });

    it('should accept the largest values the limits allow', async () => {
      const metadata = { ...metadataWithKeys(49), [longString(40, 'k')]: longString(500) };
      const res = await postSubscriber(
        t,
        tenant.token,
        subscriberBody({ full_name: longString(200), metadata }),
      );
      expectSuccess(res, 201);
      expect((await getSubscriber(t, tenant.token, res.body.data.id)).metadata).toEqual(metadata);
    });

    it('should answer 403 insufficient_scope for a token with only subscribers:read', async () => {
      const reader = await issueToken(t, tenant.tenantId, ['subscribers:read']);
      expectError(await postSubscriber(t, reader.token, subscriberBody()), 403, 'insufficient_scope');
    });

    it('should write subscriber.created with the full record and the request id', async () => {
      const body = fullSubscriberBody();
      const res = await postSubscriber(t, tenant.token, body);
      const event = await createdEvent(t, tenant.token, res, 'subscriber.created');
      expect(event).toMatchObject({ actor: { type: 'token', id: tenant.tokenId } });
      expect(event.data.object).toEqual(await getSubscriber(t, tenant.token, res.body.data.id));
    });
  });

  describe('POST /api/v1/subscribers: malformed requests (400)', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/subscribers', {});

    it.each(['full_name', 'status'])('should answer missing_field when %s is absent', async (field) => {
      const body = subscriberBody();
      delete body[field];
      expectError(await postSubscriber(t, tenant.token, body), 400, 'missing_field', field);
    });

    it.each(['full_name', 'status'])('should answer missing_field when %s is null', async (field) => {
      const res = await postSubscriber(t, tenant.token, subscriberBody({ [field]: null }));
      expectError(res, 400, 'missing_field', field);
    });

    itAnswersInvalidJson(
      () => t,
      () => tenant.token,
      'post',
      '/api/v1/subscribers',
      {
        'a body that does not parse': '{"full_name": "Ada", "status": ',
        'a JSON array body': JSON.stringify([subscriberBody()]),
      },
    );

    it('should answer unknown_field for a top-level field the endpoint does not accept', async () => {
      const res = await postSubscriber(t, tenant.token, subscriberBody({ nickname: 'Ada' }));
      expectError(res, 400, 'unknown_field', 'nickname');
    });

    it('should answer unknown_field with the dotted path for an unknown address part', async () => {
      const res = await postSubscriber(t, tenant.token, subscriberBody({ address: { city: 'X', zip: '1' } }));
      expectError(res, 400, 'unknown_field', 'address.zip');
    });
  });

  describe('POST /api/v1/subscribers: validation (422)', () => {
    let other: TenantWithToken;

    beforeAll(async () => {
      other = await createTenantWithToken(t, ['billing:write']);
    });

    itRequiresAuthentication(() => t, 'post', '/api/v1/subscribers', subscriberBody({ full_name: '' }));

    it.each<[string, Body, string]>([
      ['full_name of 201 characters', { full_name: longString(201) }, 'full_name'],
      ['an empty full_name', { full_name: '' }, 'full_name'],
      ['a numeric full_name', { full_name: 42 }, 'full_name'],
      ['an empty external_id', { external_id: '' }, 'external_id'],
      ['an external_id of 201 characters', { external_id: longString(201) }, 'external_id'],
      ['a malformed email', { email: 'not-an-email' }, 'email'],
      ['an email without a domain', { email: 'ada@' }, 'email'],
      ['a phone with dashes', { phone: '415-555-0123' }, 'phone'],
      ['a phone without the plus', { phone: '14155550123' }, 'phone'],
      ['a phone with country code 0', { phone: '+04155550123' }, 'phone'],
      ['a phone of 16 digits', { phone: '+1234567890123456' }, 'phone'],
      ['status archived, which is not creatable', { status: 'archived' }, 'status'],
      ['status cancelled, which is not creatable', { status: 'cancelled' }, 'status'],
      ['an unknown status', { status: 'bogus' }, 'status'],
      ['an address that is a string', { address: '12 Fibre Lane' }, 'address'],
      ['an address that is an array', { address: ['12 Fibre Lane'] }, 'address'],
      ['an address.city of 201 characters', { address: { city: longString(201) } }, 'address.city'],
      ['a numeric address.city', { address: { city: 42 } }, 'address.city'],
      ['an address.line1 of 201 characters', { address: { line1: longString(201) } }, 'address.line1'],
      ['metadata with 51 keys', { metadata: metadataWithKeys(51) }, 'metadata'],
      [
        'a metadata key of 41 characters',
        { metadata: { [longString(41, 'k')]: 'v' } },
        `metadata.${longString(41, 'k')}`,
      ],
      ['a metadata value of 501 characters', { metadata: { note: longString(501) } }, 'metadata.note'],
      ['a nested metadata object', { metadata: { plan: { speed: 500 } } }, 'metadata.plan'],
      ['an array metadata value', { metadata: { tags: ['a'] } }, 'metadata.tags'],
      ['metadata that is an array', { metadata: ['a'] }, 'metadata'],
    ])('should answer validation_failed for %s', async (_label, overrides, field) => {
      const res = await postSubscriber(t, tenant.token, subscriberBody(overrides));
      expectError(res, 422, 'validation_failed', field);
    });

    it('should answer invalid_reference for a billing profile that does not exist', async () => {
      const res = await postSubscriber(
        t,
        tenant.token,
        subscriberBody({ billing_profile_id: 'bp_01JD3Z6W3R4T5Y6V7W8X9Y0ZAB' }),
      );
      expectError(res, 422, 'invalid_reference', 'billing_profile_id');
    });

    it('should answer invalid_reference for a billing profile of another tenant', async () => {
      const foreign = await createBillingProfile(t, other.token);
      const res = await postSubscriber(t, tenant.token, subscriberBody({ billing_profile_id: foreign.id }));
      expectError(res, 422, 'invalid_reference', 'billing_profile_id');
    });

    it('should create nothing and write no event when validation fails', async () => {
      const fresh = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      const external_id = 'crm-refused';
      expectError(
        await postSubscriber(t, fresh.token, subscriberBody({ external_id, email: 'x@' })),
        422,
        'validation_failed',
        'email',
      );
      expectError(
        await postSubscriber(
          t,
          fresh.token,
          subscriberBody({ external_id, billing_profile_id: 'bp_missing' }),
        ),
        422,
        'invalid_reference',
        'billing_profile_id',
      );
      expect(await listSubscriberIds(t, fresh.token)).toEqual([]);
      expect(await listEvents(t, fresh.token, { type: 'subscriber.*' })).toEqual([]);
    });
  });
});
