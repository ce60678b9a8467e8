import request from 'supertest';
import { fakeConnectDns } from '../support/fake-dns';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import {
  createWebhook,
  deleteAllWebhooks,
  DELIVERY_ENV,
  fakeRegistrationDns,
  getWebhook,
  waitForAttempts,
  WebhookReceiver,
} from '../support/webhook-receiver';
import { itRequiresAuthentication } from '../support/shared-cases';

const PUBLIC_ADDRESS = '93.184.216.34';

describe('Webhook callback addresses (SSRF)', () => {
  /** Private addresses refused, plain http allowed, no worker. */
  let guarded: TestApp;
  /** Private addresses refused and https required (the defaults), no worker. */
  let strict: TestApp;
  let owner: TenantWithToken;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    guarded = await startTestApp({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_WORKER_ENABLED: 'false' });
    strict = await startTestApp({ WEBHOOK_WORKER_ENABLED: 'false' });
    owner = await createTenantWithToken(guarded, ['admin']);
    receiver = await WebhookReceiver.start();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    if (owner) {
      await deleteAllWebhooks(guarded.http, owner.token);
    }
    await guarded?.close();
    await strict?.close();
    await receiver?.close();
  });

  const register = (app: TestApp, url: string) =>
    request(app.http)
      .post('/api/v1/webhooks')
      .set(bearer(owner.token))
      .send({ url, events: ['invoice.paid'] });

  describe('POST /api/v1/webhooks', () => {
    itRequiresAuthentication(() => guarded, 'post', '/api/v1/webhooks', {
      url: `http://${PUBLIC_ADDRESS}/hook`,
      events: ['*'],
    });

    it.each([
      ['the IPv4 loopback', () => `http://127.0.0.1:${receiver.port}/hook`],
      ['localhost', () => `http://localhost:${receiver.port}/hook`],
      ['a 10/8 private address', () => 'http://10.0.0.1/hook'],
      ['the IPv6 loopback', () => `http://[::1]:${receiver.port}/hook`],
      ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
      ['a 192.168/16 private address', () => 'http://192.168.1.10/hook'],
      ['a 172.16/12 private address', () => 'http://172.16.5.4/hook'],
      ['a carrier-grade NAT address', () => 'http://100.64.0.1/hook'],
      ['the unspecified address', () => `http://0.0.0.0:${receiver.port}/hook`],
      ['an IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${receiver.port}/hook`],
      ['an IPv6 unique-local address', () => 'http://[fd00::1]/hook'],
      ['an IPv6 link-local address', () => 'http://[fe80::1]/hook'],
      ['the loopback written in hex', () => `http://0x7f000001:${receiver.port}/hook`],
      ['an IPv6 loopback spelled out with IPv4', () => 'http://[0:0:0:0:0:ffff:127.0.0.1]/hook'],
    ])('should refuse %s with 422 validation_failed on url', async (_label, url) => {
      const res = await register(guarded, url());
      expectError(res, 422, 'validation_failed', 'url');
      expect(res.body.error.message).toMatch(/not allowed.*private/);
    });

    it('should accept a public address, so the refusals are about the address', async () => {
      const res = await register(guarded, `http://${PUBLIC_ADDRESS}/hook`);
      expectSuccess(res, 201);
      expect(res.body.data.url).toBe(`http://${PUBLIC_ADDRESS}/hook`);
    });

    it('should refuse a name that resolves to 127.0.0.1', async () => {
      const lookup = fakeRegistrationDns({ 'rebind.example': ['127.0.0.1'] });
      const res = await register(guarded, `http://rebind.example:${receiver.port}/hook`);
      expectError(res, 422, 'validation_failed', 'url');
      expect(res.body.error.message).toContain('127.0.0.1');
      expect(lookup).toHaveBeenCalledWith('rebind.example', expect.objectContaining({ all: true }));
    });

    it('should refuse a name when any one of its addresses is private', async () => {
      fakeRegistrationDns({ 'mixed.example': [PUBLIC_ADDRESS, '10.1.2.3'] });
      const res = await register(guarded, 'http://mixed.example/hook');
      expectError(res, 422, 'validation_failed', 'url');
      expect(res.body.error.message).toContain('10.1.2.3');
    });

    it('should accept a name whose addresses are all public', async () => {
      fakeRegistrationDns({ 'public.example': [PUBLIC_ADDRESS, '2606:2800:220:1:248:1893:25c8:1946'] });
      expectSuccess(await register(guarded, 'http://public.example/hook'), 201);
    });

    it('should refuse a name that does not resolve', async () => {
      const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), {
        code: 'ENOTFOUND',
      });
      fakeRegistrationDns({ 'nowhere.example': notFound });
      expectError(await register(guarded, 'http://nowhere.example/hook'), 422, 'validation_failed', 'url');
    });

    it('should refuse plain http without WEBHOOK_ALLOW_INSECURE and accept https', async () => {
      expectError(await register(strict, `http://${PUBLIC_ADDRESS}/hook`), 422, 'validation_failed', 'url');
      expectSuccess(await register(strict, `https://${PUBLIC_ADDRESS}/hook`), 201);
    });

    it('should refuse a private https address without WEBHOOK_ALLOW_PRIVATE', async () => {
      expectError(await register(strict, 'https://10.0.0.1/hook'), 422, 'validation_failed', 'url');
    });
  });

  describe('PATCH /api/v1/webhooks/{id}', () => {
    itRequiresAuthentication(() => guarded, 'patch', '/api/v1/webhooks/whk_00000000000000000000000000', {
      url: 'http://10.0.0.1/hook',
    });

    it('should refuse moving a webhook to a private address and keep its url', async () => {
      const hook = await createWebhook(guarded.http, owner.token, {
        url: `http://${PUBLIC_ADDRESS}/hook`,
        events: ['invoice.paid'],
      });
      for (const url of [
        `http://127.0.0.1:${receiver.port}/hook`,
        'http://169.254.169.254/',
        'http://[::1]/',
      ]) {
        const res = await request(guarded.http)
          .patch(`/api/v1/webhooks/${hook.id}`)
          .set(bearer(owner.token))
          .send({ url });
        expectError(res, 422, 'validation_failed', 'url');
      }
      const res = await request(strict.http)
        .patch(`/api/v1/webhooks/${hook.id}`)
        .set(bearer(owner.token))
        .send({ url: `http://${PUBLIC_ADDRESS}/other` });
      expectError(res, 422, 'validation_failed', 'url');
      expect((await getWebhook(guarded.http, owner.token, hook.id)).url).toBe(
        `http://${PUBLIC_ADDRESS}/hook`,
      );
    });
  });

  describe('at connect time', () => {
    /** A worker that refuses private addresses, with fast retries. */
    let worker: TestApp;
    /** Registration with private addresses allowed, no worker: to store a loopback url as an older config would. */
    let lenient: TestApp;
    let tenant: TenantWithToken;

    beforeAll(async () => {
      worker = await startTestApp({ ...DELIVERY_ENV, WEBHOOK_ALLOW_PRIVATE: 'false' });
      lenient = await startTestApp({
        WEBHOOK_ALLOW_INSECURE: 'true',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_WORKER_ENABLED: 'false',
      });
      tenant = await createTenantWithToken(worker, ['admin']);
    });
    afterAll(async () => {
      if (tenant) {
        await deleteAllWebhooks(worker.http, tenant.token);
      }
      await worker?.close();
      await lenient?.close();
    });

    it('should refuse a name re-pointed at 127.0.0.1 after registration (DNS rebinding)', async () => {
      const target = await WebhookReceiver.start();
      try {
        fakeRegistrationDns({ 'rebind.example': [PUBLIC_ADDRESS] });
        const hook = await createWebhook(worker.http, tenant.token, {
          url: `http://rebind.example:${target.port}/hook`,
          events: ['subscriber.created'],
        });
        const connectLookup = fakeConnectDns({ 'rebind.example': ['127.0.0.1'] });
        await createSubscriber(worker, tenant.token);

        // Every retry is refused the same way; waiting for the last leaves nothing pending.
        const log = await waitForAttempts(worker.http, tenant.token, hook.id, 4, 15_000);
        for (const attempt of log) {
          expect(attempt).toMatchObject({ event_type: 'subscriber.created', status_code: null });
          expect(attempt.error).toMatch(/127\.0\.0\.1/);
          expect(attempt.error).toMatch(/private/);
        }
        expect(log[0].next_attempt_at).toBeNull();
        expect(connectLookup).toHaveBeenCalledWith(
          'rebind.example',
          expect.objectContaining({ all: true }),
          expect.any(Function),
        );
        expect(target.requests).toEqual([]);
      } finally {
        await target.close();
      }
    });

    it('should refuse a loopback url stored while private addresses were allowed', async () => {
      const target = await WebhookReceiver.start();
      try {
        const hook = await createWebhook(lenient.http, tenant.token, {
          url: target.url,
          events: ['subscriber.created'],
        });
        await createSubscriber(worker, tenant.token);

        const log = await waitForAttempts(worker.http, tenant.token, hook.id, 4, 15_000);
        for (const attempt of log) {
          expect(attempt.status_code).toBeNull();
          expect(attempt.error).toMatch(/127\.0\.0\.1.*private/);
        }
        expect(target.requests).toEqual([]);
      } finally {
        await target.close();
      }
    });
  });
});
