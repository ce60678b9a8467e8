import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { createInvoice } from '../support/billing-factory';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createSubscriber,
  type CreatedSubscriber,
  listEvents,
  postStatus,
  postSubscriber,
  uniqueRef,
} from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import {
  ATTEMPT_ID,
  type AttemptRecord,
  createWebhook,
  DELIVERY_ID,
  EVENT_ID,
  getWebhook,
  listAttempts,
  type ReceivedRequest,
  type ReceiverOptions,
  signatureEntries,
  verifies,
  waitForAttempts,
  WebhookReceiver,
  webhookHeaders,
  closeDeliverySuite,
  DELIVERY_ENV,
} from '../support/webhook-receiver';

/** Fast retries (0.2 s each, three of them), loopback receivers allowed, plain http allowed. */
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('Webhook delivery', () => {
  let t: TestApp;
  const tenants: TenantWithToken[] = [];
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestApp(DELIVERY_ENV);
  });
  afterAll(() => closeDeliverySuite(t, tenants, receivers));

  async function tenant(): Promise<TenantWithToken> {
    const made = await createTenantWithToken(t, ['admin']);
    tenants.push(made);
    return made;
  }

  async function receiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
    const made = await WebhookReceiver.start(options);
    receivers.push(made);
    return made;
  }

  function subscriberCreated(req: ReceivedRequest, subscriber: CreatedSubscriber): boolean {
    return req.body?.type === 'subscriber.created' && req.body.data.object.id === subscriber.id;
  }

  describe('signing and payload', () => {
    it('should deliver subscriber.created signed so that standardwebhooks verifies it', async () => {
      const owner = await tenant();
      const endpoint = await receiver();
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });

      const created = await postSubscriber(t, owner.token, { full_name: 'Grace Hopper', status: 'prospect' });
      expectSuccess(created, 201);
      const subscriber = created.body.data as CreatedSubscriber;

      const [delivery] = await endpoint.waitForType('subscriber.created');
      const verified = new Webhook(hook.secret).verify(delivery.rawBody, webhookHeaders(delivery));
      expect(verified).toEqual(delivery.body);

      const [event] = await listEvents(t, owner.token, {
        type: 'subscriber.created',
        subject_id: subscriber.id,
      });
      expect(Object.keys(delivery.body!).sort()).toEqual(['created_at', 'data', 'id', 'type']);
      expect(delivery.body).toEqual({
        id: event.id,
        type: 'subscriber.created',
        created_at: event.created_at,
        data: event.data,
      });
      expect(delivery.body!.id).toMatch(EVENT_ID);
      expect(delivery.body!.created_at).toMatch(ISO_MS);
      expect(delivery.body!.data.object).toMatchObject({
        id: subscriber.id,
        full_name: 'Grace Hopper',
        status: 'prospect',
      });
    });

    it('should send the Standard Webhooks headers, JSON and a User-Agent with a POST', async () => {
      const owner = await tenant();
      const endpoint = await receiver();
      await createWebhook(t.http, owner.token, { url: endpoint.url, events: ['subscriber.created'] });
      const before = Math.floor(Date.now() / 1000);
      await createSubscriber(t, owner.token);

      const [delivery] = await endpoint.waitForType('subscriber.created');
      expect(delivery.method).toBe('POST');
      expect(delivery.path).toBe('/hook');
      expect(delivery.headers['content-type']).toMatch(/^application\/json/);
      expect(delivery.headers['user-agent']).toMatch(/^isp-api-webhooks\//);
      expect(delivery.headers['webhook-id']).toBe(delivery.body!.id);
      const timestamp = Number(delivery.headers['webhook-timestamp']);
      expect(String(timestamp)).toBe(delivery.headers['webhook-timestamp']);
      expect(timestamp).toBeGreaterThanOrEqual(before);
      expect(timestamp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
      expect(signatureEntries(delivery)).toEqual([expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/)]);
    });

    it('should not verify with another secret or with a changed body', async () => {
      const owner = await tenant();
      const endpoint = await receiver();
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      const other = await createWebhook(t.http, owner.token, { url: endpoint.url, events: ['invoice.paid'] });
      await createSubscriber(t, owner.token);

      const [delivery] = await endpoint.waitForType('subscriber.created');
      expect(verifies(hook.secret, delivery)).toBe(true);
      expect(verifies(other.secret, delivery)).toBe(false);
      const tampered = { ...delivery, rawBody: delivery.rawBody.replace('"prospect"', '"active"') };
      expect(tampered.rawBody).not.toBe(delivery.rawBody);
      expect(verifies(hook.secret, tampered)).toBe(false);
    });

    it('should log a successful attempt with its status, duration and no next attempt', async () => {
      const owner = await tenant();
      const endpoint = await receiver({ fallback: { status: 204 } });
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(t, owner.token);
      const [delivery] = await endpoint.waitForType('subscriber.created');

      const [attempt] = await waitForAttempts(t.http, owner.token, hook.id, 1);
      expect(attempt).toEqual({
        id: expect.stringMatching(ATTEMPT_ID),
        delivery_id: expect.stringMatching(DELIVERY_ID),
        event_id: delivery.body!.id,
        event_type: 'subscriber.created',
        attempt: 1,
        status_code: 204,
        duration_ms: expect.any(Number),
        error: null,
        response_body: '',
        next_attempt_at: null,
        created_at: expect.stringMatching(ISO_MS),
      });
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    });
  });

  describe('filtering by event type', () => {
    it('should deliver each event only to the subscriptions whose patterns match it', async () => {
      const owner = await tenant();
      const invoices = await receiver();
      const exact = await receiver();
      const prefix = await receiver();
      const all = await receiver();
      const disabled = await receiver();
      const invoiceHook = await createWebhook(t.http, owner.token, {
        url: invoices.url,
        events: ['invoice.*'],
      });
      const exactHook = await createWebhook(t.http, owner.token, {
        url: exact.url,
        events: ['subscriber.created'],
      });
      await createWebhook(t.http, owner.token, { url: prefix.url, events: ['subscriber.*'] });
      await createWebhook(t.http, owner.token, { url: all.url, events: ['*'] });
      await createWebhook(t.http, owner.token, { url: disabled.url, events: ['*'], enabled: false });

      const subscriber = await createSubscriber(t, owner.token);
      const invoice = await createInvoice(t, owner.token, subscriber.id);
      expectSuccess(await postStatus(t, owner.token, subscriber.id, 'active'));

      await all.waitFor(3, 10_000, (req) =>
        ['subscriber.created', 'invoice.created', 'subscriber.status_changed'].includes(req.body?.type ?? ''),
      );
      await prefix.waitForType('subscriber.status_changed');
      await exact.waitForType('subscriber.created');
      await invoices.waitForType('invoice.created');
      // The last events were queued after the first: a wrong delivery would have been sent before these arrived.
      await waitForAttempts(t.http, owner.token, invoiceHook.id, 1);
      await waitForAttempts(t.http, owner.token, exactHook.id, 1);

      const types = (r: WebhookReceiver) => r.requests.map((req) => req.body?.type).sort();
      expect(types(invoices)).toContain('invoice.created');
      expect(types(invoices).every((type) => type?.startsWith('invoice.'))).toBe(true);
      for (const req of invoices.requests) {
        expect(req.body!.data.object.id).toBe(invoice.id);
      }
      expect(types(exact)).toEqual(['subscriber.created']);
      expect(types(prefix)).toEqual(['subscriber.created', 'subscriber.status_changed']);
      expect(types(all)).toEqual(expect.arrayContaining(['invoice.created', 'subscriber.created']));
      expect(types(all).every((type) => typeof type === 'string')).toBe(true);
      expect(disabled.requests).toEqual([]);
      const invoiceLog = await listAttempts(t.http, owner.token, invoiceHook.id);
      expect(invoiceLog.every((a) => a.event_type.startsWith('invoice.'))).toBe(true);
      expect((await listAttempts(t.http, owner.token, exactHook.id)).map((a) => a.event_type)).toEqual([
        'subscriber.created',
      ]);
    });

    it("should deliver to '*' everything the tenant writes, including webhook events", async () => {
      const owner = await tenant();
      const all = await receiver();
      const hook = await createWebhook(t.http, owner.token, { url: all.url, events: ['*'] });
      await request(t.http)
        .patch(`/api/v1/webhooks/${hook.id}`)
        .set(bearer(owner.token))
        .send({ description: 'everything' })
        .expect(200);
      await createSubscriber(t, owner.token);
      await all.waitForType('subscriber.created');
      await all.waitForType('webhook.updated');

      const events = await listEvents(t, owner.token, {});
      const expected = events
        .filter((event) => event.created_at >= hook.created_at && event.type !== 'webhook.created')
        .map((event) => event.id);
      await all.waitFor(expected.length, 10_000, (req) => expected.includes(req.body?.id ?? ''));
    });

    it("should never deliver one tenant's events to another tenant's subscriptions", async () => {
      const owner = await tenant();
      const stranger = await tenant();
      const mine = await receiver();
      const theirs = await receiver();
      await createWebhook(t.http, owner.token, { url: mine.url, events: ['subscriber.*'] });
      await createWebhook(t.http, stranger.token, { url: theirs.url, events: ['subscriber.*'] });
      const subscriber = await createSubscriber(t, owner.token);
      await mine.waitFor(1, 10_000, (req) => subscriberCreated(req, subscriber));
      const sentinel = await createSubscriber(t, stranger.token);
      await theirs.waitFor(1, 10_000, (req) => subscriberCreated(req, sentinel));
      expect(theirs.requests.map((req) => req.body?.data.object.id)).toEqual([sentinel.id]);
    });
  });

  describe('retries', () => {
    it('should retry after a 500 with the same webhook-id and log both attempts', async () => {
      const owner = await tenant();
      const endpoint = await receiver({ replies: [{ status: 500, body: 'database down' }, 200] });
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(t, owner.token);

      const [first, second] = await endpoint.waitFor(2);
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(second.rawBody).toBe(first.rawBody);
      expect(verifies(hook.secret, first)).toBe(true);
      expect(verifies(hook.secret, second)).toBe(true);
      // 0.2 s less 10 % jitter
      expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(170);

      const log = await waitForAttempts(t.http, owner.token, hook.id, 2);
      expect(log).toHaveLength(2);
      const [latest, earliest] = log;
      expect(earliest).toMatchObject({
        attempt: 1,
        status_code: 500,
        error: expect.stringContaining('500'),
        response_body: 'database down',
        next_attempt_at: expect.stringMatching(ISO_MS),
        event_id: first.headers['webhook-id'],
      });
      expect(Date.parse(earliest.next_attempt_at!)).toBeGreaterThan(Date.parse(earliest.created_at));
      expect(latest).toMatchObject({
        attempt: 2,
        status_code: 200,
        error: null,
        next_attempt_at: null,
        delivery_id: earliest.delivery_id,
        event_id: earliest.event_id,
      });
      expect(endpoint.requests).toHaveLength(2);
    });

    it('should give up after the last retry delay and keep the subscription enabled', async () => {
      const owner = await tenant();
      const endpoint = await receiver({ fallback: { status: 503, body: 'x'.repeat(5000) } });
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(t, owner.token);

      const log = await waitForAttempts(t.http, owner.token, hook.id, 4, 15_000);
      expect(log.map((a) => a.attempt)).toEqual([4, 3, 2, 1]);
      expect(log.map((a) => a.status_code)).toEqual([503, 503, 503, 503]);
      expect(log[0].next_attempt_at).toBeNull();
      for (const attempt of log.slice(1)) {
        expect(attempt.next_attempt_at).toMatch(ISO_MS);
      }
      // The first KiB of the answer is kept.
      expect(log[0].response_body).toBe('x'.repeat(1024));
      expect(new Set(endpoint.requests.map((req) => req.headers['webhook-id'])).size).toBe(1);
      expect(await getWebhook(t.http, owner.token, hook.id)).toMatchObject({
        enabled: true,
        disabled_reason: null,
      });
    });

    it('should honour Retry-After on a 429', async () => {
      const owner = await tenant();
      const endpoint = await receiver({ replies: [{ status: 429, headers: { 'Retry-After': '1' } }, 200] });
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(t, owner.token);

      const [first, second] = await endpoint.waitFor(2);
      expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(900);
      const [, earliest] = await waitForAttempts(t.http, owner.token, hook.id, 2);
      expect(earliest.status_code).toBe(429);
      expect(Date.parse(earliest.next_attempt_at!) - Date.parse(earliest.created_at)).toBeGreaterThanOrEqual(
        990,
      );
    });

    it('should log a timed-out attempt without a status and retry it', async () => {
      const owner = await tenant();
      const endpoint = await receiver({ replies: [{ status: 200, delayMs: 3000 }, 200] });
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(t, owner.token);

      const [latest, earliest] = await waitForAttempts(t.http, owner.token, hook.id, 2, 15_000);
      expect(earliest).toMatchObject({
        attempt: 1,
        status_code: null,
        error: expect.stringMatching(/timed out/),
      });
      expect(earliest.duration_ms).toBeGreaterThanOrEqual(1900);
      expect(earliest.duration_ms).toBeLessThan(3000);
      expect(latest).toMatchObject({ attempt: 2, status_code: 200, error: null });
    });
  });

  describe('410 Gone', () => {
    it('should disable the subscription after a 410 and not retry', async () => {
      const owner = await tenant();
      const endpoint = await receiver({ fallback: 410 });
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(t, owner.token);

      await endpoint.waitFor(1);
      const [attempt] = await waitForAttempts(t.http, owner.token, hook.id, 1);
      expect(attempt).toMatchObject({ attempt: 1, status_code: 410, next_attempt_at: null });
      const disabled = await getWebhook(t.http, owner.token, hook.id);
      expect(disabled.enabled).toBe(false);
      expect(disabled.disabled_reason).toEqual(expect.stringContaining('410'));

      // A disabled subscription gets no new deliveries.
      await createSubscriber(t, owner.token);
      const [event] = await listEvents(t, owner.token, { type: 'subscriber.created', limit: '1' });
      expect(event.id).not.toBe(attempt.event_id);
      expect(await listAttempts(t.http, owner.token, hook.id)).toHaveLength(1);
      expect(endpoint.requests).toHaveLength(1);
    });

    it('should deliver again once a subscription disabled by a 410 is re-enabled', async () => {
      const owner = await tenant();
      const endpoint = await receiver({ replies: [410] });
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(t, owner.token);
      await endpoint.waitFor(1);
      await waitForAttempts(t.http, owner.token, hook.id, 1);

      const enabled = await request(t.http)
        .patch(`/api/v1/webhooks/${hook.id}`)
        .set(bearer(owner.token))
        .send({ enabled: true });
      expectSuccess(enabled);
      expect(enabled.body.data).toMatchObject({ enabled: true, disabled_reason: null });
      const later = await createSubscriber(t, owner.token);
      await endpoint.waitFor(1, 10_000, (req) => subscriberCreated(req, later));
    });
  });

  describe('redelivery', () => {
    it('should send the same event again, as a new delivery, on request', async () => {
      const owner = await tenant();
      const endpoint = await receiver();
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(t, owner.token);
      const [original] = await endpoint.waitFor(1);
      const [attempt] = await waitForAttempts(t.http, owner.token, hook.id, 1);

      const res = await request(t.http)
        .post(`/api/v1/webhook-deliveries/${attempt.delivery_id}/redeliver`)
        .set(bearer(owner.token));
      expectSuccess(res, 202);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(DELIVERY_ID),
        webhook_id: hook.id,
        event_id: attempt.event_id,
        status: 'pending',
      });
      expect(res.body.data.id).not.toBe(attempt.delivery_id);

      const [, again] = await endpoint.waitFor(2);
      expect(again.headers['webhook-id']).toBe(original.headers['webhook-id']);
      expect(again.body).toEqual(original.body);
      expect(verifies(hook.secret, again)).toBe(true);

      const log = await waitForAttempts(t.http, owner.token, hook.id, 2);
      expect(log[0]).toMatchObject({
        delivery_id: res.body.data.id,
        event_id: attempt.event_id,
        attempt: 1,
        status_code: 200,
      });
    });

    it('should refuse a token with only webhooks:read', async () => {
      const reader = await createTenantWithToken(t, ['webhooks:read']);
      const res = await request(t.http)
        .post('/api/v1/webhook-deliveries/dlv_00000000000000000000000000/redeliver')
        .set(bearer(reader.token));
      expectError(res, 403, 'insufficient_scope');
    });
  });

  describe('secret rotation', () => {
    it('should sign with the new and the old secret for the grace period after a rotation', async () => {
      const owner = await tenant();
      const endpoint = await receiver();
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      const before = await createSubscriber(t, owner.token);
      const [plain] = await endpoint.waitFor(1, 10_000, (req) => subscriberCreated(req, before));
      expect(signatureEntries(plain)).toHaveLength(1);

      const rotated = await request(t.http)
        .post(`/api/v1/webhooks/${hook.id}/rotate-secret`)
        .set(bearer(owner.token));
      expectSuccess(rotated, 200);
      const newSecret = rotated.body.data.secret as string;
      expect(newSecret).not.toBe(hook.secret);

      const after = await createSubscriber(t, owner.token);
      const [delivery] = await endpoint.waitFor(1, 10_000, (req) => subscriberCreated(req, after));
      const entries = signatureEntries(delivery);
      expect(entries).toHaveLength(2);
      for (const entry of entries) {
        expect(entry).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      }

      // Each secret verifies the delivery, each through exactly one of the two entries.
      expect(verifies(newSecret, delivery)).toBe(true);
      expect(verifies(hook.secret, delivery)).toBe(true);
      const byNew = entries.filter((entry) => verifies(newSecret, delivery, entry));
      const byOld = entries.filter((entry) => verifies(hook.secret, delivery, entry));
      expect(byNew).toHaveLength(1);
      expect(byOld).toHaveLength(1);
      expect(byNew[0]).not.toBe(byOld[0]);
    });
  });

  describe('test ping', () => {
    it('should deliver webhook.test to that webhook only', async () => {
      const owner = await tenant();
      const target = await receiver();
      const bystander = await receiver();
      const hook = await createWebhook(t.http, owner.token, {
        url: target.url,
        events: ['subscriber.created'],
      });
      const other = await createWebhook(t.http, owner.token, { url: bystander.url, events: ['*'] });

      const res = await request(t.http).post(`/api/v1/webhooks/${hook.id}/test`).set(bearer(owner.token));
      expectSuccess(res, 202);
      const [ping] = await target.waitForType('webhook.test');
      expect(ping.headers['webhook-id']).toBe(res.body.data.event_id);
      expect(ping.body).toMatchObject({ id: res.body.data.event_id, type: 'webhook.test' });
      expect(ping.body!.data.object).toMatchObject({ id: hook.id });
      expect(verifies(hook.secret, ping)).toBe(true);
      expect(ping.rawBody).not.toContain(hook.secret.slice('whsec_'.length));
      const [attempt] = await waitForAttempts(t.http, owner.token, hook.id, 1);
      expect(attempt).toMatchObject({
        delivery_id: res.body.data.delivery_id,
        event_id: res.body.data.event_id,
        event_type: 'webhook.test',
        status_code: 200,
      });

      // A later event reaches the '*' subscription; the ping, queued before it, never did.
      const sentinel = await createSubscriber(t, owner.token);
      await bystander.waitFor(1, 10_000, (req) => subscriberCreated(req, sentinel));
      expect(bystander.ofType('webhook.test')).toEqual([]);
      expect((await listAttempts(t.http, owner.token, other.id)).map((a) => a.event_type)).not.toContain(
        'webhook.test',
      );
    });
  });

  describe('redirects', () => {
    it('should not follow a redirect and log the attempt as a failure with its 3xx status', async () => {
      const owner = await tenant();
      const elsewhere = await receiver();
      const endpoint = await receiver({ fallback: { status: 302, headers: { Location: elsewhere.url } } });
      const hook = await createWebhook(t.http, owner.token, {
        url: endpoint.url,
        events: ['subscriber.created'],
      });
      await createSubscriber(t, owner.token);

      // Every retry is refused the same way: wait for the last one, so nothing is left pending.
      const log = await waitForAttempts(t.http, owner.token, hook.id, 4, 15_000);
      expect(log.map((a) => a.status_code)).toEqual([302, 302, 302, 302]);
      for (const attempt of log) {
        expect(attempt.error).toEqual(expect.stringContaining('302'));
      }
      expect(log[log.length - 1].next_attempt_at).toMatch(ISO_MS);
      expect(log[0].next_attempt_at).toBeNull();
      expect(endpoint.requests).toHaveLength(4);
      expect(elsewhere.requests).toEqual([]);
    });
  });

  describe('transactional outbox', () => {
    it('should deliver nothing for a change that was rolled back', async () => {
      const owner = await tenant();
      const endpoint = await receiver();
      const hook = await createWebhook(t.http, owner.token, { url: endpoint.url, events: ['*'] });
      const externalId = uniqueRef();
      const first = await createSubscriber(t, owner.token, { external_id: externalId });
      const duplicate = await postSubscriber(t, owner.token, {
        external_id: externalId,
        full_name: 'Second Try',
        status: 'prospect',
      });
      expectError(duplicate, 409, 'duplicate_subscriber', 'external_id');
      const sentinel = await createSubscriber(t, owner.token);

      await endpoint.waitFor(1, 10_000, (req) => subscriberCreated(req, sentinel));
      await endpoint.waitFor(1, 10_000, (req) => subscriberCreated(req, first));
      const created = endpoint.ofType('subscriber.created');
      expect(created.map((req) => req.body!.data.object.id).sort()).toEqual([first.id, sentinel.id].sort());
      expect(endpoint.rawBodies().some((body) => body.includes('Second Try'))).toBe(false);

      const events = await listEvents(t, owner.token, { type: 'subscriber.created' });
      expect(events.map((event) => event.subject_id).sort()).toEqual([first.id, sentinel.id].sort());
      const log = await waitForAttempts(t.http, owner.token, hook.id, 2, 10_000, (a: AttemptRecord) =>
        a.event_type.startsWith('subscriber.'),
      );
      expect(log.filter((a) => a.event_type === 'subscriber.created')).toHaveLength(2);
    });

    it('should deliver nothing for an event written before the request failed and rolled back', async () => {
      // A refund appends transaction.refunded on its payment before its own insert, which then fails on a
      // duplicate external_id: the event and its delivery must go with the rollback.
      const owner = await tenant();
      const endpoint = await receiver();
      const hook = await createWebhook(t.http, owner.token, { url: endpoint.url, events: ['transaction.*'] });
      const subscriber = await createSubscriber(t, owner.token);
      const post = (body: Record<string, unknown>) =>
        request(t.http)
          .post('/api/v1/transactions')
          .set(bearer(owner.token))
          .send({ subscriber_id: subscriber.id, source: 'external', currency: 'USD', ...body });
      const payment = await post({ kind: 'payment', amount: 1000, external_id: uniqueRef() });
      expectSuccess(payment, 201);
      const refund = await post({
        kind: 'refund',
        amount: 100,
        refund_of: payment.body.data.id,
        external_id: payment.body.data.external_id,
      });
      expectError(refund, 409, 'duplicate_transaction', 'external_id');
      // A later event: once it has arrived, anything queued before it has had its turn.
      expectSuccess(await post({ kind: 'credit', amount: 50 }), 201);

      await endpoint.waitFor(2, 10_000, (req) => req.body?.type === 'transaction.created');
      const log = await waitForAttempts(t.http, owner.token, hook.id, 2, 10_000);
      expect(log.map((a) => a.event_type)).toEqual(['transaction.created', 'transaction.created']);
      expect(endpoint.ofType('transaction.refunded')).toEqual([]);
      expect(await listEvents(t, owner.token, { type: 'transaction.refunded' })).toEqual([]);
      const stored = await request(t.http)
        .get(`/api/v1/transactions/${payment.body.data.id}`)
        .set(bearer(owner.token));
      expect(stored.body.data.refunded_amount).toBe(0);
    });
  });
});
