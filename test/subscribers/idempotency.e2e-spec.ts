import request from 'supertest';
import { expectError, expectReplayOf, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createSubscriberInState,
  fullSubscriberBody,
  listEvents,
  listSubscriberIds,
  longString,
  postSubscriber,
  SUBSCRIBER_SCOPES,
  subscriberBody,
  uniqueRef,
} from '../support/subscriber-factory';
import { type TenantWithToken, type TestApp, issueToken, tenantSuite } from '../support/test-app';

describe('Subscribers: idempotent creates', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  const withKey = (key: string, header = 'X-Idempotency-Key') => ({ [header]: key });

  /** The subscribers of the tenant with this external_id, and the subscriber.created events of the tenant. */
  async function effects(token: string, externalId: string) {
    const ids = await listSubscriberIds(t, token, `external_id=${externalId}`);
    const created = await listEvents(t, token, { type: 'subscriber.created' });
    return { ids, createdEvents: created.filter((event) => ids.includes(event.subject_id as string)) };
  }

  tenantSuite(SUBSCRIBER_SCOPES, (suite) => ({ t, tenant } = suite));

  describe('POST /api/v1/subscribers with an idempotency key', () => {
    it('should require authentication', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(withKey(uniqueRef('key')))
        .send(subscriberBody());
      expectError(res, 401, 'authentication_required');
    });

    it.each(['X-Idempotency-Key', 'Idempotency-Key'])(
      'should replay the first answer for the same %s and body, creating one subscriber',
      async (header) => {
        const key = uniqueRef('key');
        const body = fullSubscriberBody();
        const first = await postSubscriber(t, tenant.token, body, withKey(key, header));
        expectSuccess(first, 201);
        expect(first.headers['idempotent-replayed']).toBeUndefined();

        const again = await postSubscriber(t, tenant.token, body, withKey(key, header));
        expect(again.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expectReplayOf(again, first);
        expect(again.headers['x-request-id']).not.toBe(first.body.meta.request_id);

        const { ids, createdEvents } = await effects(tenant.token, body.external_id as string);
        expect(ids).toEqual([first.body.data.id]);
        expect(createdEvents).toHaveLength(1);
      },
    );

    it('should replay when the same body is sent with its keys in another order', async () => {
      const key = uniqueRef('key');
      const body = subscriberBody();
      const first = await postSubscriber(t, tenant.token, body, withKey(key));
      expectSuccess(first, 201);
      const reordered = Object.fromEntries(Object.entries(body).reverse());
      const again = await postSubscriber(t, tenant.token, reordered, withKey(key));
      expect(again.headers['idempotent-replayed']).toBe('true');
      expectReplayOf(again, first);
    });

    it('should answer 422 idempotency_key_reused for the same key with another body', async () => {
      const key = uniqueRef('key');
      const body = subscriberBody();
      expectSuccess(await postSubscriber(t, tenant.token, body, withKey(key)), 201);
      const other = subscriberBody();
      const res = await postSubscriber(t, tenant.token, other, withKey(key));
      expectError(res, 422, 'idempotency_key_reused', 'X-Idempotency-Key');
      expect(await listSubscriberIds(t, tenant.token, `external_id=${other.external_id as string}`)).toEqual(
        [],
      );
    });

    it('should answer 422 idempotency_key_reused for the same key on another endpoint', async () => {
      const key = uniqueRef('key');
      const subscriber = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(tenant.token))
        .set(withKey(key))
        .send(subscriberBody({ status: 'active' }))
        .expect(201);
      const res = await request(t.http)
        .post(`/api/v1/subscribers/${subscriber.body.data.id}/status`)
        .set(bearer(tenant.token))
        .set(withKey(key))
        .send({ status: 'cancelled' });
      expectError(res, 422, 'idempotency_key_reused', 'X-Idempotency-Key');
    });

    it('should answer 400 invalid_idempotency_key for a key of 256 characters and accept one of 255', async () => {
      const body = subscriberBody();
      const tooLong = await postSubscriber(t, tenant.token, body, withKey(longString(256, 'k')));
      expectError(tooLong, 400, 'invalid_idempotency_key', 'X-Idempotency-Key');
      expect(await listSubscriberIds(t, tenant.token, `external_id=${body.external_id as string}`)).toEqual(
        [],
      );
      const longest = `${uniqueRef('key')}-`.padEnd(255, 'k');
      expectSuccess(await postSubscriber(t, tenant.token, body, withKey(longest)), 201);
    });

    it('should scope keys per token: another token of the tenant with the same key creates its own subscriber', async () => {
      const second = await issueToken(t, tenant.tenantId, ['subscribers:write'], 'second');
      const key = uniqueRef('key');
      const body = { full_name: 'Shared Key', status: 'prospect' };
      const first = await postSubscriber(t, tenant.token, body, withKey(key));
      const other = await postSubscriber(t, second.token, body, withKey(key));
      expectSuccess(first, 201);
      expectSuccess(other, 201);
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(other.body.data.id).not.toBe(first.body.data.id);
    });

    it('should not burn the key on a refused request: a corrected body with the same key succeeds', async () => {
      const key = uniqueRef('key');
      const body = subscriberBody({ email: 'not-an-email' });
      expectError(
        await postSubscriber(t, tenant.token, body, withKey(key)),
        422,
        'validation_failed',
        'email',
      );
      expectError(
        await postSubscriber(t, tenant.token, body, withKey(key)),
        422,
        'validation_failed',
        'email',
      );
      const corrected = { ...body, email: undefined };
      const res = await postSubscriber(t, tenant.token, corrected, withKey(key));
      expectSuccess(res, 201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      const replay = await postSubscriber(t, tenant.token, corrected, withKey(key));
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expectReplayOf(replay, res);
    });

    it('should not store a 409 duplicate: the same key then creates once the conflict is gone', async () => {
      const key = uniqueRef('key');
      const email = fullSubscriberBody().email as string;
      const holder = await createSubscriberInState(t, tenant.token, 'prospect', { email });
      const body = subscriberBody({ email });
      expectError(
        await postSubscriber(t, tenant.token, body, withKey(key)),
        409,
        'duplicate_subscriber',
        'email',
      );
      await request(t.http)
        .post(`/api/v1/subscribers/${holder.id}/status`)
        .set(bearer(tenant.token))
        .send({ status: 'archived' })
        .expect(200);
      const res = await postSubscriber(t, tenant.token, body, withKey(key));
      expectSuccess(res, 201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    });

    it('should replay a status change with its 200 instead of refusing the repeated move', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'active');
      const key = uniqueRef('key');
      const move = () =>
        request(t.http)
          .post(`/api/v1/subscribers/${subscriber.id}/status`)
          .set(bearer(tenant.token))
          .set(withKey(key))
          .send({ status: 'suspended', reason: 'non_payment' });
      const first = await move();
      expectSuccess(first, 200);
      const again = await move();
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expectReplayOf(again, first);
      const events = await listEvents(t, tenant.token, {
        subject_id: subscriber.id,
        type: 'subscriber.status_changed',
      });
      expect(events).toHaveLength(1);
    });
  });
});
