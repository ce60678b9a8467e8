import request from 'supertest';
import { expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import {
  createWebhook,
  deleteAllWebhooks,
  type CreatedWebhook,
  WebhookReceiver,
} from '../support/webhook-receiver';
import { letTimePass, waitFor } from '../support/wait-for';

/** This process's clock runs ahead of the database's by this much while the skew is on. */
const SKEW_MS = 10 * 60_000;

/** Fakes only Date (timers stay real), running `SKEW_MS` ahead of the real clock and advancing with it. */
function skewClock(): void {
  jest.useFakeTimers({
    now: Date.now() + SKEW_MS,
    advanceTimers: true,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
}

/** Issue #11 item 10: leases, claims and retry times follow the database's clock, not each instance's. */
describe('Webhook worker on a skewed clock', () => {
  let t: TestApp;
  let owner: TenantWithToken;
  let receiver: WebhookReceiver;
  let hook: CreatedWebhook;
  /** subscriber.created events written before the webhook existed: none has a delivery yet. */
  let eventIds: string[];

  beforeAll(async () => {
    t = await startTestApp({
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    receiver = await WebhookReceiver.start({ fallback: 200 });
    owner = await createTenantWithToken(t, ['admin']);
    for (let i = 0; i < 3; i++) {
      await createSubscriber(t, owner.token);
    }
    const events = await request(t.http)
      .get('/api/v1/events')
      .query({ type: 'subscriber.created' })
      .set(bearer(owner.token));
    expectList(events);
    eventIds = (events.body.data as { id: string }[]).map((event) => event.id);
    expect(eventIds).toHaveLength(3);
    hook = await createWebhook(t.http, owner.token, { url: receiver.url, events: ['subscriber.created'] });
  });
  afterAll(async () => {
    jest.useRealTimers();
    await deleteAllWebhooks(t.http, owner.token);
    await t.close();
    await receiver.close();
  });

  /** A pending delivery of `eventId` to the hook, with times set by the database's clock. */
  async function queue(eventId: string, nextAttemptAt: string, lockedUntil: string | null): Promise<string> {
    const id = `dlv_CLOCK${eventId.slice(-21)}`;
    await t.dataSource.query(
      `INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, status, attempts,
         next_attempt_at, locked_until, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'subscriber.created', 'pending', 0, ${nextAttemptAt}, ${lockedUntil ?? 'NULL'},
         now(), now())`,
      [owner.tenantId, id, hook.id, eventId],
    );
    return id;
  }

  it('should neither take a delivery another worker leased nor one not yet due by the database clock', async () => {
    const [leased, notDue, due] = eventIds;
    skewClock();
    try {
      expect(Date.now() - new Date().getTime()).toBe(0);
      const leasedId = await queue(leased, "now() - interval '1 second'", "now() + interval '1 minute'");
      const notDueId = await queue(notDue, "now() + interval '1 minute'", null);
      await queue(due, "now() - interval '1 second'", null);

      // The due one goes out: the worker is polling all along.
      await receiver.waitFor(1, 10_000, (req) => req.headers['webhook-id'] === due);
      // The other two must NOT go out: the worker polls every 50 ms, so time is let pass on purpose.
      await letTimePass(500);

      expect(receiver.eventIds()).toEqual(new Set([due]));
      const rows: { id: string; attempts: number; status: string }[] = await t.dataSource.query(
        'SELECT id, attempts, status FROM webhook_deliveries WHERE id = ANY($1) ORDER BY id',
        [[leasedId, notDueId]],
      );
      expect(rows).toEqual([leasedId, notDueId].sort().map((id) => ({ id, attempts: 0, status: 'pending' })));
    } finally {
      jest.useRealTimers();
    }
  });

  it('should schedule a retry by the database clock', async () => {
    const failing = await WebhookReceiver.start({ fallback: 500 });
    try {
      const retried = await createWebhook(t.http, owner.token, {
        url: failing.url,
        events: ['subscriber.created'],
      });
      skewClock();
      try {
        await createSubscriber(t, owner.token);
        await failing.waitFor(1, 10_000);
        // The worker records the failed attempt (and its retry time) while the clock is still skewed.
        await waitFor(
          async () =>
            (
              await t.dataSource.query<unknown[]>(
                `SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND attempts = 1 AND locked_until IS NULL`,
                [retried.id],
              )
            ).length === 1,
          { what: 'the failed attempt recorded' },
        );
      } finally {
        jest.useRealTimers();
      }
      const [row]: { late_by_s: number; lease: boolean }[] = await t.dataSource.query(
        `SELECT extract(epoch FROM next_attempt_at - now())::float AS late_by_s, locked_until IS NOT NULL AS lease
         FROM webhook_deliveries WHERE webhook_id = $1`,
        [retried.id],
      );
      // The first retry is 5 s (±10 %) after the failed attempt, by the database's clock, not 10 minutes later.
      expect(row.lease).toBe(false);
      expect(row.late_by_s).toBeGreaterThan(3);
      expect(row.late_by_s).toBeLessThan(6);
    } finally {
      await failing.close();
    }
  });
});
