import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { expectError, expectList, expectSuccess, expectNotFound, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import { listEvents } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import {
  createWebhook,
  DELIVERY_ID,
  deleteAllWebhooks,
  EVENT_ID,
  getWebhook,
  listAttempts,
  WEBHOOK_ID,
  WEBHOOK_SECRET,
  type WebhookRecord,
} from '../support/webhook-receiver';
import { itRequiresAuthentication } from '../support/shared-cases';

const RECORD_KEYS = [
  'created_at',
  'description',
  'disabled_reason',
  'enabled',
  'events',
  'id',
  'updated_at',
  'url',
];
const CALLBACK = 'https://hooks.example.net/isp';

/**
 * The webhook management API. The worker is off in this suite (nothing is delivered), private addresses are allowed
 * so registration needs no DNS, and every webhook made here is deleted at the end with its pending deliveries.
 */
describe('Webhooks API', () => {
  let t: TestApp;
  let owner: TenantWithToken;
  let other: TenantWithToken;
  let reader: TenantWithToken;
  let writer: TenantWithToken;
  let outsider: TenantWithToken;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_WORKER_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await createTenantWithToken(t, ['admin']);
    other = await createTenantWithToken(t, ['admin']);
    reader = await createTenantWithToken(t, ['webhooks:read']);
    writer = await createTenantWithToken(t, ['webhooks:write']);
    outsider = await createTenantWithToken(t, ['subscribers:read', 'subscribers:write']);
  });
  afterAll(async () => {
    for (const tenant of [owner, other, writer].filter(Boolean)) {
      await deleteAllWebhooks(t.http, t.adminToken, tenant.tenantId);
    }
    await t?.close();
  });

  const post = (body: Record<string, unknown>, token = owner.token) =>
    request(t.http).post('/api/v1/webhooks').set(bearer(token)).send(body);

  describe('POST /api/v1/webhooks', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/webhooks', { url: CALLBACK, events: ['*'] });

    it('should refuse a token without the webhooks:write scope', async () => {
      expectError(await post({ url: CALLBACK, events: ['*'] }, reader.token), 403, 'insufficient_scope');
      expectError(await post({ url: CALLBACK, events: ['*'] }, outsider.token), 403, 'insufficient_scope');
    });

    it('should register an endpoint and show its whsec_ secret in the answer', async () => {
      const res = await post({
        url: CALLBACK,
        events: ['subscriber.created', 'invoice.*'],
        description: 'CRM sync',
      });
      expect(successRecord(res, [...RECORD_KEYS, 'secret'].sort(), 201)).toEqual({
        id: expect.stringMatching(WEBHOOK_ID),
        url: CALLBACK,
        events: ['subscriber.created', 'invoice.*'],
        description: 'CRM sync',
        enabled: true,
        disabled_reason: null,
        secret: expect.stringMatching(WEBHOOK_SECRET),
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      // A Standard Webhooks library takes the secret as it is given out.
      expect(() => new Webhook(res.body.data.secret)).not.toThrow();
    });

    it('should give every webhook its own secret', async () => {
      const a = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const b = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expect(a.secret).not.toBe(b.secret);
      expect(a.id).not.toBe(b.id);
    });

    it('should accept a token that holds only webhooks:write', async () => {
      expectSuccess(await post({ url: CALLBACK, events: ['*'] }, writer.token), 201);
    });

    it('should register a disabled subscription when enabled is false', async () => {
      const res = await post({ url: CALLBACK, events: ['*'], enabled: false });
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject({ enabled: false });
    });

    it('should keep each event pattern once when the list repeats one', async () => {
      const res = await post({ url: CALLBACK, events: ['subscriber.*', 'subscriber.*', '*'] });
      expectSuccess(res, 201);
      expect(res.body.data.events).toEqual(['subscriber.*', '*']);
    });

    it.each([
      ['an upper-case type', 'Subscriber.Created'],
      ['a trailing dot', 'subscriber.'],
      ['a wildcard in the middle', 'subscriber.*.created'],
      ['a wildcard prefix', '*.created'],
      ['an empty string', ''],
    ])('should refuse an event pattern with %s as 422 validation_failed', async (_label, pattern) => {
      const res = await post({ url: CALLBACK, events: ['subscriber.created', pattern] });
      expectError(res, 422, 'validation_failed', 'events.1');
    });

    it('should refuse an empty events list as 422 validation_failed', async () => {
      expectError(await post({ url: CALLBACK, events: [] }), 422, 'validation_failed', 'events');
    });

    it('should answer 400 missing_field when url or events is absent', async () => {
      expectError(await post({ events: ['*'] }), 400, 'missing_field', 'url');
      expectError(await post({ url: CALLBACK }), 400, 'missing_field', 'events');
    });

    it('should answer 400 unknown_field for a field it does not accept, such as secret', async () => {
      expectError(
        await post({ url: CALLBACK, events: ['*'], secret: 'whsec_chosen' }),
        400,
        'unknown_field',
        'secret',
      );
    });

    it.each([
      ['not a URL', 'not a url'],
      ['another scheme', 'ftp://hooks.example.net/isp'],
      ['no scheme', 'hooks.example.net/isp'],
    ])('should refuse a url with %s as 422 validation_failed', async (_label, url) => {
      expectError(await post({ url, events: ['*'] }), 422, 'validation_failed', 'url');
    });

    it('should refuse a url that carries credentials', async () => {
      const res = await post({ url: 'https://user:pass@hooks.example.net/isp', events: ['*'] });
      expectError(res, 422, 'validation_failed', 'url');
    });

    it('should record webhook.created in the event log without the secret', async () => {
      const created = await createWebhook(t.http, other.token, { url: CALLBACK, events: ['*'] });
      const [event] = await listEvents(t, other.token, { type: 'webhook.created', subject_id: created.id });
      expect(event.data.object).toMatchObject({ id: created.id, url: CALLBACK });
      expect(JSON.stringify(event)).not.toContain(created.secret);
      expect(JSON.stringify(event)).not.toContain(created.secret.slice('whsec_'.length));
    });
  });

  describe('GET /api/v1/webhooks', () => {
    itRequiresAuthentication(() => t, 'get', '/api/v1/webhooks');

    it('should refuse a token without the webhooks:read scope', async () => {
      const res = await request(t.http).get('/api/v1/webhooks').set(bearer(outsider.token));
      expectError(res, 403, 'insufficient_scope');
    });

    it("should list the tenant's own webhooks newest first, never with a secret", async () => {
      const tenant = await createTenantWithToken(t, ['webhooks:read', 'webhooks:write']);
      const made: string[] = [];
      for (const description of ['first', 'second', 'third']) {
        made.push(
          (await createWebhook(t.http, tenant.token, { url: CALLBACK, events: ['*'], description })).id,
        );
      }
      const res = await request(t.http).get('/api/v1/webhooks').set(bearer(tenant.token));
      expectList(res);
      const rows = res.body.data as WebhookRecord[];
      expect(rows.map((row) => row.id)).toEqual([...made].reverse());
      for (const row of rows) {
        expect(Object.keys(row).sort()).toEqual(RECORD_KEYS);
      }
      expect(JSON.stringify(res.body)).not.toContain('whsec_');
      await deleteAllWebhooks(t.http, tenant.token);
    });

    it('should page with limit and starting_after', async () => {
      const tenant = await createTenantWithToken(t, ['webhooks:read', 'webhooks:write']);
      for (let i = 0; i < 3; i++) {
        await createWebhook(t.http, tenant.token, { url: CALLBACK, events: ['*'] });
      }
      const first = await request(t.http).get('/api/v1/webhooks?limit=2').set(bearer(tenant.token));
      expectList(first);
      expect(first.body.data).toHaveLength(2);
      expect(first.body.meta.pagination).toMatchObject({ limit: 2, has_more: true });
      const second = await request(t.http)
        .get(`/api/v1/webhooks?limit=2&starting_after=${first.body.meta.pagination.next_cursor}`)
        .set(bearer(tenant.token));
      expectList(second);
      expect(second.body.data).toHaveLength(1);
      expect(second.body.meta.pagination).toEqual({ limit: 2, has_more: false, next_cursor: null });
      const ids = [...first.body.data, ...second.body.data].map((row: WebhookRecord) => row.id);
      expect(new Set(ids).size).toBe(3);
      await deleteAllWebhooks(t.http, tenant.token);
    });

    it("should not list another tenant's webhooks", async () => {
      const mine = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const res = await request(t.http).get('/api/v1/webhooks?limit=100').set(bearer(other.token));
      expectList(res);
      expect((res.body.data as WebhookRecord[]).map((row) => row.id)).not.toContain(mine.id);
    });
  });

  describe('GET /api/v1/webhooks/{id}', () => {
    it('should require authentication', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectError(
        await request(t.http).get(`/api/v1/webhooks/${created.id}`),
        401,
        'authentication_required',
      );
    });

    it('should answer the record without its secret', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['invoice.paid'] });
      const res = await request(t.http).get(`/api/v1/webhooks/${created.id}`).set(bearer(owner.token));
      expectSuccess(res);
      expect(Object.keys(res.body.data).sort()).toEqual(RECORD_KEYS);
      const { secret, ...record } = created;
      expect(res.body.data).toEqual(record);
      expect(JSON.stringify(res.body)).not.toContain(secret);
    });

    it("should answer 404 not_found for another tenant's webhook and for an unknown id", async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectNotFound(await request(t.http).get(`/api/v1/webhooks/${created.id}`).set(bearer(other.token)));
      expectNotFound(
        await request(t.http).get('/api/v1/webhooks/whk_00000000000000000000000000').set(bearer(owner.token)),
      );
    });
  });

  describe('PATCH /api/v1/webhooks/{id}', () => {
    const patch = (id: string, body: Record<string, unknown>, token = owner.token) =>
      request(t.http).patch(`/api/v1/webhooks/${id}`).set(bearer(token)).send(body);

    it('should require authentication', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const res = await request(t.http)
        .patch(`/api/v1/webhooks/${created.id}`)
        .send({ events: ['*'] });
      expectError(res, 401, 'authentication_required');
    });

    it('should refuse a token with only webhooks:read', async () => {
      const res = await patch('whk_00000000000000000000000000', { description: 'x' }, reader.token);
      expectError(res, 403, 'insufficient_scope');
    });

    it('should change url, events and description and leave the rest', async () => {
      const created = await createWebhook(t.http, owner.token, {
        url: CALLBACK,
        events: ['*'],
        description: 'before',
      });
      const res = await patch(created.id, {
        url: 'https://hooks.example.org/v2',
        events: ['invoice.*', 'invoice.*', 'subscriber.status_changed'],
        description: 'after',
      });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        id: created.id,
        url: 'https://hooks.example.org/v2',
        events: ['invoice.*', 'subscriber.status_changed'],
        description: 'after',
        enabled: true,
        disabled_reason: null,
        created_at: created.created_at,
      });
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
      expect(res.body.data).not.toHaveProperty('secret');
      expect(await getWebhook(t.http, owner.token, created.id)).toEqual(res.body.data);
    });

    it('should clear the description with null', async () => {
      const created = await createWebhook(t.http, owner.token, {
        url: CALLBACK,
        events: ['*'],
        description: 'x',
      });
      const res = await patch(created.id, { description: null });
      expectSuccess(res);
      expect(res.body.data.description).toBeNull();
    });

    it('should disable with a reason and re-enable without one', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const off = await patch(created.id, { enabled: false });
      expectSuccess(off);
      expect(off.body.data).toMatchObject({ enabled: false, disabled_reason: expect.any(String) });
      const on = await patch(created.id, { enabled: true });
      expectSuccess(on);
      expect(on.body.data).toMatchObject({ enabled: true, disabled_reason: null });
    });

    it('should refuse a malformed event pattern and an empty list', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectError(await patch(created.id, { events: ['nope.'] }), 422, 'validation_failed', 'events.0');
      expectError(await patch(created.id, { events: [] }), 422, 'validation_failed', 'events');
      expectError(await patch(created.id, { url: 'ftp://x.example' }), 422, 'validation_failed', 'url');
      expect((await getWebhook(t.http, owner.token, created.id)).events).toEqual(['*']);
    });

    it('should refuse a field it does not accept, such as secret', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectError(await patch(created.id, { secret: 'whsec_mine' }), 400, 'unknown_field', 'secret');
    });

    it("should answer 404 not_found for another tenant's webhook", async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectNotFound(await patch(created.id, { description: 'taken' }, other.token));
      expect((await getWebhook(t.http, owner.token, created.id)).description).toBeNull();
    });

    it('should record webhook.updated in the event log', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      await patch(created.id, { description: 'logged' }).expect(200);
      const [event] = await listEvents(t, owner.token, { type: 'webhook.updated', subject_id: created.id });
      expect(event.data.object).toMatchObject({ id: created.id, description: 'logged' });
      expect(JSON.stringify(event)).not.toContain(created.secret);
    });
  });

  describe('DELETE /api/v1/webhooks/{id}', () => {
    it('should require authentication', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectError(
        await request(t.http).delete(`/api/v1/webhooks/${created.id}`),
        401,
        'authentication_required',
      );
    });

    it('should delete the subscription, its log and its pending deliveries', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const ping = await request(t.http).post(`/api/v1/webhooks/${created.id}/test`).set(bearer(owner.token));
      expectSuccess(ping, 202);

      const res = await request(t.http).delete(`/api/v1/webhooks/${created.id}`).set(bearer(owner.token));
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ id: created.id, url: CALLBACK });
      expect(res.body.data).not.toHaveProperty('secret');

      expectNotFound(await request(t.http).get(`/api/v1/webhooks/${created.id}`).set(bearer(owner.token)));
      expectNotFound(
        await request(t.http).get(`/api/v1/webhooks/${created.id}/deliveries`).set(bearer(owner.token)),
      );
      expectNotFound(
        await request(t.http)
          .post(`/api/v1/webhook-deliveries/${ping.body.data.delivery_id}/redeliver`)
          .set(bearer(owner.token)),
      );
      const [event] = await listEvents(t, owner.token, { type: 'webhook.deleted', subject_id: created.id });
      expect(event.data.object).toMatchObject({ id: created.id });
    });

    it("should answer 404 not_found for another tenant's webhook and leave it", async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectNotFound(await request(t.http).delete(`/api/v1/webhooks/${created.id}`).set(bearer(other.token)));
      expect((await getWebhook(t.http, owner.token, created.id)).id).toBe(created.id);
    });
  });

  describe('POST /api/v1/webhooks/{id}/rotate-secret', () => {
    it('should require authentication', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectError(
        await request(t.http).post(`/api/v1/webhooks/${created.id}/rotate-secret`),
        401,
        'authentication_required',
      );
    });

    it('should answer 200 with a new secret that GET never shows', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const res = await request(t.http)
        .post(`/api/v1/webhooks/${created.id}/rotate-secret`)
        .set(bearer(owner.token));
      expectSuccess(res, 200);
      expect(Object.keys(res.body.data).sort()).toEqual([...RECORD_KEYS, 'secret'].sort());
      expect(res.body.data.secret).toMatch(WEBHOOK_SECRET);
      expect(res.body.data.secret).not.toBe(created.secret);
      const shown = await request(t.http).get(`/api/v1/webhooks/${created.id}`).set(bearer(owner.token));
      expect(JSON.stringify(shown.body)).not.toContain('whsec_');

      const [event] = await listEvents(t, owner.token, {
        type: 'webhook.secret_rotated',
        subject_id: created.id,
      });
      expect(JSON.stringify(event)).not.toContain(res.body.data.secret);
      expect(JSON.stringify(event)).not.toContain(created.secret);
    });

    it("should answer 404 not_found for another tenant's webhook", async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectNotFound(
        await request(t.http).post(`/api/v1/webhooks/${created.id}/rotate-secret`).set(bearer(other.token)),
      );
    });

    it('should refuse a token with only webhooks:read', async () => {
      const res = await request(t.http)
        .post('/api/v1/webhooks/whk_00000000000000000000000000/rotate-secret')
        .set(bearer(reader.token));
      expectError(res, 403, 'insufficient_scope');
    });
  });

  describe('POST /api/v1/webhooks/{id}/test', () => {
    it('should require authentication', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectError(
        await request(t.http).post(`/api/v1/webhooks/${created.id}/test`),
        401,
        'authentication_required',
      );
    });

    it('should answer 202 with the event and delivery it queued', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['invoice.paid'] });
      const res = await request(t.http).post(`/api/v1/webhooks/${created.id}/test`).set(bearer(owner.token));
      expectSuccess(res, 202);
      expect(res.body.data).toEqual({
        event_id: expect.stringMatching(EVENT_ID),
        delivery_id: expect.stringMatching(DELIVERY_ID),
      });
      const [event] = await listEvents(t, owner.token, { type: 'webhook.test', subject_id: created.id });
      expect(event.id).toBe(res.body.data.event_id);
    });

    it("should answer 404 not_found for another tenant's webhook", async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectNotFound(
        await request(t.http).post(`/api/v1/webhooks/${created.id}/test`).set(bearer(other.token)),
      );
    });
  });

  describe('deliveries to a disabled webhook', () => {
    it('should refuse a test ping and a redelivery with 409 until the webhook is enabled again', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const ping = await request(t.http).post(`/api/v1/webhooks/${created.id}/test`).set(bearer(owner.token));
      expectSuccess(ping, 202);
      const patch = (enabled: boolean) =>
        request(t.http).patch(`/api/v1/webhooks/${created.id}`).set(bearer(owner.token)).send({ enabled });
      expectSuccess(await patch(false));

      expectError(
        await request(t.http).post(`/api/v1/webhooks/${created.id}/test`).set(bearer(owner.token)),
        409,
        'invalid_state_transition',
      );
      const redeliver = () =>
        request(t.http)
          .post(`/api/v1/webhook-deliveries/${ping.body.data.delivery_id}/redeliver`)
          .set(bearer(owner.token));
      expectError(await redeliver(), 409, 'invalid_state_transition');

      expectSuccess(await patch(true));
      expectSuccess(await redeliver(), 202);
    });
  });

  describe('the outbox', () => {
    it('should queue one delivery per matching enabled subscription in the statement that writes the event', async () => {
      const tenant = await createTenantWithToken(t, ['admin']);
      const matching = [
        await createWebhook(t.http, tenant.token, { url: CALLBACK, events: ['subscriber.created'] }),
        await createWebhook(t.http, tenant.token, { url: CALLBACK, events: ['subscriber.*'] }),
        await createWebhook(t.http, tenant.token, { url: CALLBACK, events: ['*'] }),
      ];
      await createWebhook(t.http, tenant.token, { url: CALLBACK, events: ['invoice.*'] });
      const disabled = await createWebhook(t.http, tenant.token, { url: CALLBACK, events: ['*'] });
      expectSuccess(
        await request(t.http)
          .patch(`/api/v1/webhooks/${disabled.id}`)
          .set(bearer(tenant.token))
          .send({ enabled: false }),
      );

      const created = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(tenant.token))
        .send({ full_name: 'Outbox Check', status: 'prospect' });
      expectSuccess(created, 201);
      const [event] = await listEvents(t, tenant.token, { subject_id: created.body.data.id });
      const deliveries: {
        id: string;
        webhook_id: string;
        event_type: string;
        status: string;
        created_at: Date;
      }[] = await t.dataSource.query(
        'SELECT id, webhook_id, event_type, status, created_at FROM webhook_deliveries WHERE tenant_id = $1 AND event_id = $2',
        [tenant.tenantId, event.id],
      );

      expect(deliveries.map((d) => d.webhook_id).sort()).toEqual(matching.map((w) => w.id).sort());
      expect(new Set(deliveries.map((d) => d.id)).size).toBe(3);
      for (const delivery of deliveries) {
        expect(delivery).toMatchObject({
          id: expect.stringMatching(DELIVERY_ID),
          event_type: 'subscriber.created',
        });
        expect(delivery.status).toBe('pending');
        // A ULID's first 10 characters are its millisecond: the event's own creation time.
        expect(delivery.id.slice(4, 14)).toBe(event.id.slice(4, 14));
        expect(delivery.created_at.toISOString()).toBe(event.created_at);
      }
      await deleteAllWebhooks(t.http, t.adminToken, tenant.tenantId);
    });

    it('should write neither the event nor a delivery when the change fails', async () => {
      const tenant = await createTenantWithToken(t, ['admin']);
      await createWebhook(t.http, tenant.token, { url: CALLBACK, events: ['*'] });
      const body = { full_name: 'Twice', status: 'prospect', external_id: 'outbox-dup' };
      const send = () => request(t.http).post('/api/v1/subscribers').set(bearer(tenant.token)).send(body);
      expectSuccess(await send(), 201);
      expectError(await send(), 409, 'duplicate_subscriber', 'external_id');

      const [counts]: { events: number; deliveries: number }[] = await t.dataSource.query(
        `SELECT (SELECT count(*)::int FROM events WHERE tenant_id = $1 AND type = 'subscriber.created') AS events,
                (SELECT count(*)::int FROM webhook_deliveries
                  WHERE tenant_id = $1 AND event_type = 'subscriber.created') AS deliveries`,
        [tenant.tenantId],
      );
      expect(counts).toEqual({ events: 1, deliveries: 1 });
      await deleteAllWebhooks(t.http, t.adminToken, tenant.tenantId);
    });
  });

  describe('GET /api/v1/webhooks/{id}/deliveries', () => {
    it('should require authentication', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      expectError(
        await request(t.http).get(`/api/v1/webhooks/${created.id}/deliveries`),
        401,
        'authentication_required',
      );
    });

    it('should answer an empty paginated log while nothing was attempted', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const res = await request(t.http)
        .get(`/api/v1/webhooks/${created.id}/deliveries`)
        .set(bearer(owner.token));
      expectList(res);
      expect(res.body.data).toEqual([]);
      expect(await listAttempts(t.http, owner.token, created.id)).toEqual([]);
    });

    it("should answer 404 not_found for another tenant's webhook", async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const res = await request(t.http)
        .get(`/api/v1/webhooks/${created.id}/deliveries`)
        .set(bearer(reader.token));
      expectError(res, 404, 'not_found');
    });
  });

  describe('POST /api/v1/webhook-deliveries/{delivery_id}/redeliver', () => {
    it('should require authentication', async () => {
      const res = await request(t.http).post(
        '/api/v1/webhook-deliveries/dlv_00000000000000000000000000/redeliver',
      );
      expectError(res, 401, 'authentication_required');
    });

    it('should answer 202 with a new pending delivery of the same event', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const ping = await request(t.http).post(`/api/v1/webhooks/${created.id}/test`).set(bearer(owner.token));
      const res = await request(t.http)
        .post(`/api/v1/webhook-deliveries/${ping.body.data.delivery_id}/redeliver`)
        .set(bearer(owner.token));
      expectSuccess(res, 202);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(DELIVERY_ID),
        webhook_id: created.id,
        event_id: ping.body.data.event_id,
        status: 'pending',
      });
      expect(res.body.data.id).not.toBe(ping.body.data.delivery_id);
    });

    it("should answer 404 not_found for an unknown delivery and for another tenant's", async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const ping = await request(t.http).post(`/api/v1/webhooks/${created.id}/test`).set(bearer(owner.token));
      expectNotFound(
        await request(t.http)
          .post(`/api/v1/webhook-deliveries/${ping.body.data.delivery_id}/redeliver`)
          .set(bearer(other.token)),
      );
      expectNotFound(
        await request(t.http)
          .post('/api/v1/webhook-deliveries/dlv_00000000000000000000000000/redeliver')
          .set(bearer(owner.token)),
      );
    });
  });
});
