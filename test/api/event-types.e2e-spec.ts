import request from 'supertest';
import { EVENT_TYPES } from '../../src/events/event-types';
import { createBillingProfile, createSubscriber, listEvents } from '../support/subscriber-factory';
import { allocate, createInvoice, createPayment } from '../support/billing-factory';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { createWebhook, deleteAllWebhooks } from '../support/webhook-receiver';

const CALLBACK = 'https://hooks.example.net/isp';

/** The types the README names as emitted (issue #11 item 14 lists them from the emitters). */
const EMITTED = [
  'service.cap_warning',
  'service.cap_reached',
  'service.cap_restored',
  'service.cap_topped_up',
  'tenant.created',
  'token.created',
  'token.revoked',
  'tenant_settings.updated',
  'test_clock.created',
  'test_clock.advancing',
  'test_clock.ready',
  'test_clock.internal_failure',
  'test_clock.deleted',
  'subscriber.created',
  'subscriber.updated',
  'subscriber.status_changed',
  'billing_profile.created',
  'billing_profile.updated',
  'tax_rate.created',
  'tax_rate.updated',
  'invoice.created',
  'invoice.finalized',
  'invoice.paid',
  'invoice.voided',
  'credit_note.created',
  'invoice.written_off',
  'charge.created',
  'charge.deleted',
  'transaction.created',
  'transaction.allocated',
  'transaction.refunded',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.test',
  'ticket.created',
  'ticket.updated',
  'ticket.status_changed',
  'ticket.comment_added',
  'ticket_settings.updated',
  'network_settings.updated',
  'service_plan.created',
  'service_plan.updated',
  'service.created',
  'service.updated',
  'service.activated',
  'service.suspended',
  'service.resumed',
  'service.plan_changed',
  'service.terminated',
  'provisioning_order.created',
  'provisioning_order.completed',
  'provisioning_order.failed',
  'provisioning_order.cancelled',
  'nas.created',
  'nas.updated',
  'nas.deleted',
  'ip_pool.created',
  'ip_pool.updated',
  'ip_pool.deleted',
  'invoice.overdue',
  'invoice.reminder',
  'billing_run.completed',
  'billing_run.failed',
  'import.completed',
  'import.failed',
  'automation_rule.updated',
  'notification.sent',
  'notification.failed',
  'notification_template.updated',
  'portal.invite_created',
  'portal.sign_in_code_requested',
  'portal.session_revoked',
  'portal.signed_in',
  'notification_template.deleted',
  'notification_preferences.updated',
];

/**
 * Issue #11 item 14: webhook `events` accept only known types, `prefix.*` of a known prefix, or `*`;
 * GET /api/v1/event-types lists the catalogue every emitter uses.
 */
