import request, { type Response } from 'supertest';
import { expectError, expectReplayOf } from '../support/envelope';
import {
  type Body,
  createSubscriberInState,
  fullSubscriberBody,
  listen,
  listEvents,
  listSubscriberIds,
  postStatus,
  postSubscriber,
  SUBSCRIBER_SCOPES,
  subscriberBody,
  uniqueRef,
} from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

/** How many answers had each status. */
function countStatuses(answers: Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of answers) {
    counts[res.status] = (counts[res.status] ?? 0) + 1;
  }
  return counts;
}

describe('Subscribers under concurrency', () => {
  let t: TestApp;

  /** A fresh tenant per test, so its list and event log hold only what the test made. */
  let tenant: TenantWithToken;

  beforeAll(async () => {
    // A wrongly refused token in one test must not trip the abuse threshold and block the next test's requests.
    t = await startTestApp({ ABUSE_AUTH_FAILURES_MAX: '1000000' });
    await listen(t);
  });
  beforeEach(async () => {
    tenant = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('POST /api/v1/subscribers fired at once', () => {
    it('should require authentication', async () => {
      const answers = await Promise.all(
        [1, 2, 3].map(() => request(t.http).post('/api/v1/subscribers').send(subscriberBody())),
      );
      for (const res of answers) {
        expectError(res, 401, 'authentication_required');
      }
    });

    it('should create exactly one subscriber for 20 simultaneous identical requests with one key', async () => {
      const key = { 'X-Idempotency-Key': uniqueRef('key') };
      const body = fullSubscriberBody();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => postSubscriber(t, tenant.token, body, key)),
      );

      // Every answer is the original 201, its replay, or 409 while the first is still running: never a 5xx.
      expect(Object.keys(countStatuses(answers)).every((status) => ['201', '409'].includes(status))).toBe(
        true,
      );
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'idempotency_request_in_progress', res.body.error.field);
      }
      const created = answers.filter((res) => res.status === 201);
      const originals = created.filter((res) => res.headers['idempotent-replayed'] === undefined);
      expect(originals).toHaveLength(1);
      for (const res of created.filter((r) => r !== originals[0])) {
        expectReplayOf(res, originals[0]);
      }

      expect(await listSubscriberIds(t, tenant.token)).toEqual([originals[0].body.data.id]);
      expect(await listEvents(t, tenant.token, { type: 'subscriber.created' })).toHaveLength(1);
    });

    it('should answer one 201 and 49 × 409 duplicate_subscriber for 50 simultaneous creates of one external_id', async () => {
      const externalId = uniqueRef();
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          postSubscriber(
            t,
            tenant.token,
            subscriberBody({ external_id: externalId, full_name: `Racer ${i}` }),
          ),
        ),
      );

      expect(countStatuses(answers)).toEqual({ 201: 1, 409: 49 });
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'duplicate_subscriber', 'external_id');
      }
      const winner = answers.find((res) => res.status === 201) as Response;
      expect(await listSubscriberIds(t, tenant.token, `external_id=${externalId}`)).toEqual([
        winner.body.data.id,
      ]);
      expect(await listEvents(t, tenant.token, { type: 'subscriber.created' })).toHaveLength(1);
    });

    it('should answer one 201 and 19 × 409 naming email for 20 simultaneous creates of one email', async () => {
      const email = fullSubscriberBody().email as string;
      const bodies: Body[] = Array.from({ length: 20 }, (_, i) =>
        subscriberBody({ email: i % 2 ? email : email.toUpperCase() }),
      );
      const answers = await Promise.all(bodies.map((body) => postSubscriber(t, tenant.token, body)));

      expect(countStatuses(answers)).toEqual({ 201: 1, 409: 19 });
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'duplicate_subscriber', 'email');
      }
      expect(await listSubscriberIds(t, tenant.token)).toHaveLength(1);
    });
  });

  describe('POST /api/v1/subscribers/{id}/status fired at once', () => {
    it('should require authentication', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'active');
      const answers = await Promise.all(
        [1, 2].map(() =>
          request(t.http).post(`/api/v1/subscribers/${subscriber.id}/status`).send({ status: 'cancelled' }),
        ),
      );
      for (const res of answers) {
        expectError(res, 401, 'authentication_required');
      }
    });

    it('should let exactly one of ten simultaneous suspensions through', async () => {
      const subscriber = await createSubscriberInState(t, tenant.token, 'active');
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => postStatus(t, tenant.token, subscriber.id, 'suspended', 'fraud')),
      );

      expect(countStatuses(answers)).toEqual({ 200: 1, 409: 9 });
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'invalid_state_transition', 'status');
      }
      const events = await listEvents(t, tenant.token, {
        subject_id: subscriber.id,
        type: 'subscriber.status_changed',
      });
      expect(events).toHaveLength(1);
    });
  });
});
