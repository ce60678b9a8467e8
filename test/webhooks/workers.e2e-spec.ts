import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import {
  createWebhook,
  deleteAllWebhooks,
  getWebhook,
  listAttempts,
  waitForAttempts,
  WebhookReceiver,
} from '../support/webhook-receiver';
import { letTimePass, waitFor } from '../support/wait-for';

const BASE_ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_ALLOW_INSECURE: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '2000',
};

describe('Webhook workers', () => {
  describe('two instances on one database', () => {
    let apps: TestApp[] = [];
    let owner: TenantWithToken | undefined;
    let receiver: WebhookReceiver;

    beforeAll(async () => {
      const env = { ...BASE_ENV, WEBHOOK_RETRY_DELAYS_S: '0.2,0.2,0.2', WEBHOOK_CONCURRENCY: '3' };
      apps = [await startTestApp(env), await startTestApp(env)];
      receiver = await WebhookReceiver.start({ fallback: { status: 200, delayMs: 50 } });
    });
    afterAll(async () => {
      if (owner) {
        await deleteAllWebhooks(apps[0].http, owner.token);
      }
      for (const app of apps) {
        await app.close();
      }
      await receiver?.close();
    });

    it('should share the backlog and send each event once', async () => {
      const [a, b] = apps;
      owner = await createTenantWithToken(a, ['admin']);
      const hook = await createWebhook(a.http, owner.token, {
        url: receiver.url,
        events: ['subscriber.created'],
      });
      const count = 20;
      // Half the changes through each instance: each wakes its own worker, both poll.
      await Promise.all(
        Array.from({ length: count }, (_, i) => createSubscriber(i % 2 === 0 ? a : b, owner!.token)),
      );

      await receiver.waitFor(count, 20_000);
      const log = await waitForAttempts(
        a.http,
        owner.token,
        hook.id,
        count,
        10_000,
        (x) => x.status_code === 200,
      );
      expect(log).toHaveLength(count);
      expect(new Set(log.map((attempt) => attempt.event_id)).size).toBe(count);
      expect(receiver.requests).toHaveLength(count);
      expect(receiver.eventIds().size).toBe(count);
    });
  });

  describe('a subscription that keeps failing', () => {
    let app: TestApp;
    let owner: TenantWithToken | undefined;
    let receiver: WebhookReceiver;

    beforeAll(async () => {
      app = await startTestApp({
        ...BASE_ENV,
        WEBHOOK_RETRY_DELAYS_S: '0.5,0.5,0.5,0.5',
        WEBHOOK_DISABLE_AFTER_S: '1',
      });
      receiver = await WebhookReceiver.start({ fallback: 500 });
    });
    afterAll(async () => {
      if (owner) {
        await deleteAllWebhooks(app.http, owner.token);
      }
      await app?.close();
      await receiver?.close();
    });

    it('should be disabled once every attempt has failed for WEBHOOK_DISABLE_AFTER_S', async () => {
      owner = await createTenantWithToken(app, ['admin']);
      const hook = await createWebhook(app.http, owner.token, {
        url: receiver.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(app, owner.token);

      const disabled = await waitFor(
        async () => {
          const record = await getWebhook(app.http, owner!.token, hook.id);
          return record.enabled ? undefined : record;
        },
        { timeout: 15_000, interval: 50, what: 'the subscription disabled' },
      );
      expect(disabled.enabled).toBe(false);
      expect(disabled.disabled_reason).toEqual(expect.stringContaining('failed'));

      // Once disabled, what is still pending is not attempted any more.
      const attempts = (await listAttempts(app.http, owner.token, hook.id)).length;
      const requests = receiver.requests.length;
      expect(attempts).toBeLessThan(5);
      await createSubscriber(app, owner.token);
      // Nothing more may be attempted: several poll and retry intervals (100 and 200 ms) are let pass on purpose.
      await letTimePass(1200);
      expect(await listAttempts(app.http, owner.token, hook.id)).toHaveLength(attempts);
      expect(receiver.requests).toHaveLength(requests);
    });
  });
});
