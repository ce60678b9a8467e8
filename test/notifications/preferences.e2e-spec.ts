import request from 'supertest';
import { expectError, expectNotFound, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  type Body,
  createSubscriber,
  createSubscriberInState,
  listEvents,
  SUBSCRIBER_SCOPES,
} from '../support/subscriber-factory';
import {
  createTenantWithToken,
  issueToken,
  type TenantWithToken,
  type TestApp,
  tenantSuite,
} from '../support/test-app';

const KINDS = [
  'invoice_issued',
  'payment_received',
  'credit_note_issued',
  'invoice_reminder',
  'suspended_for_non_payment',
  'service_restored',
  'service_activated',
  'ticket_reply',
  'portal_invite',
  'portal_sign_in_code',
];
// Always sent: the legal notices, and the portal's sign-in mail (a subscriber declining it would only lock itself out).
const LEGAL = ['invoice_issued', 'credit_note_issued', 'portal_invite', 'portal_sign_in_code'];
const ALL_ON = Object.fromEntries(KINDS.map((kind) => [kind, true]));
const PREFERENCES_KEYS = ['legal_notices', 'preferences', 'subscriber_id', 'updated_at'];
const STALE_TAG = '"AAAAAAAAAAAAAAAAAAAAAAAAAAA"';

interface Preferences {
  subscriber_id: string;
  preferences: Record<string, boolean>;
  legal_notices: string[];
  updated_at: string | null;
}

