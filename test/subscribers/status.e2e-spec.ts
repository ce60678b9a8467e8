import request from 'supertest';
import { expectError, expectSuccess, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createSubscriberInState,
  getSubscriber,
  listEvents,
  postStatus,
  reasonFor,
  SUBSCRIBER_KEYS,
  SUBSCRIBER_SCOPES,
  SUBSCRIBER_STATUSES,
  type SubscriberStatus,
} from '../support/subscriber-factory';
import {
  createTenantWithToken,
  type TenantWithToken,
  type TestApp,
  issueToken,
  tenantSuite,
} from '../support/test-app';
import { itAnswersInvalidJson } from '../support/shared-cases';

/** The lifecycle (the README's "Lifecycle" table, under "Subscribers"). Every pair not listed here is refused. */
const ALLOWED: Record<SubscriberStatus, SubscriberStatus[]> = {
  prospect: ['pending', 'active', 'archived'],
  pending: ['active', 'cancelled'],
  active: ['suspended', 'cancelled'],
  suspended: ['active', 'cancelled'],
  cancelled: ['active', 'archived'],
  archived: [],
};

const PAIRS = SUBSCRIBER_STATUSES.flatMap((from) => SUBSCRIBER_STATUSES.map((to) => [from, to] as const));
const ALLOWED_PAIRS = PAIRS.filter(([from, to]) => ALLOWED[from].includes(to));
const REFUSED_PAIRS = PAIRS.filter(([from, to]) => !ALLOWED[from].includes(to));

