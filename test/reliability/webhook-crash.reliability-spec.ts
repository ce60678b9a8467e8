import request from 'supertest';
import { expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import { type ServerChild, startSuiteServer } from '../support/server-process';
import { createTenantWithToken, uniqueSlug } from '../support/test-app';
import { createWebhook, deleteAllWebhooks, listAttempts, WebhookReceiver } from '../support/webhook-receiver';
import { waitFor } from '../support/wait-for';

const SUBSCRIBERS = 30;

/**
 * A worker killed with SIGKILL in the middle of a backlog leaves deliveries claimed (leased) and pending. A new
 * process on the same database must deliver every event at least once: the pending ones at once, the leased ones
 * when their lease (WEBHOOK_TIMEOUT_MS + a margin) runs out.
 */
describe('Webhook delivery across a crash', () => {
  const env = {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_ALLOW_INSECURE: 'true',
    WEBHOOK_POLL_MS: '100',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_RETRY_DELAYS_S: '0.2,0.2,0.2',
    // Two at a time against a receiver that takes 300 ms: a backlog of about 4.5 s builds up.
    WEBHOOK_CONCURRENCY: '2',
  };
  let first: ServerChild | undefined;
  let second: ServerChild | undefined;
  let receiver: WebhookReceiver;
  let token: string | undefined;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start({ fallback: { status: 200, delayMs: 300 } });
  });
  afterAll(async () => {
    if (second && token) {
      await deleteAllWebhooks(second.url, token);
    }
    await first?.stop('SIGKILL');
    await second?.stop('SIGTERM');
    await receiver?.close();
  });

  it('should deliver every event at least once after the worker is killed with SIGKILL and restarted', async () => {
    first = await startSuiteServer(env);
    token = (await createTenantWithToken(first.url, ['admin'], uniqueSlug('crash'))).token;
    const hook = await createWebhook(first.url, token, { url: receiver.url, events: ['subscriber.created'] });

    const created = await Promise.all(
      Array.from({ length: SUBSCRIBERS }, (_, i) =>
        request(first!.url)
          .post('/api/v1/subscribers')
          .set(bearer(token!))
          .send({ full_name: `Backlog ${i}`, status: 'prospect' }),
      ),
    );
    expect(created.map((res) => res.status)).toEqual(Array(SUBSCRIBERS).fill(201));

    await receiver.waitFor(3, 20_000);
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    // The kill came mid-backlog: most events were still owed, and the requests in flight were never answered.
    const answeredBeforeCrash = receiver.answeredEventIds().size;
    expect(answeredBeforeCrash).toBeLessThan(SUBSCRIBERS);

    second = await startSuiteServer(env);
    const events = await request(second.url)
      .get('/api/v1/events?type=subscriber.created&limit=100')
      .set(bearer(token));
    expectList(events);
    const eventIds = (events.body.data as { id: string }[]).map((event) => event.id);
    expect(eventIds).toHaveLength(SUBSCRIBERS);

    // At least once: every event reaches the receiver and gets its answer; duplicates are allowed.
    const owed = () => eventIds.filter((id) => !receiver.answeredEventIds().has(id));
    await waitFor(() => Promise.resolve(owed().length === 0 ? true : undefined), {
      timeout: 45_000,
      interval: 50,
      what: `every event answered by the receiver (${answeredBeforeCrash} were before the kill)`,
    }).catch((error: Error) => {
      throw new Error(`${error.message}; still owed: ${JSON.stringify(owed())}`);
    });
    expect([...receiver.eventIds()].sort()).toEqual([...eventIds].sort());

    // The attempt log shows a successful attempt for every event.
    const delivered = await waitFor(
      async () => {
        const log = await listAttempts(second!.url, token!, hook.id);
        const ok = new Set(log.filter((a) => a.status_code === 200).map((a) => a.event_id));
        return eventIds.every((id) => ok.has(id)) ? ok : undefined;
      },
      { timeout: 10_000, interval: 50, what: 'a 200 attempt in the log for every event' },
    );
    expect(delivered.size).toBe(SUBSCRIBERS);
  }, 120_000);
});
