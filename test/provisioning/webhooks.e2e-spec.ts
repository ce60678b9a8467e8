import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { bearer } from '../support/factories';
import {
  createService,
  PROVISIONING_SCOPES,
  postAction,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { createWebhook, deleteAllWebhooks, WebhookReceiver, DELIVERY_ENV } from '../support/webhook-receiver';

/** Loopback receivers and plain http allowed, quick polling and retries (as test/webhooks/delivery.e2e-spec.ts). */
/** Issue #15: the PPPoE password never leaves through a webhook, over a whole service lifecycle. */
describe('Provisioning: webhook payloads', () => {
  let t: TestApp;
  let owner: TenantWithToken;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp({ ...DELIVERY_ENV, PROVISIONING_POLL_MS: '100' });
    owner = await createTenantWithToken(t, [...PROVISIONING_SCOPES, 'webhooks:read', 'webhooks:write']);
    receiver = await WebhookReceiver.start();
  });

  afterAll(async () => {
    // No webhook of this tenant may keep a worker retrying into a closed receiver.
    await deleteAllWebhooks(t.http, owner.token);
    await receiver.close();
    await t.close();
  });

  it('should deliver every service.* and provisioning_order.* event without either password', async () => {
    await createWebhook(t.http, owner.token, {
      url: receiver.url,
      events: ['service.*', 'provisioning_order.*', 'service_plan.*'],
    });
    const first = `first-${randomBytes(8).toString('hex')}`;
    const second = `second-${randomBytes(8).toString('hex')}`;
    const subscriber = await createSubscriber(t, owner.token);
    const { service, order } = await createService(t, owner.token, subscriber.id, { pppoe_password: first });
    await waitForOrder(t, owner.token, order.id, ['completed']);

    const patched = await request(t.http)
      .patch(`/api/v1/services/${service.id}`)
      .set(bearer(owner.token))
      .send({ pppoe_password: second });
    expect(patched.status).toBe(200);
    const [modify] = (
      await request(t.http)
        .get('/api/v1/provisioning-orders')
        .query({ service_id: service.id, action: 'modify' })
        .set(bearer(owner.token))
    ).body.data as { id: string }[];
    await waitForOrder(t, owner.token, modify.id, ['completed']);
    const terminate = await postAction(t, owner.token, service.id, { action: 'terminate' });
    expect(terminate.status).toBe(202);
    await waitForOrder(t, owner.token, terminate.body.data.id as string, ['completed']);

    await receiver.waitForType('service.created', 1);
    await receiver.waitForType('service.updated', 1);
    await receiver.waitForType('service.activated', 1);
    await receiver.waitForType('service.terminated', 1);
    await receiver.waitForType('provisioning_order.completed', 3);
    const bodies = receiver.rawBodies();
    expect(bodies.length).toBeGreaterThanOrEqual(9);
    // The service is in the payloads (so the search below looks where the password would be)…
    expect(bodies.some((raw) => raw.includes(service.pppoe_username))).toBe(true);
    // …and neither password is, nor a key named for it (changed_fields may name the field).
    for (const raw of bodies) {
      expect(raw).not.toContain(first);
      expect(raw).not.toContain(second);
      expect(raw).not.toContain('"pppoe_password":');
    }
  });
});