describe('Subscribers: status', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  tenantSuite(SUBSCRIBER_SCOPES, (suite) => ({ t, tenant } = suite));

  describe('POST /api/v1/subscribers/{id}/status: transitions', () => {
    it('should require authentication', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'active');
      const res = await request(t.http)
        .post(`/api/v1/subscribers/${subscriber.id}/status`)
        .send({ status: 'cancelled' });
      expectError(res, 401, 'authentication_required');
      expect((await getSubscriber(t, tenant.token, subscriber.id)).status).toBe('active');
    });

    it.each(ALLOWED_PAIRS)('should allow %s → %s and answer 200 with the full record', async (from, to) => {
      const subscriber = await createSubscriberInState(t, tenant.token, from);
      const res = await postStatus(t, tenant.token, subscriber.id, to, reasonFor(to));
      expectSuccess(res);
      expect(Object.keys(res.body.data).sort()).toEqual(SUBSCRIBER_KEYS);
      expect(res.body.data).toMatchObject({ id: subscriber.id, status: to });
      expect(await getSubscriber(t, tenant.token, subscriber.id)).toEqual(res.body.data);

      const [event] = await listEvents(t, tenant.token, {
        subject_id: subscriber.id,
        type: 'subscriber.status_changed',
      });
      expect(event.data).toEqual({ object: res.body.data, from, to, reason: reasonFor(to) ?? null });
      expect(event.request_id).toBe(res.body.meta.request_id);
    });

    it.each(REFUSED_PAIRS)('should refuse %s → %s with 409 invalid_state_transition', async (from, to) => {
      const subscriber = await createSubscriberInState(t, tenant.token, from);
      const before = await getSubscriber(t, tenant.token, subscriber.id);
      const eventsBefore = await listEvents(t, tenant.token, { subject_id: subscriber.id });
      const res = await postStatus(t, tenant.token, subscriber.id, to, reasonFor(to));
      expectError(res, 409, 'invalid_state_transition', 'status');
      expect(res.body.error.message).toMatch(new RegExp(`\\b${from}\\b.*\\b${to}\\b`));
      expect(await getSubscriber(t, tenant.token, subscriber.id)).toEqual(before);
      expect(await listEvents(t, tenant.token, { subject_id: subscriber.id })).toEqual(eventsBefore);
    });
  });

  describe('POST /api/v1/subscribers/{id}/status: suspension reasons', () => {
    it('should require authentication', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'active');
      const res = await request(t.http)
        .post(`/api/v1/subscribers/${subscriber.id}/status`)
        .send({ status: 'suspended', reason: 'fraud' });
      expectError(res, 401, 'authentication_required');
    });

    it('should answer 400 missing_field reason when suspending without one', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'active');
      expectError(
        await postStatus(t, tenant.token, subscriber.id, 'suspended'),
        400,
        'missing_field',
        'reason',
      );
      expect((await getSubscriber(t, tenant.token, subscriber.id)).status).toBe('active');
    });

    it.each(['vacation', 'NON_PAYMENT', ''])(
      'should answer 422 validation_failed reason when suspending for %p',
      async (reason) => {
        const subscriber = await createSubscriberInState(t, tenant.token, 'active');
        const res = await postStatus(t, tenant.token, subscriber.id, 'suspended', reason);
        expectError(res, 422, 'validation_failed', 'reason');
        expect((await getSubscriber(t, tenant.token, subscriber.id)).status).toBe('active');
      },
    );

    it.each(['non_payment', 'manual', 'fraud'])(
      'should show suspension_reason %s while suspended and null after resuming',
      async (reason) => {
        const subscriber = await createSubscriberInState(t, tenant.token, 'active');
        const suspended = await postStatus(t, tenant.token, subscriber.id, 'suspended', reason);
        expectSuccess(suspended);
        expect(suspended.body.data).toMatchObject({ status: 'suspended', suspension_reason: reason });
        expect((await getSubscriber(t, tenant.token, subscriber.id)).suspension_reason).toBe(reason);

        expectSuccess(await postStatus(t, tenant.token, subscriber.id, 'active'));
        expect(await getSubscriber(t, tenant.token, subscriber.id)).toMatchObject({
          status: 'active',
          suspension_reason: null,
        });
      },
    );

    it('should clear suspension_reason when a suspended subscriber is cancelled', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'active');
      expectSuccess(await postStatus(t, tenant.token, subscriber.id, 'suspended', 'non_payment'));
      expectSuccess(await postStatus(t, tenant.token, subscriber.id, 'cancelled'));
      expect((await getSubscriber(t, tenant.token, subscriber.id)).suspension_reason).toBeNull();
    });

    it('should record the note given with another move in the event', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'active');
      const res = await postStatus(t, tenant.token, subscriber.id, 'cancelled', 'moved away');
      expectSuccess(res);
      expect(res.body.data.suspension_reason).toBeNull();
      const [event] = await listEvents(t, tenant.token, {
        subject_id: subscriber.id,
        type: 'subscriber.status_changed',
      });
      expect(event.data).toMatchObject({ from: 'active', to: 'cancelled', reason: 'moved away' });
    });
  });

  describe('POST /api/v1/subscribers/{id}/status: malformed requests', () => {
    it('should require authentication', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'prospect');
      const res = await request(t.http).post(`/api/v1/subscribers/${subscriber.id}/status`).send({});
      expectError(res, 401, 'authentication_required');
    });

    it.each([
      ['an absent status', {}, 400, 'missing_field', 'status'],
      ['a null status', { status: null }, 400, 'missing_field', 'status'],
      ['an unknown field', { status: 'active', note: 'x' }, 400, 'unknown_field', 'note'],
      ['an unknown status', { status: 'bogus' }, 422, 'validation_failed', 'status'],
      ['a numeric reason', { status: 'active', reason: 7 }, 422, 'validation_failed', 'reason'],
    ])('should answer %s with %d %s', async (_label, body, status, code, field) => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'prospect');
      const res = await request(t.http)
        .post(`/api/v1/subscribers/${subscriber.id}/status`)
        .set(bearer(tenant.token))
        .send(body);
      expectError(res, status, code, field);
    });

    itAnswersInvalidJson(
      () => t,
      () => tenant.token,
      'post',
      async () =>
        `/api/v1/subscribers/${(await createSubscriberInState(t, tenant.token, 'prospect')).id}/status`,
      { 'a body that does not parse': '{"status": "active"' },
    );

    it('should answer 404 not_found for the subscriber of another tenant', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'prospect');
      const other = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      expectNotFound(await postStatus(t, other.token, subscriber.id, 'active'));
      expect((await getSubscriber(t, tenant.token, subscriber.id)).status).toBe('prospect');
    });

    it('should answer 403 insufficient_scope for a token with only subscribers:read', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'prospect');
      const reader = await issueToken(t, tenant.tenantId, ['subscribers:read']);
      expectError(await postStatus(t, reader.token, subscriber.id, 'active'), 403, 'insufficient_scope');
    });
  });
});
