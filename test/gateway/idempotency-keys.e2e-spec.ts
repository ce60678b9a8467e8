import request from 'supertest';
import type { DataSource, QueryRunner } from 'typeorm';
import { BILLING_SCOPES, createPayment, postTransaction, transactionBody } from '../support/billing-factory';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { listSubscriberIds, postSubscriber, subscriberBody, uniqueRef } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WEBHOOK_SECRET } from '../support/webhook-receiver';

const embedded = process.env.TEST_EMBEDDED_DATABASE === 'true';

/**
 * Makes the statement that stores the answer of the request with this key fail (a stand-in for a crash there): the
 * UPDATE after the effect, or the claim itself where one statement claims the key with its answer (a create).
 */
async function failAnswerOf(dataSource: DataSource, key: string): Promise<() => Promise<void>> {
  const name = `fail_answer_${key.replace(/\W/g, '_')}`;
  await dataSource.query(
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'injected failure storing the answer'; END $$`,
  );
  await dataSource.query(
    `CREATE TRIGGER ${name} BEFORE INSERT OR UPDATE ON idempotency_keys FOR EACH ROW
     WHEN (NEW.key = '${key}' AND NEW.response_body IS NOT NULL) EXECUTE FUNCTION ${name}()`,
  );
  return async () => {
    await dataSource.query(`DROP TRIGGER ${name} ON idempotency_keys`);
    await dataSource.query(`DROP FUNCTION ${name}()`);
  };
}

describe('Hardening: idempotency keys', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_WORKER_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' });
    tenant = await createTenantWithToken(t, [...BILLING_SCOPES, 'webhooks:*']);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('the answer is stored in the effect’s transaction', () => {
    it('should leave no effect when the answer cannot be stored, so a retry creates the subscriber once', async () => {
      const key = uniqueRef('key');
      const body = subscriberBody();
      const restore = await failAnswerOf(t.dataSource, key);
      try {
        const first = await postSubscriber(t, tenant.token, body, { 'X-Idempotency-Key': key });
        expect(first.status).toBe(500);
      } finally {
        await restore();
      }
      // Before the fix the subscriber was committed without its answer: the retry got 409 in progress for 24 h.
      const retry = await postSubscriber(t, tenant.token, body, { 'X-Idempotency-Key': key });
      expectSuccess(retry, 201);
      const replay = await postSubscriber(t, tenant.token, body, { 'X-Idempotency-Key': key });
      expectSuccess(replay, 201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.data).toEqual(retry.body.data);
      expect(await listSubscriberIds(t, tenant.token, `external_id=${String(body.external_id)}`)).toEqual([
        retry.body.data.id,
      ]);
    });

    it('should leave no payment recorded when the answer cannot be stored, so a retry records it once', async () => {
      const subscriber = await postSubscriber(t, tenant.token, subscriberBody());
      const key = uniqueRef('key');
      const body = transactionBody(subscriber.body.data.id, { kind: 'payment', amount: 1500 });
      const restore = await failAnswerOf(t.dataSource, key);
      try {
        expect((await postTransaction(t, tenant.token, body, { 'X-Idempotency-Key': key })).status).toBe(500);
      } finally {
        await restore();
      }
      const retry = await postTransaction(t, tenant.token, body, { 'X-Idempotency-Key': key });
      expectSuccess(retry, 201);
      const rows: { count: string }[] = await t.dataSource.query(
        `SELECT count(*) AS count FROM transactions WHERE tenant_id = $1 AND subscriber_id = $2`,
        [tenant.tenantId, subscriber.body.data.id],
      );
      expect(Number(rows[0].count)).toBe(1);
    });

    it('should have the answer stored by the time the effect is visible to anyone', async () => {
      const key = uniqueRef('key');
      const res = await postSubscriber(t, tenant.token, subscriberBody(), { 'X-Idempotency-Key': key });
      expectSuccess(res, 201);
      const rows: { response_status: number; response_body: unknown }[] = await t.dataSource.query(
        `SELECT response_status, response_body FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`,
        [tenant.tenantId, key],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].response_status).toBe(201);
      expect(rows[0].response_body).toEqual(res.body);
    });
  });

  describe('a key whose first request is still running', () => {
    it('should answer 409 idempotency_request_in_progress at once, then replay once the first is done', async () => {
      const subscriber = await postSubscriber(t, tenant.token, subscriberBody());
      const payment = await createPayment(t, tenant.token, subscriber.body.data.id, 1000);
      const key = uniqueRef('key');
      const send = () =>
        request(t.http)
          .post(`/api/v1/transactions/${payment.id}/allocate`)
          .set(bearer(tenant.token))
          .set('X-Idempotency-Key', key)
          .send({ target: 'balance', amount: 400 });

      if (embedded) {
        // PGlite runs one transaction at a time: the two requests queue, and the second replays the first.
        const [a, b] = await Promise.all([send(), send()]);
        expect([a.status, b.status]).toEqual([200, 200]);
        expect([a, b].filter((res) => res.headers['idempotent-replayed'] === 'true')).toHaveLength(1);
      } else {
        // Hold the payment's row lock, so the first request claims its key and then waits inside its transaction.
        const holder = t.dataSource.createQueryRunner();
        await holder.startTransaction();
        await holder.query('SELECT id FROM transactions WHERE id = $1 FOR UPDATE', [payment.id]);
        const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
        const first = send().then((res) => res);
        try {
          // The first request has claimed its key once it waits for the holder's row lock.
          await waitFor(
            async () =>
              (
                await t.dataSource.query<unknown[]>(
                  'SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
                  [pid],
                )
              ).length > 0,
            { what: 'the first request waiting for the row lock' },
          );
          // Before the fix the second request waited on the first one's uncommitted key for as long as it ran (here:
          // until the holder lets go, which it does only after this): any bound tells the two apart.
          const second = await Promise.race([
            send(),
            new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000)),
          ]);
          expect(second).not.toBeNull();
          expectError(second!, 409, 'idempotency_request_in_progress', 'X-Idempotency-Key');
        } finally {
          await holder.rollbackTransaction();
          await holder.release();
        }
        expectSuccess(await first, 200);
        const replay = await send();
        expectSuccess(replay, 200);
        expect(replay.headers['idempotent-replayed']).toBe('true');
      }
      const rows: { allocated_amount: string }[] = await t.dataSource.query(
        'SELECT allocated_amount FROM transactions WHERE id = $1',
        [payment.id],
      );
      expect(Number(rows[0].allocated_amount)).toBe(400);
    });
  });

  describe('a create whose key another request holds (claimed in the create’s own statement)', () => {
    it('should answer 409 idempotency_request_in_progress and create nothing, then create once the key is free', async () => {
      const key = uniqueRef('key');
      const body = subscriberBody();
      // A request holding the key holds its advisory lock until it commits; a session lock here stands in for it.
      // (On PGlite, whose pool has the one connection, the lock is taken on that connection.)
      const holder = embedded ? t.dataSource : t.dataSource.createQueryRunner();
      const lock = [`${tenant.tenantId}:${tenant.tokenId}:${key}`, 7_340_022];
      await holder.query('SELECT pg_advisory_lock(hashtextextended($1, $2))', lock);
      try {
        const held = await postSubscriber(t, tenant.token, body, { 'X-Idempotency-Key': key });
        if (embedded) {
          // PGlite is one session: the lock is the request's own session's, so it does not hold the key.
          expectSuccess(held, 201);
          return;
        }
        expectError(held, 409, 'idempotency_request_in_progress', 'X-Idempotency-Key');
        expect(await listSubscriberIds(t, tenant.token, `external_id=${String(body.external_id)}`)).toEqual(
          [],
        );
      } finally {
        await holder.query('SELECT pg_advisory_unlock(hashtextextended($1, $2))', lock);
        if (!embedded) {
          await (holder as QueryRunner).release();
        }
      }
      const created = await postSubscriber(t, tenant.token, body, { 'X-Idempotency-Key': key });
      expectSuccess(created, 201);
      expect(created.headers['idempotent-replayed']).toBeUndefined();
    });
  });

  describe('request ids on a replay', () => {
    it('should carry the replay’s own id in X-Request-ID and meta, and the first one’s in Original-Request-ID', async () => {
      const key = uniqueRef('key');
      const body = subscriberBody();
      const first = await postSubscriber(t, tenant.token, body, {
        'X-Idempotency-Key': key,
        'X-Request-ID': 'req-first-attempt',
      });
      expectSuccess(first, 201);
      expect(first.body.meta.request_id).toBe('req-first-attempt');
      expect(first.headers['original-request-id']).toBeUndefined();

      const replay = await postSubscriber(t, tenant.token, body, {
        'X-Idempotency-Key': key,
        'X-Request-ID': 'req-second-attempt',
      });
      expectSuccess(replay, 201);
      expect(replay.headers['x-request-id']).toBe('req-second-attempt');
      expect(replay.body.meta.request_id).toBe('req-second-attempt');
      expect(replay.headers['original-request-id']).toBe('req-first-attempt');
      expect(replay.body.data).toEqual(first.body.data);
    });
  });

  describe('POST /api/v1/webhooks with an idempotency key', () => {
    const webhookBody = () => ({
      url: `https://hooks.example.com/${uniqueRef('hook')}`,
      events: ['subscriber.created'],
    });
    const register = (body: object, key: string) =>
      request(t.http)
        .post('/api/v1/webhooks')
        .set(bearer(tenant.token))
        .set('X-Idempotency-Key', key)
        .send(body);

    it('should register one subscription and replay it with the secret redacted', async () => {
      const key = uniqueRef('key');
      const body = webhookBody();
      const first = await register(body, key);
      expectSuccess(first, 201);
      expect(first.body.data.secret).toMatch(WEBHOOK_SECRET);

      const replay = await register(body, key);
      expectSuccess(replay, 201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.data).toEqual({ ...first.body.data, secret: null });

      const list = await request(t.http).get('/api/v1/webhooks?limit=100').set(bearer(tenant.token));
      expect(list.body.data.filter((hook: { url: string }) => hook.url === body.url)).toHaveLength(1);
    });

    it('should never store the signing secret with the key', async () => {
      const key = uniqueRef('key');
      const first = await register(webhookBody(), key);
      expectSuccess(first, 201);
      const rows: { body: string }[] = await t.dataSource.query(
        `SELECT response_body::text AS body FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`,
        [tenant.tenantId, key],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].body).toContain(first.body.data.id);
      expect(rows[0].body).not.toContain(first.body.data.secret);
      expect(rows[0].body).not.toContain('whsec_');
    });

    it('should deliver each event once to a registration that was retried', async () => {
      const key = uniqueRef('key');
      const body = webhookBody();
      const first = await register(body, key);
      await register(body, key);
      const subscriber = await postSubscriber(t, tenant.token, subscriberBody());
      const rows: { webhook_id: string }[] = await t.dataSource.query(
        `SELECT d.webhook_id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
         WHERE d.tenant_id = $1 AND w.url = $2 AND d.event_id IN
           (SELECT id FROM events WHERE tenant_id = $1 AND subject_id = $3)`,
        [tenant.tenantId, body.url, subscriber.body.data.id],
      );
      expect(rows).toEqual([{ webhook_id: first.body.data.id }]);
    });

    it('should answer 422 idempotency_key_reused for the same key with another body', async () => {
      const key = uniqueRef('key');
      expectSuccess(await register(webhookBody(), key), 201);
      expectError(await register(webhookBody(), key), 422, 'idempotency_key_reused', 'X-Idempotency-Key');
    });
  });
});