describe('Notifications: a subscriber’s notification preferences', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  tenantSuite(SUBSCRIBER_SCOPES, (suite) => ({ t, tenant } = suite));

  const path = (id: string) => `/api/v1/subscribers/${id}/notification-preferences`;
  const get = (id: string, token = tenant.token) => request(t.http).get(path(id)).set(bearer(token));
  const patch = (id: string, body: Body, headers: Record<string, string> = {}, token = tenant.token) =>
    request(t.http).patch(path(id)).set(bearer(token)).set(headers).send(body);

  async function preferencesOf(id: string): Promise<Preferences> {
    return successRecord<Preferences>(await get(id), PREFERENCES_KEYS);
  }

  async function preferenceEvents(id: string) {
    return listEvents(t, tenant.token, { subject_id: id, type: 'notification_preferences.updated' });
  }

  describe('GET', () => {
    it('should answer every kind on, the legal notices listed and updated_at null for a new subscriber', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const res = await get(id);
      expect(successRecord(res, PREFERENCES_KEYS)).toEqual({
        subscriber_id: id,
        preferences: ALL_ON,
        legal_notices: LEGAL,
        updated_at: null,
      });
      expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    });

    it('should answer 404 not_found for another tenant’s subscriber and for an unknown id', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const other = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      expectNotFound(await get(id, other.token));
      expectNotFound(await get('sub_01JD3Z6W3R4T5Y6V7W8X9Y0ZAB'));
    });

    it('should answer 403 insufficient_scope to a token without subscribers:read', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const events = await issueToken(t, tenant.tenantId, ['events:read']);
      expectError(await get(id, events.token), 403, 'insufficient_scope');
    });
  });

  describe('PATCH', () => {
    it('should switch payment_received off, answer it, and GET shows it', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const res = await patch(id, { payment_received: false });
      const answer = successRecord<Preferences>(res, PREFERENCES_KEYS);
      expect(answer).toEqual({
        subscriber_id: id,
        preferences: { ...ALL_ON, payment_received: false },
        legal_notices: LEGAL,
        updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      expect(await preferencesOf(id)).toEqual(answer);
      expect((await get(id)).headers.etag).toBe(res.headers.etag);
    });

    it('should switch a kind on again and leave the kinds not sent as they are', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      await patch(id, { payment_received: false, ticket_reply: false, invoice_reminder: false });
      const res = await patch(id, { ticket_reply: true });
      expect(successRecord<Preferences>(res, PREFERENCES_KEYS).preferences).toEqual({
        ...ALL_ON,
        payment_received: false,
        invoice_reminder: false,
      });
    });

    it('should answer 422 validation_failed naming invoice_issued when a legal notice is switched off, changing nothing', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const res = await patch(id, { invoice_issued: false, payment_received: false });
      expectError(res, 422, 'validation_failed', 'invoice_issued');
      expect(res.body.error.message).toMatch(/legal notice/);
      expect(await preferencesOf(id)).toEqual(
        expect.objectContaining({ preferences: ALL_ON, updated_at: null }),
      );
      expectError(
        await patch(id, { credit_note_issued: false }),
        422,
        'validation_failed',
        'credit_note_issued',
      );
      expect(await preferenceEvents(id)).toEqual([]);
    });

    it('should take true for a legal notice as a change of nothing', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const res = await patch(id, { invoice_issued: true, credit_note_issued: true });
      expect(successRecord(res, PREFERENCES_KEYS)).toEqual(await preferencesOf(id));
      expect((res.body.data as Preferences).updated_at).toBeNull();
      expect(await preferenceEvents(id)).toEqual([]);
    });

    it('should answer 400 unknown_field for a property that is not a kind, as every body of the API does', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      expectError(await patch(id, { newsletter: false }), 400, 'unknown_field', 'newsletter');
      expectError(
        await patch(id, { preferences: { payment_received: false } }),
        400,
        'unknown_field',
        'preferences',
      );
      expect((await preferencesOf(id)).preferences).toEqual(ALL_ON);
    });

    it.each<[string, unknown]>([
      ['a string', 'false'],
      ['a number', 0],
      ['null', null],
      ['an object', { on: false }],
    ])('should answer 422 validation_failed naming the kind for %s', async (_label, value) => {
      const { id } = await createSubscriber(t, tenant.token);
      expectError(await patch(id, { payment_received: value }), 422, 'validation_failed', 'payment_received');
      expect((await preferencesOf(id)).preferences).toEqual(ALL_ON);
    });

    it('should answer an empty body with the preferences as they are, and write no event', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      await patch(id, { service_activated: false });
      const before = await get(id);
      const res = await patch(id, {});
      expect(successRecord(res, PREFERENCES_KEYS)).toEqual(before.body.data);
      expect(res.headers.etag).toBe(before.headers.etag);
      expect(await preferenceEvents(id)).toHaveLength(1);
    });

    it('should answer 404 not_found for another tenant’s subscriber and change nothing there', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const other = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      expectNotFound(await patch(id, { payment_received: false }, {}, other.token));
      expectNotFound(await patch('sub_01JD3Z6W3R4T5Y6V7W8X9Y0ZAB', { payment_received: false }));
      expect((await preferencesOf(id)).preferences).toEqual(ALL_ON);
    });

    it('should answer 403 insufficient_scope to a token with only subscribers:read', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const reader = await issueToken(t, tenant.tenantId, ['subscribers:read']);
      expectError(await patch(id, { payment_received: false }, {}, reader.token), 403, 'insufficient_scope');
      successRecord(await get(id, reader.token), PREFERENCES_KEYS);
      expect((await preferencesOf(id)).preferences).toEqual(ALL_ON);
    });

    it('should answer 409 invalid_state_transition for an archived subscriber, whose preferences stay readable', async () => {
      const archived = await createSubscriberInState(t, tenant.token, 'archived');
      expectError(
        await patch(archived.id, { payment_received: false }),
        409,
        'invalid_state_transition',
        'status',
      );
      expect((await preferencesOf(archived.id)).preferences).toEqual(ALL_ON);
    });
  });

  describe('PATCH: the event', () => {
    it('should write notification_preferences.updated naming only the kinds that changed', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      await patch(id, { ticket_reply: false });
      const res = await patch(id, {
        payment_received: false,
        invoice_reminder: false,
        ticket_reply: false,
        service_activated: true,
        invoice_issued: true,
      });
      const answer = successRecord<Preferences>(res, PREFERENCES_KEYS);
      const events = await preferenceEvents(id);
      expect(events).toHaveLength(2);
      const latest = events.find((event) => event.request_id === res.body.meta.request_id);
      expect(latest).toMatchObject({ type: 'notification_preferences.updated', subject_id: id });
      expect(latest?.data.changed_fields).toEqual(['payment_received', 'invoice_reminder']);
      expect(latest?.data.object).toEqual(answer);
      const first = events.find((event) => event !== latest);
      expect(first?.data.changed_fields).toEqual(['ticket_reply']);
    });

    it('should write no event for a PATCH that sends the values already held', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const res = await patch(id, { payment_received: true, ticket_reply: true });
      expect(successRecord<Preferences>(res, PREFERENCES_KEYS).updated_at).toBeNull();
      expect(await preferenceEvents(id)).toEqual([]);
    });
  });

  describe('PATCH: If-Match', () => {
    it('should answer 412 precondition_failed to a stale If-Match and change nothing', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const before = await get(id);
      const res = await patch(id, { payment_received: false }, { 'If-Match': STALE_TAG });
      expectError(res, 412, 'precondition_failed');
      const after = await get(id);
      expect(after.body.data).toEqual(before.body.data);
      expect(after.headers.etag).toBe(before.headers.etag);
      expect(await preferenceEvents(id)).toEqual([]);
    });

    it('should apply the change when If-Match names the current tag, and refuse that tag once it changed', async () => {
      const { id } = await createSubscriber(t, tenant.token);
      const { etag } = (await get(id)).headers;
      const res = await patch(id, { payment_received: false }, { 'If-Match': etag });
      expect(successRecord<Preferences>(res, PREFERENCES_KEYS).preferences.payment_received).toBe(false);
      expect(res.headers.etag).not.toBe(etag);
      expect(res.headers.etag).toBe((await get(id)).headers.etag);
      expectError(await patch(id, { ticket_reply: false }, { 'If-Match': etag }), 412, 'precondition_failed');
    });
  });
});
