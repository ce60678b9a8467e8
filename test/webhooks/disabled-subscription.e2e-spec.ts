import request from 'supertest';
import { expectError, expectList, expectSuccess, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import {
  createWebhook,
  deleteAllWebhooks,
  getWebhook,
  WebhookReceiver,
  DELIVERY_ENV,
} from '../support/webhook-receiver';
import { letTimePass, waitFor } from '../support/wait-for';
import { CLAIM_SQL } from '../../src/webhooks/webhook-deliveries.repository';

interface DeliveryRecord {
  id: string;
  webhook_id: string;
  event_id: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
}

/** Issue #11 item 15: a disabled subscription's pending deliveries end, and the claim reads only claimable rows. */
describe('Deliveries of a disabled subscription', () => {
  let t: TestApp;
  let owner: TenantWithToken;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp({ ...DELIVERY_ENV, WEBHOOK_POLL_MS: '50', WEBHOOK_RETRY_DELAYS_S: '30,30' });
    owner = await createTenantWithToken(t, ['admin']);
  });
  afterAll(async () => {
    await deleteAllWebhooks(t.http, owner.token);
    await t.close();
    await receiver?.close();
  });

  async function deliveries(webhookId: string, status?: string): Promise<DeliveryRecord[]> {
    const res = await request(t.http)
      .get('/api/v1/webhook-deliveries')
      .query({ webhook_id: webhookId, limit: '100', ...(status ? { status } : {}) })
      .set(bearer(owner.token));
    expectList(res);
    return res.body.data as DeliveryRecord[];
  }

  const patch = (id: string, body: Record<string, unknown>) =>
    request(t.http).patch(`/api/v1/webhooks/${id}`).set(bearer(owner.token)).send(body);

  it('should cancel pending deliveries on PATCH enabled=false, list them as cancelled, and not resume them on re-enable', async () => {
    receiver = await WebhookReceiver.start({ fallback: 500 });
    const hook = await createWebhook(t.http, owner.token, {
      url: receiver.url,
      events: ['subscriber.created'],
    });
    await createSubscriber(t, owner.token);
    await createSubscriber(t, owner.token);
    // Both tried once, failed, and wait 30 s for their retry.
    await waitFor(
      async () => {
        const rows = await deliveries(hook.id);
        return rows.length === 2 && rows.every((row) => row.attempts === 1) ? rows : undefined;
      },
      { interval: 50 },
    );

    expectSuccess(await patch(hook.id, { enabled: false }));
    const cancelled = await deliveries(hook.id, 'cancelled');
    expect(cancelled).toHaveLength(2);
    for (const row of cancelled) {
      expect(row).toMatchObject({ status: 'cancelled', next_attempt_at: null });
    }
    expect(await deliveries(hook.id, 'pending')).toHaveLength(0);

    expectSuccess(await patch(hook.id, { enabled: true }));
    // Nothing may resume: the worker polls every 50 ms, so time is let pass on purpose before the count.
    await letTimePass(300);
    expect(await deliveries(hook.id, 'cancelled')).toHaveLength(2);
    expect(await deliveries(hook.id, 'pending')).toHaveLength(0);
    expect(receiver.requests).toHaveLength(2);
  });

  it('should refuse to redeliver a cancelled delivery while disabled and send it as a new delivery once enabled', async () => {
    const ok = await WebhookReceiver.start({ fallback: 200 });
    try {
      const hook = await createWebhook(t.http, owner.token, {
        url: ok.url,
        events: ['subscriber.created'],
        enabled: false,
      });
      // Queued while enabled, cancelled by the PATCH before the worker could send it.
      await t.dataSource.query(
        `INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, status, attempts,
           next_attempt_at, locked_until, created_at, updated_at)
         SELECT tenant_id, 'dlv_CANCELLED' || substr(id, 14), $2, id, type, 'cancelled', 0, NULL, NULL, now(), now()
         FROM events WHERE tenant_id = $1 AND type = 'subscriber.created' LIMIT 1`,
        [owner.tenantId, hook.id],
      );
      const [cancelled] = await deliveries(hook.id, 'cancelled');
      const redeliver = () =>
        request(t.http).post(`/api/v1/webhook-deliveries/${cancelled.id}/redeliver`).set(bearer(owner.token));
      expectError(await redeliver(), 409, 'invalid_state_transition');

      expectSuccess(await patch(hook.id, { enabled: true }));
      const again = await redeliver();
      expectSuccess(again, 202);
      expect(again.body.data.id).not.toBe(cancelled.id);
      await ok.waitFor(1, 10_000, (req) => req.headers['webhook-id'] === cancelled.event_id);
      expect((await deliveries(hook.id, 'cancelled')).map((row) => row.id)).toEqual([cancelled.id]);
    } finally {
      await ok.close();
    }
  });

  it('should cancel the pending deliveries of a subscription the service disables after a 410', async () => {
    const gone = await WebhookReceiver.start({ replies: [500, 410] });
    try {
      const hook = await createWebhook(t.http, owner.token, {
        url: gone.url,
        events: ['subscriber.created'],
      });
      // The first fails and waits 30 s for its retry; the second is answered 410, which disables the subscription.
      await createSubscriber(t, owner.token);
      await waitFor(async () => ((await deliveries(hook.id))[0]?.attempts === 1 ? true : undefined), {
        interval: 50,
      });
      await createSubscriber(t, owner.token);
      await waitFor(
        async () => ((await getWebhook(t.http, owner.token, hook.id)).enabled ? undefined : true),
        { interval: 50 },
      );
      const rows = await deliveries(hook.id);
      expect(rows.map((row) => row.status)).toEqual(['failed', 'cancelled']);
      expect(gone.requests).toHaveLength(2);
    } finally {
      await gone.close();
    }
  });

  it('should list deliveries only for a webhook of the tenant and with a known status', async () => {
    const get = (query: Record<string, string>) =>
      request(t.http).get('/api/v1/webhook-deliveries').query(query).set(bearer(owner.token));
    expectError(await get({}), 400, 'invalid_query', 'webhook_id');
    expectNotFound(await get({ webhook_id: 'whk_nope' }));
    const hook = await createWebhook(t.http, owner.token, { url: 'http://127.0.0.1:9/x', events: ['*'] });
    expectError(await get({ webhook_id: hook.id, status: 'lost' }), 400, 'invalid_query', 'status');
  });

  it('should claim through the partial index of pending deliveries', async () => {
    const indexes: { indexdef: string }[] = await t.dataSource.query(
      `SELECT indexdef FROM pg_indexes WHERE tablename = 'webhook_deliveries'
         AND indexname = 'ix_webhook_deliveries_claimable'`,
    );
    expect(indexes).toHaveLength(1);
    expect(indexes[0].indexdef).toMatch(/\(next_attempt_at\) WHERE \(status = 'pending'::text\)/);

    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query('SET LOCAL enable_seqscan = off');
      const plan: { 'QUERY PLAN': string }[] = await runner.query(`EXPLAIN ${CLAIM_SQL}`, [1000, 10]);
      expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toContain('ix_webhook_deliveries_claimable');
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