describe('Hardening: event types and webhook patterns', () => {
  let t: TestApp;
  let owner: TenantWithToken;

  const post = (events: unknown) =>
    request(t.http).post('/api/v1/webhooks').set(bearer(owner.token)).send({ url: CALLBACK, events });
  const patch = (id: string, body: Record<string, unknown>) =>
    request(t.http).patch(`/api/v1/webhooks/${id}`).set(bearer(owner.token)).send(body);
  const eventTypes = (token?: string) => {
    const req = request(t.http).get('/api/v1/event-types');
    return token ? req.set(bearer(token)) : req;
  };

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_WORKER_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await createTenantWithToken(t, ['admin']);
  });
  afterAll(async () => {
    if (owner) {
      await deleteAllWebhooks(t.http, t.adminToken, owner.tenantId);
    }
    await t?.close();
  });

  describe('webhook event patterns', () => {
    it.each([
      'subscriber.craeted',
      'nope.*',
      'subscriber.',
      '**',
      'SUBSCRIBER.CREATED',
      'nope',
      'subscriber.created.*',
    ])('should refuse %j on POST /webhooks as 422 naming its index', async (pattern) => {
      const res = await post(['invoice.paid', pattern]);
      expectError(res, 422, 'validation_failed', 'events.1');
      expect(res.body.error.message).toContain(JSON.stringify(pattern));
    });

    it('should name the first bad entry when several are bad', async () => {
      const res = await post(['*', 'invoice.payed', 'nope.*']);
      expectError(res, 422, 'validation_failed', 'events.1');
      expect(res.body.error.message).toContain('"invoice.payed"');
    });

    it('should refuse an entry that is not a string, naming its index', async () => {
      const res = await post(['invoice.paid', 5]);
      expectError(res, 422, 'validation_failed', 'events.1');
      expect(res.body.error.message).toBe('events.1 must be a string');
    });

    it.each([[['subscriber.*']], [['*']], [['invoice.paid']], [['webhook.test', 'billing_profile.*']]])(
      'should register %j',
      async (events) => {
        const res = await post(events);
        expectSuccess(res, 201);
        expect(res.body.data.events).toEqual(events);
      },
    );

    it('should refuse an unknown pattern on PATCH /webhooks/{id} as 422 naming its index', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      const res = await patch(created.id, { events: ['subscriber.*', 'subscriber.craeted'] });
      expectError(res, 422, 'validation_failed', 'events.1');
      expect(res.body.error.message).toContain('"subscriber.craeted"');
      const ok = await patch(created.id, { events: ['transaction.*'] });
      expectSuccess(ok);
      expect(ok.body.data.events).toEqual(['transaction.*']);
    });

    it('should keep a subscription stored with an unknown pattern working: it is read, patched and delivered to', async () => {
      const created = await createWebhook(t.http, owner.token, { url: CALLBACK, events: ['*'] });
      await t.dataSource.query(`UPDATE webhooks SET events = ARRAY['nope.*', 'subscriber.*'] WHERE id = $1`, [
        created.id,
      ]);
      const patched = await patch(created.id, { description: 'legacy' });
      expectSuccess(patched);
      expect(patched.body.data).toMatchObject({ events: ['nope.*', 'subscriber.*'], description: 'legacy' });
      await createSubscriber(t, owner.token);
      const [{ count }] = await t.dataSource.query<{ count: number }[]>(
        'SELECT count(*)::int AS count FROM webhook_deliveries WHERE webhook_id = $1',
        [created.id],
      );
      expect(count).toBeGreaterThan(0);
    });
  });

  describe('GET /api/v1/event-types', () => {
    it('should require authentication', async () => {
      expectError(await eventTypes(), 401, 'authentication_required');
    });

    it('should refuse a token without webhooks:read', async () => {
      const outsider = await createTenantWithToken(t, ['subscribers:read', 'events:read']);
      expectError(await eventTypes(outsider.token), 403, 'insufficient_scope');
    });

    it('should list every type of the catalogue with a one-line description', async () => {
      const reader = await createTenantWithToken(t, ['webhooks:read']);
      const res = await eventTypes(reader.token);
      expectSuccess(res);
      expect(res.body.data).toEqual(
        Object.entries(EVENT_TYPES).map(([type, description]) => ({ type, description })),
      );
      for (const entry of res.body.data as { type: string; description: string }[]) {
        expect(entry.description).toMatch(/^\S.*[^\s]$/);
        expect(entry.description).not.toContain('\n');
      }
      expect((res.body.data as { type: string }[]).map((entry) => entry.type).sort()).toEqual(
        [...EMITTED].sort(),
      );
    });

    it('should list every type a real subscriber, billing, ticket and webhook flow emits', async () => {
      const tenant = await createTenantWithToken(t, ['admin']);
      const listed = new Set(
        ((await eventTypes(tenant.token)).body.data as { type: string }[]).map((entry) => entry.type),
      );
      const subscriber = await createSubscriber(t, tenant.token);
      await request(t.http)
        .patch(`/api/v1/subscribers/${subscriber.id}`)
        .set(bearer(tenant.token))
        .send({ full_name: 'Ada King' })
        .expect(200);
      await createBillingProfile(t, tenant.token);
      const invoice = await createInvoice(t, tenant.token, subscriber.id, 1000);
      const payment = await createPayment(t, tenant.token, subscriber.id, 1000, { auto_apply: false });
      const allocated = await allocate(t, tenant.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 1000 }],
      });
      expect(allocated.status).toBe(200);
      const charge = await request(t.http)
        .post(`/api/v1/subscribers/${subscriber.id}/charges`)
        .set(bearer(tenant.token))
        .send({ description: 'Router', amount: 4900, currency: 'USD' })
        .expect(201);
      await request(t.http)
        .delete(`/api/v1/subscribers/${subscriber.id}/charges/${charge.body.data.id as string}`)
        .set(bearer(tenant.token))
        .expect(200);
      const ticket = await request(t.http)
        .post('/api/v1/tickets')
        .set(bearer(tenant.token))
        .send({ subject: 'No internet', subscriber_id: subscriber.id })
        .expect(201);
      const ticketUrl = `/api/v1/tickets/${ticket.body.data.id as string}`;
      await request(t.http).patch(ticketUrl).set(bearer(tenant.token)).send({ priority: 'high' }).expect(200);
      await request(t.http)
        .post(`${ticketUrl}/comments`)
        .set(bearer(tenant.token))
        .send({ body: 'On it', public: true })
        .expect(201);
      await request(t.http)
        .patch('/api/v1/ticket-settings')
        .set(bearer(tenant.token))
        .send({ due_hours: { high: 12 } })
        .expect(200);
      const hook = await createWebhook(t.http, tenant.token, { url: CALLBACK, events: ['subscriber.*'] });
      await request(t.http).delete(`/api/v1/webhooks/${hook.id}`).set(bearer(tenant.token)).expect(200);

      const emitted = new Set((await listEvents(t, tenant.token, {})).map((event) => event.type));
      expect(emitted).toContain('subscriber.created');
      expect(emitted).toContain('invoice.paid');
      expect(emitted).toContain('charge.created');
      expect(emitted).toContain('charge.deleted');
      for (const type of [
        'ticket.created',
        'ticket.updated',
        'ticket.status_changed',
        'ticket.comment_added',
      ]) {
        expect(emitted).toContain(type);
      }
      expect(emitted).toContain('ticket_settings.updated');
      for (const type of emitted) {
        expect(listed).toContain(type);
      }
    });
  });
});
