import request from 'supertest';
import {
  expectError,
  expectList,
  expectReplayOf,
  expectSuccess,
  expectNotFound,
  successRecord,
} from '../support/envelope';
import { bearer } from '../support/factories';
import {
  type Body,
  BILLING_PROFILE_ID,
  BILLING_PROFILE_KEYS,
  type BillingProfile,
  billingProfileBody,
  createBillingProfile,
  ISO_MS,
  listEvents,
  longString,
  postBillingProfile,
  uniqueRef,
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

const BILLING_SCOPES = ['billing:read', 'billing:write', 'events:read'];

describe('Billing profiles', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  const patch = (id: string, body: Body, token = tenant.token) =>
    request(t.http).patch(`/api/v1/billing-profiles/${id}`).set(bearer(token)).send(body);
  const get = (path: string, token = tenant.token) => request(t.http).get(path).set(bearer(token));

  tenantSuite(BILLING_SCOPES, (suite) => ({ t, tenant } = suite));

  describe('POST /api/v1/billing-profiles', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/billing-profiles', billingProfileBody());

    it('should answer 201 with the profile, payment terms defaulting to 14 days and no auto-suspension', async () => {
      const res = await postBillingProfile(
        t,
        tenant.token,
        billingProfileBody({ currency: 'EUR', billing_day: 28 }),
      );
      expect(successRecord(res, BILLING_PROFILE_KEYS, 201)).toEqual({
        id: expect.stringMatching(BILLING_PROFILE_ID),
        name: 'Residential monthly',
        currency: 'EUR',
        billing_day: 28,
        payment_terms_days: 14,
        auto_suspend_after_days: null,
        is_default: false,
        auto_apply: true,
        reminder_offsets: [],
        late_fee: null,
        reconnection_fee: null,
        fees_before_restoration: false,
        tax_rate_ids: [],
        created_at: expect.stringMatching(ISO_MS),
        updated_at: res.body.data.created_at,
      });
    });

    it.each<[string, Body]>([
      ['the smallest values', { billing_day: 1, payment_terms_days: 0, auto_suspend_after_days: 1 }],
      ['the largest values', { billing_day: 28, payment_terms_days: 365, auto_suspend_after_days: 365 }],
      ['auto_suspend_after_days null', { auto_suspend_after_days: null }],
    ])('should accept %s', async (_label, overrides) => {
      const res = await postBillingProfile(t, tenant.token, billingProfileBody(overrides));
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject(overrides);
    });

    it.each(['name', 'currency', 'billing_day'])(
      'should answer 400 missing_field when %s is absent',
      async (field) => {
        const body = billingProfileBody();
        delete body[field];
        expectError(await postBillingProfile(t, tenant.token, body), 400, 'missing_field', field);
      },
    );

    it('should answer 400 missing_field when name is null', async () => {
      const res = await postBillingProfile(t, tenant.token, billingProfileBody({ name: null }));
      expectError(res, 400, 'missing_field', 'name');
    });

    it('should answer 400 unknown_field for a field the endpoint does not accept', async () => {
      const res = await postBillingProfile(t, tenant.token, billingProfileBody({ tax_rate: 20 }));
      expectError(res, 400, 'unknown_field', 'tax_rate');
    });

    itAnswersInvalidJson(
      () => t,
      () => tenant.token,
      'post',
      '/api/v1/billing-profiles',
      {
        'a body that does not parse': '{"name": "half',
      },
    );

    it.each<[string, Body, string]>([
      ['currency in lower case', { currency: 'usd' }, 'currency'],
      ['a currency ISO 4217 does not know', { currency: 'XXY' }, 'currency'],
      ['a two-letter currency', { currency: 'US' }, 'currency'],
      ['a numeric currency', { currency: 840 }, 'currency'],
      ['billing_day 0', { billing_day: 0 }, 'billing_day'],
      ['billing_day 29', { billing_day: 29 }, 'billing_day'],
      ['billing_day 1.5', { billing_day: 1.5 }, 'billing_day'],
      ['billing_day as a string', { billing_day: '5' }, 'billing_day'],
      ['payment_terms_days -1', { payment_terms_days: -1 }, 'payment_terms_days'],
      ['payment_terms_days 366', { payment_terms_days: 366 }, 'payment_terms_days'],
      ['auto_suspend_after_days 0', { auto_suspend_after_days: 0 }, 'auto_suspend_after_days'],
      ['auto_suspend_after_days 366', { auto_suspend_after_days: 366 }, 'auto_suspend_after_days'],
      ['an empty name', { name: '' }, 'name'],
      ['a name of 201 characters', { name: longString(201) }, 'name'],
    ])('should answer 422 validation_failed for %s', async (_label, overrides, field) => {
      const res = await postBillingProfile(t, tenant.token, billingProfileBody(overrides));
      expectError(res, 422, 'validation_failed', field);
    });

    it('should answer 403 insufficient_scope for a token with only subscribers:*', async () => {
      const subscribersOnly = await issueToken(t, tenant.tenantId, ['subscribers:*']);
      expectError(
        await postBillingProfile(t, subscribersOnly.token, billingProfileBody()),
        403,
        'insufficient_scope',
      );
    });

    it('should answer 403 insufficient_scope for a token with only billing:read', async () => {
      const reader = await issueToken(t, tenant.tenantId, ['billing:read']);
      expectError(await postBillingProfile(t, reader.token, billingProfileBody()), 403, 'insufficient_scope');
    });

    it('should write billing_profile.created with the profile', async () => {
      const res = await postBillingProfile(t, tenant.token, billingProfileBody());
      const event = await createdEvent(t, tenant.token, res, 'billing_profile.created');
      expect(event.data.object).toEqual(res.body.data);
    });

    it('should replay a create sent again with the same idempotency key', async () => {
      const fresh = await createTenantWithToken(t, BILLING_SCOPES);
      const key = { 'X-Idempotency-Key': uniqueRef('key') };
      const body = billingProfileBody();
      const first = await request(t.http)
        .post('/api/v1/billing-profiles')
        .set(bearer(fresh.token))
        .set(key)
        .send(body);
      const again = await request(t.http)
        .post('/api/v1/billing-profiles')
        .set(bearer(fresh.token))
        .set(key)
        .send(body);
      expectSuccess(first, 201);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expectReplayOf(again, first);
      const list = await get('/api/v1/billing-profiles', fresh.token);
      expect(list.body.data.map((profile: BillingProfile) => profile.id)).toEqual([first.body.data.id]);
    });
  });

  describe('GET /api/v1/billing-profiles', () => {
    itRequiresAuthentication(() => t, 'get', '/api/v1/billing-profiles');

    it('should list the profiles of the tenant, newest first, page by page', async () => {
      const own = await createTenantWithToken(t, BILLING_SCOPES);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push((await createBillingProfile(t, own.token, { name: `Plan ${i}` })).id);
      }
      await createBillingProfile(t, tenant.token);

      const first = await get('/api/v1/billing-profiles?limit=2', own.token);
      expectList(first);
      expect(first.body.data.map((profile: BillingProfile) => profile.id)).toEqual([ids[2], ids[1]]);
      expect(first.body.meta.pagination).toMatchObject({ limit: 2, has_more: true });
      for (const profile of first.body.data) {
        expect(Object.keys(profile).sort()).toEqual(BILLING_PROFILE_KEYS);
      }

      const cursor = encodeURIComponent(first.body.meta.pagination.next_cursor);
      const second = await get(`/api/v1/billing-profiles?limit=2&starting_after=${cursor}`, own.token);
      expectList(second);
      expect(second.body.data.map((profile: BillingProfile) => profile.id)).toEqual([ids[0]]);
      expect(second.body.meta.pagination).toEqual({ limit: 2, has_more: false, next_cursor: null });
    });

    it('should let a token with only billing:read list', async () => {
      const reader = await issueToken(t, tenant.tenantId, ['billing:read']);
      expectList(await get('/api/v1/billing-profiles', reader.token));
    });

    it('should answer 403 insufficient_scope for a token with only subscribers:*', async () => {
      const subscribersOnly = await issueToken(t, tenant.tenantId, ['subscribers:*']);
      expectError(await get('/api/v1/billing-profiles', subscribersOnly.token), 403, 'insufficient_scope');
    });

    it.each([
      ['?limit=0', 400, 'invalid_query', 'limit'],
      ['?limit=101', 400, 'invalid_query', 'limit'],
      ['?starting_after=garbage', 400, 'invalid_cursor', 'starting_after'],
    ])('should answer %s with %d %s', async (query, status, code, field) => {
      expectError(await get(`/api/v1/billing-profiles${query}`), status, code, field);
    });
  });

  describe('GET /api/v1/billing-profiles/{id}', () => {
    let profile: BillingProfile;

    beforeAll(async () => {
      profile = await createBillingProfile(t, tenant.token, { payment_terms_days: 30 });
    });

    it('should require authentication', async () => {
      expectError(
        await request(t.http).get(`/api/v1/billing-profiles/${profile.id}`),
        401,
        'authentication_required',
      );
    });

    it('should return the profile', async () => {
      const res = await get(`/api/v1/billing-profiles/${profile.id}`);
      expectSuccess(res);
      expect(res.body.data).toEqual(profile);
    });

    it('should answer 404 not_found for the profile of another tenant', async () => {
      const other = await createTenantWithToken(t, BILLING_SCOPES);
      expectNotFound(await get(`/api/v1/billing-profiles/${profile.id}`, other.token));
    });

    it('should answer 404 not_found for an id nobody issued', async () => {
      expectNotFound(await get('/api/v1/billing-profiles/bp_01JD3Z6W3R4T5Y6V7W8X9Y0ZAB'));
    });

    it('should answer 403 insufficient_scope for a token with only subscribers:*', async () => {
      const subscribersOnly = await issueToken(t, tenant.tenantId, ['subscribers:*']);
      const res = await get(`/api/v1/billing-profiles/${profile.id}`, subscribersOnly.token);
      expectError(res, 403, 'insufficient_scope');
    });
  });

  describe('PATCH /api/v1/billing-profiles/{id}', () => {
    it('should require authentication', async () => {
      const profile = await createBillingProfile(t, tenant.token);
      const res = await request(t.http).patch(`/api/v1/billing-profiles/${profile.id}`).send({ name: 'X' });
      expectError(res, 401, 'authentication_required');
    });

    it('should change the fields sent, keep the others and write billing_profile.updated', async () => {
      const profile = await createBillingProfile(t, tenant.token, { auto_suspend_after_days: 30 });
      const res = await patch(profile.id, { name: 'Business monthly', billing_day: 15, currency: 'USD' });
      expectSuccess(res);
      expect(res.body.data).toEqual({
        ...profile,
        name: 'Business monthly',
        billing_day: 15,
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect((await get(`/api/v1/billing-profiles/${profile.id}`)).body.data).toEqual(res.body.data);

      const [event] = await listEvents(t, tenant.token, {
        subject_id: profile.id,
        type: 'billing_profile.updated',
      });
      expect(event.data).toEqual({ object: res.body.data, changed_fields: ['name', 'billing_day'] });
    });

    it('should turn auto-suspension off with null', async () => {
      const profile = await createBillingProfile(t, tenant.token, { auto_suspend_after_days: 30 });
      const res = await patch(profile.id, { auto_suspend_after_days: null });
      expectSuccess(res);
      expect(res.body.data.auto_suspend_after_days).toBeNull();
    });

    it('should write no event for a PATCH that changes nothing', async () => {
      const profile = await createBillingProfile(t, tenant.token);
      expectSuccess(await patch(profile.id, { name: profile.name }));
      const events = await listEvents(t, tenant.token, { subject_id: profile.id });
      expect(events.map((event) => event.type)).toEqual(['billing_profile.created']);
    });

    it.each<[string, Body, string]>([
      ['currency in lower case', { currency: 'eur' }, 'currency'],
      ['billing_day 29', { billing_day: 29 }, 'billing_day'],
      ['billing_day 1.5', { billing_day: 1.5 }, 'billing_day'],
      ['a null name', { name: null }, 'name'],
      ['a null currency', { currency: null }, 'currency'],
      ['a null payment_terms_days', { payment_terms_days: null }, 'payment_terms_days'],
    ])('should answer 422 validation_failed for %s and change nothing', async (_label, body, field) => {
      const profile = await createBillingProfile(t, tenant.token);
      expectError(await patch(profile.id, body), 422, 'validation_failed', field);
      expect((await get(`/api/v1/billing-profiles/${profile.id}`)).body.data).toEqual(profile);
    });

    it('should answer 400 unknown_field for a field the endpoint does not accept', async () => {
      const profile = await createBillingProfile(t, tenant.token);
      expectError(await patch(profile.id, { id: 'bp_other' }), 400, 'unknown_field', 'id');
    });

    it('should answer 404 not_found for the profile of another tenant', async () => {
      const profile = await createBillingProfile(t, tenant.token);
      const other = await createTenantWithToken(t, BILLING_SCOPES);
      expectNotFound(await patch(profile.id, { name: 'Mine now' }, other.token));
    });

    it('should answer 403 insufficient_scope for a token with only billing:read', async () => {
      const profile = await createBillingProfile(t, tenant.token);
      const reader = await issueToken(t, tenant.tenantId, ['billing:read']);
      expectError(await patch(profile.id, { name: 'Read only' }, reader.token), 403, 'insufficient_scope');
    });
  });
});
