import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import { expectError, expectSuccess, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createPlan,
  createService,
  fail,
  gate,
  getOrder,
  getService,
  ORDER_ID,
  type Order,
  postAction,
  PROVISIONING_SCOPES,
  radiusRows,
  scriptDriver,
  type Service,
  type ServicePlan,
  uniquePppoeUsername,
  waitForOrder,
  listOrders,
} from '../support/provisioning-factory';
import { createSubscriber, type EventBody, listEvents, listen } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait-for';
import { FAST_WORKER } from '../support/network-factory';
import { walkPages } from '../support/shared-cases';

const ACTIONS = ['activate', 'suspend', 'resume', 'change_plan', 'terminate'] as const;
const STATUSES = ['pending', 'active', 'suspended', 'terminated'] as const;
type Action = (typeof ACTIONS)[number];
type Status = (typeof STATUSES)[number];

/** The contract's rules: the status a service ends in once the action's order completes; absent means refused. */
const OUTCOMES: Record<Action, Partial<Record<Status, Status>>> = {
  activate: { pending: 'active' },
  suspend: { active: 'suspended' },
  resume: { suspended: 'active' },
  change_plan: { pending: 'pending', active: 'active', suspended: 'suspended' },
  terminate: { pending: 'terminated', active: 'terminated', suspended: 'terminated' },
};

/** The event a completed order of each action emits about its service. */
const SERVICE_EVENT: Record<Action, string> = {
  activate: 'service.activated',
  suspend: 'service.suspended',
  resume: 'service.resumed',
  change_plan: 'service.plan_changed',
  terminate: 'service.terminated',
};

/** Every (action, status) pair, once, with what it should do. */
const TABLE = ACTIONS.flatMap((action) =>
  STATUSES.map((from) => ({ action, from, to: OUTCOMES[action][from] ?? null })),
);
const ALLOWED = TABLE.filter((row) => row.to !== null).map((row) => [row.action, row.from, row.to] as const);
const REFUSED = TABLE.filter((row) => row.to === null).map((row) => [row.action, row.from] as const);

/** Collects the JSON log lines the app writes. */
class LogCapture extends Writable {
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.raw.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
}

/** Polls an order until `done` holds; throws with the last order seen after `timeoutMs`. */
async function pollOrder(
  t: TestApp,
  token: string,
  orderId: string,
  done: (order: Order) => boolean,
  timeoutMs = 30_000,
): Promise<Order> {
  return waitUntil(() => getOrder(t, token, orderId), done, {
    timeout: timeoutMs,
    interval: 20,
    what: `order ${orderId} in the expected state`,
  });
}

const cancelOrder = (t: TestApp, token: string, orderId: string) =>
  request(t.http).post(`/api/v1/provisioning-orders/${orderId}/cancel`).set(bearer(token)).send();

const patchService = (t: TestApp, token: string, serviceId: string, body: Record<string, unknown>) =>
  request(t.http).patch(`/api/v1/services/${serviceId}`).set(bearer(token)).send(body);

/** A password no other test uses. */
const uniquePassword = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;

/** The events of these subjects, oldest first, as `type subject`. */
function sequenceOf(events: EventBody[], subjects: string[]): string[] {
  return [...events]
    .reverse()
    .filter((event) => event.subject_id !== null && subjects.includes(event.subject_id))
    .map((event) => `${event.type} ${event.subject_id}`);
}

/** Issue #16: service actions become provisioning orders a worker carries to the network. */
describe('Provisioning orders with the worker stopped (PROVISIONING_WORKER_ENABLED=false)', () => {
  let idle: TestApp;
  let isp: TenantWithToken;
  let subscriberId: string;
  let planB: ServicePlan;

  beforeAll(async () => {
    idle = await startTestApp({ ...FAST_WORKER, PROVISIONING_WORKER_ENABLED: 'false' });
    await listen(idle);
    isp = await createTenantWithToken(idle, PROVISIONING_SCOPES);
    subscriberId = (await createSubscriber(idle, isp.token, { status: 'active' })).id;
    planB = await createPlan(idle, isp.token, { download_kbps: 100_000, upload_kbps: 20_000 });
  });

  afterAll(async () => {
    await idle.close();
  });

  it('should leave the activation acknowledged and refuse any second action with 409 order_in_progress', async () => {
    const { service, order } = await createService(idle, isp.token, subscriberId);
    expect(order).toMatchObject({ action: 'activate', status: 'acknowledged', attempts: 0 });
    for (const body of [
      { action: 'activate' },
      { action: 'terminate' },
      { action: 'change_plan', plan_id: planB.id },
    ]) {
      expectError(
        await postAction(idle, isp.token, service.id, body),
        409,
        'order_in_progress',
        'service_id',
      );
    }
    // The state check comes first: an action the service could never take says so, open order or not.
    expectError(
      await postAction(idle, isp.token, service.id, { action: 'suspend' }),
      409,
      'invalid_state_transition',
      'action',
    );
    expect((await listOrders(idle, isp.token, { service_id: service.id })).map((row) => row.id)).toEqual([
      order.id,
    ]);
    expect(await getOrder(idle, isp.token, order.id)).toEqual(order);
    expect(await getService(idle, isp.token, service.id)).toEqual(service);
  });

  it('should refuse a PATCH of the password or the static address with 409 order_in_progress, and take other fields', async () => {
    const { service } = await createService(idle, isp.token, subscriberId);
    expectError(
      await patchService(idle, isp.token, service.id, { pppoe_password: uniquePassword('blocked') }),
      409,
      'order_in_progress',
      'service_id',
    );
    expectError(
      await patchService(idle, isp.token, service.id, { static_ipv4: '198.51.100.61' }),
      409,
      'order_in_progress',
      'service_id',
    );
    expect(await getService(idle, isp.token, service.id)).toEqual(service);
    expect(await listEvents(idle, isp.token, { subject_id: service.id, type: 'service.updated' })).toEqual(
      [],
    );

    const res = await patchService(idle, isp.token, service.id, { installation_address: '1 Mast Road' });
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ id: service.id, installation_address: '1 Mast Road' });
    expect(await listOrders(idle, isp.token, { service_id: service.id })).toHaveLength(1);
  });

  it('should cancel an acknowledged order (200), leave the service as it was, and then take a new action', async () => {
    const { service, order } = await createService(idle, isp.token, subscriberId);
    const res = await cancelOrder(idle, isp.token, order.id);
    expectSuccess(res);
    const cancelled = res.body.data as Order;
    expect(cancelled).toEqual({
      ...order,
      status: 'cancelled',
      updated_at: expect.any(String),
    });
    expect(Date.parse(cancelled.updated_at)).toBeGreaterThanOrEqual(Date.parse(order.updated_at));
    expect(await getOrder(idle, isp.token, order.id)).toEqual(cancelled);
    expect(await getService(idle, isp.token, service.id)).toEqual(service);
    const events = await listEvents(idle, isp.token, { subject_id: order.id });
    expect(events.map((event) => event.type)).toEqual([
      'provisioning_order.cancelled',
      'provisioning_order.created',
    ]);
    expect(events[0].data.object).toEqual(cancelled);

    // Nothing is open any more: an action, and then a PATCH once that one is cancelled too, open new orders.
    const again = await postAction(idle, isp.token, service.id, { action: 'activate', reason: 'second try' });
    expectSuccess(again, 202);
    expect(again.body.data).toMatchObject({
      action: 'activate',
      status: 'acknowledged',
      reason: 'second try',
    });
    expect(again.body.data.id).not.toBe(order.id);
    expectError(
      await patchService(idle, isp.token, service.id, { pppoe_password: uniquePassword('later') }),
      409,
      'order_in_progress',
      'service_id',
    );
    expectSuccess(await cancelOrder(idle, isp.token, again.body.data.id));
    expectSuccess(
      await patchService(idle, isp.token, service.id, { pppoe_password: uniquePassword('later') }),
    );
    const [modify] = await listOrders(idle, isp.token, { service_id: service.id });
    expect(modify).toMatchObject({
      action: 'modify',
      status: 'acknowledged',
      changes: ['pppoe_password'],
      plan_id: service.plan_id,
    });
    expect((await getService(idle, isp.token, service.id)).status).toBe('pending');
  });

  it('should refuse to cancel a cancelled order (409) and answer 404 for an unknown one', async () => {
    const { order } = await createService(idle, isp.token, subscriberId);
    expectSuccess(await cancelOrder(idle, isp.token, order.id));
    expectError(await cancelOrder(idle, isp.token, order.id), 409, 'invalid_state_transition', 'status');
    expectNotFound(await cancelOrder(idle, isp.token, 'ord_01JD3Z6W3R4T5Y6U7I8O9P0QAB'));
    const other = await createTenantWithToken(idle, PROVISIONING_SCOPES);
    const { order: theirs } = await createService(
      idle,
      other.token,
      (await createSubscriber(idle, other.token)).id,
    );
    expectNotFound(await cancelOrder(idle, isp.token, theirs.id));
    expect((await getOrder(idle, other.token, theirs.id)).status).toBe('acknowledged');
  });
});

describe('Provisioning orders carried out by the worker', () => {
  let t: TestApp;
  let driver: ReturnType<typeof scriptDriver>;
  const logs = new LogCapture();

  beforeAll(async () => {
    t = await startTestApp({ ...FAST_WORKER, LOG_LEVEL: 'debug' }, { logDestination: logs });
    await listen(t);
    driver = scriptDriver(t);
  });

  afterAll(async () => {
    driver.restore();
    await t.close();
  });

  /** A tenant of its own, a subscriber, two plans, and services brought to any status through the API. */
  async function workshop() {
    const isp = await createTenantWithToken(t, PROVISIONING_SCOPES);
    const subscriberId = (await createSubscriber(t, isp.token, { status: 'active' })).id;
    const planA = await createPlan(t, isp.token);
    const planB = await createPlan(t, isp.token, { download_kbps: 100_000, upload_kbps: 20_000 });

    const act = async (serviceId: string, body: Record<string, unknown>): Promise<Order> => {
      const res = await postAction(t, isp.token, serviceId, body);
      if (res.status !== 202) {
        throw new Error(`${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      return waitForOrder(t, isp.token, res.body.data.id, ['completed', 'failed', 'cancelled']);
    };

    /** A fresh service on plan A in `status`: pending is one whose activation failed for good. */
    const serviceIn = async (status: Status): Promise<Service> => {
      const pppoe = uniquePppoeUsername();
      if (status === 'pending') {
        driver.script(`${isp.slug}/${pppoe}`, fail('NAS unknown', false));
      }
      const { service, order } = await createService(t, isp.token, subscriberId, {
        plan_id: planA.id,
        pppoe_username: pppoe,
      });
      const activation = await waitForOrder(t, isp.token, order.id, ['completed', 'failed']);
      expect(activation.status).toBe(status === 'pending' ? 'failed' : 'completed');
      if (status === 'suspended' || status === 'terminated') {
        const move = await act(service.id, { action: status === 'suspended' ? 'suspend' : 'terminate' });
        expect(move.status).toBe('completed');
      }
      const current = await getService(t, isp.token, service.id);
      expect(current.status).toBe(status);
      return current;
    };

    return { isp, subscriberId, planA, planB, act, serviceIn };
  }

  let shop: Awaited<ReturnType<typeof workshop>>;
  beforeAll(async () => {
    shop = await workshop();
  });

  describe('POST /api/v1/services/{id}/actions: every action from every status', () => {
    it.each(ALLOWED)(
      'should take %s on a %s service with 202 and leave it %s once its order completes',
      async (action, from, to) => {
        const { isp, planB } = shop;
        const before = await shop.serviceIn(from);
        const body = action === 'change_plan' ? { action, plan_id: planB.id } : { action };
        const res = await postAction(t, isp.token, before.id, { ...body, reason: `table ${action}` });
        expectSuccess(res, 202);
        const order = res.body.data as Order;
        expect(order.id).toMatch(ORDER_ID);
        expect(order).toMatchObject({
          service_id: before.id,
          subscriber_id: before.subscriber_id,
          action,
          status: 'acknowledged',
          plan_id: action === 'change_plan' ? planB.id : before.plan_id,
          changes: null,
          reason: `table ${action}`,
          attempts: 0,
          last_error: null,
          completed_at: null,
        });

        const done = await waitForOrder(t, isp.token, order.id, ['completed', 'failed']);
        expect(done).toMatchObject({ status: 'completed', attempts: 1, last_error: null });
        expect(done.completed_at).not.toBeNull();
        const after = await getService(t, isp.token, before.id);
        expect(after).toEqual({
          ...before,
          status: to,
          plan_id: order.plan_id,
          activated_at: before.activated_at ?? (to === 'active' ? done.completed_at : null),
          terminated_at: to === 'terminated' ? done.completed_at : null,
          updated_at: done.completed_at,
        });
        const events = await listEvents(t, isp.token, { subject_id: before.id, type: SERVICE_EVENT[action] });
        expect(events.map((event) => event.data.object)).toEqual([after]);
      },
    );

    it.each(REFUSED)(
      'should refuse %s on a %s service with 409 invalid_state_transition and open no order',
      async (action, from) => {
        const { isp, planB } = shop;
        const before = await shop.serviceIn(from);
        const orders = await listOrders(t, isp.token, { service_id: before.id });
        const body = action === 'change_plan' ? { action, plan_id: planB.id } : { action };
        expectError(
          await postAction(t, isp.token, before.id, body),
          409,
          'invalid_state_transition',
          'action',
        );
        expect(await listOrders(t, isp.token, { service_id: before.id })).toEqual(orders);
        expect(await getService(t, isp.token, before.id)).toEqual(before);
      },
    );

    it('should cover each of the 5 actions from each of the 4 statuses once', () => {
      expect(ALLOWED.length + REFUSED.length).toBe(20);
      expect(new Set(TABLE.map((row) => `${row.action}/${row.from}`)).size).toBe(20);
    });
  });

  describe('change_plan and plan_id', () => {
    let inactivePlanId: string;
    let foreignPlanId: string;
    let shared: Service | undefined;
    /** One active service for the refusals: none of them may change it. */
    const activeService = async () => (shared ??= await shop.serviceIn('active'));

    it.each([
      ['change_plan without plan_id', 400, 'missing_field', () => ({ action: 'change_plan' })],
      [
        'change_plan with a null plan_id',
        422,
        'validation_failed',
        () => ({ action: 'change_plan', plan_id: null }),
      ],
      [
        'change_plan to the plan it has',
        422,
        'validation_failed',
        () => ({ action: 'change_plan', plan_id: shop.planA.id }),
      ],
      [
        'change_plan to an inactive plan',
        422,
        'validation_failed',
        () => ({ action: 'change_plan', plan_id: inactivePlanId }),
      ],
      [
        'change_plan to an unknown plan',
        422,
        'invalid_reference',
        () => ({ action: 'change_plan', plan_id: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }),
      ],
      [
        "change_plan to another tenant's plan",
        422,
        'invalid_reference',
        () => ({ action: 'change_plan', plan_id: foreignPlanId }),
      ],
      [
        'suspend with a plan_id',
        422,
        'validation_failed',
        () => ({ action: 'suspend', plan_id: shop.planB.id }),
      ],
      [
        'terminate with a plan_id',
        422,
        'validation_failed',
        () => ({ action: 'terminate', plan_id: shop.planB.id }),
      ],
    ])('should refuse %s with %i %s on plan_id and open no order', async (_case, status, code, body) => {
      const service = await activeService();
      expectError(await postAction(t, shop.isp.token, service.id, body()), status, code, 'plan_id');
      expect(await listOrders(t, shop.isp.token, { service_id: service.id })).toHaveLength(1);
      expect(await getService(t, shop.isp.token, service.id)).toEqual(service);
    });

    beforeAll(async () => {
      const inactive = await createPlan(t, shop.isp.token);
      await request(t.http)
        .patch(`/api/v1/service-plans/${inactive.id}`)
        .set(bearer(shop.isp.token))
        .send({ active: false })
        .expect(200);
      inactivePlanId = inactive.id;
      const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
      foreignPlanId = (await createPlan(t, other.token)).id;
    });

    it('should refuse an unknown action with 422 validation_failed on action', async () => {
      const service = await activeService();
      expectError(
        await postAction(t, shop.isp.token, service.id, { action: 'modify' }),
        422,
        'validation_failed',
        'action',
      );
      expectError(
        await postAction(t, shop.isp.token, service.id, { action: 'reboot' }),
        422,
        'validation_failed',
        'action',
      );
    });
  });

  describe('the worker', () => {
    it('should move an order through in_progress to completed in one attempt, with its events in order', async () => {
      const { isp, subscriberId } = shop;
      const pppoe = uniquePppoeUsername();
      const hold = gate();
      driver.script(`${isp.slug}/${pppoe}`, hold.step);
      let released = false;
      try {
        const { service, order } = await createService(t, isp.token, subscriberId, {
          plan_id: shop.planA.id,
          pppoe_username: pppoe,
        });
        const running = await waitForOrder(t, isp.token, order.id, ['in_progress']);
        expect(running).toMatchObject({ attempts: 1, last_error: null, completed_at: null });
        expect(await getService(t, isp.token, service.id)).toEqual(service);
        expectError(await cancelOrder(t, isp.token, order.id), 409, 'invalid_state_transition', 'status');
        hold.release();
        released = true;

        const done = await waitForOrder(t, isp.token, order.id, ['completed', 'failed']);
        expect(done).toEqual({
          ...order,
          status: 'completed',
          attempts: 1,
          last_error: null,
          completed_at: expect.any(String),
          updated_at: expect.any(String),
        });
        expect(driver.attemptsOf(order.id)).toBe(1);
        const active = await getService(t, isp.token, service.id);
        expect(active).toMatchObject({ status: 'active', activated_at: done.completed_at });

        const events = await listEvents(t, isp.token, {});
        expect(sequenceOf(events, [service.id, order.id])).toEqual([
          `service.created ${service.id}`,
          `provisioning_order.created ${order.id}`,
          `service.activated ${service.id}`,
          `provisioning_order.completed ${order.id}`,
        ]);
        const objectOf = (type: string, subject: string) =>
          events.find((event) => event.type === type && event.subject_id === subject)?.data.object;
        expect(objectOf('provisioning_order.completed', order.id)).toEqual(done);
        expect(objectOf('service.activated', service.id)).toEqual(active);
      } finally {
        if (!released) {
          hold.release();
        }
      }
    });

    it('should retry a transient driver failure and complete with attempts 2 and last_error cleared', async () => {
      const { isp, subscriberId } = shop;
      const pppoe = uniquePppoeUsername();
      const hold = gate();
      driver.script(`${isp.slug}/${pppoe}`, fail('radius down', true), hold.step);
      let released = false;
      try {
        const { service, order } = await createService(t, isp.token, subscriberId, {
          plan_id: shop.planA.id,
          pppoe_username: pppoe,
        });
        // Held in its second attempt: the first one's error is on the order meanwhile.
        const retrying = await pollOrder(t, isp.token, order.id, (row) => row.attempts === 2);
        expect(retrying).toMatchObject({ status: 'in_progress', last_error: 'radius down' });
        hold.release();
        released = true;

        const done = await waitForOrder(t, isp.token, order.id, ['completed', 'failed']);
        expect(done).toMatchObject({ status: 'completed', attempts: 2, last_error: null });
        expect(driver.attemptsOf(order.id)).toBe(2);
        expect((await getService(t, isp.token, service.id)).status).toBe('active');
        expect((await listEvents(t, isp.token, { subject_id: order.id })).map((event) => event.type)).toEqual(
          ['provisioning_order.completed', 'provisioning_order.created'],
        );
      } finally {
        if (!released) {
          hold.release();
        }
      }
    });

    it('should fail an order at once on a permanent driver error, leave the service as it was, and take the next action', async () => {
      const { isp } = shop;
      const service = await shop.serviceIn('active');
      const rows = await radiusRows(t, service.radius_username);
      driver.script(service.radius_username, fail('profile rejected by the NAS', false));
      const res = await postAction(t, isp.token, service.id, { action: 'suspend' });
      expectSuccess(res, 202);
      const order = res.body.data as Order;

      const failed = await waitForOrder(t, isp.token, order.id, ['completed', 'failed']);
      expect(failed).toEqual({
        ...order,
        status: 'failed',
        attempts: 1,
        last_error: 'profile rejected by the NAS',
        completed_at: null,
        updated_at: expect.any(String),
      });
      expect(driver.attemptsOf(order.id)).toBe(1);
      expect(await getService(t, isp.token, service.id)).toEqual(service);
      expect(await radiusRows(t, service.radius_username)).toEqual(rows);
      const events = await listEvents(t, isp.token, { subject_id: order.id });
      expect(events.map((event) => event.type)).toEqual([
        'provisioning_order.failed',
        'provisioning_order.created',
      ]);
      expect(events[0].data.object).toEqual(failed);
      expect(await listEvents(t, isp.token, { subject_id: service.id, type: 'service.suspended' })).toEqual(
        [],
      );
      expectError(await cancelOrder(t, isp.token, order.id), 409, 'invalid_state_transition', 'status');

      const retry = await shop.act(service.id, { action: 'suspend' });
      expect(retry).toMatchObject({ status: 'completed', attempts: 1 });
      expect((await getService(t, isp.token, service.id)).status).toBe('suspended');
    });

    it('should fail an order with the last error once transient failures outlast the retry delays', async () => {
      const { isp } = shop;
      const service = await shop.serviceIn('active');
      driver.script(
        service.radius_username,
        fail('radius down', true),
        fail('radius down', true),
        fail('radius still down', true),
      );
      const res = await postAction(t, isp.token, service.id, { action: 'terminate' });
      expectSuccess(res, 202);
      const failed = await waitForOrder(t, isp.token, res.body.data.id, ['completed', 'failed']);
      // One attempt, then one per delay (0.05,0.05).
      expect(failed).toMatchObject({
        status: 'failed',
        attempts: 3,
        last_error: 'radius still down',
        completed_at: null,
      });
      expect(driver.attemptsOf(failed.id)).toBe(3);
      expect(await getService(t, isp.token, service.id)).toEqual(service);
      expect((await listEvents(t, isp.token, { subject_id: failed.id })).map((event) => event.type)).toEqual([
        'provisioning_order.failed',
        'provisioning_order.created',
      ]);
    });

    it('should refuse to cancel a completed order with 409 invalid_state_transition', async () => {
      const service = await shop.serviceIn('active');
      const [activation] = await listOrders(t, shop.isp.token, { service_id: service.id });
      expect(activation.status).toBe('completed');
      expectError(
        await cancelOrder(t, shop.isp.token, activation.id),
        409,
        'invalid_state_transition',
        'status',
      );
      expect(await getOrder(t, shop.isp.token, activation.id)).toEqual(activation);
    });
  });

  describe('GET /api/v1/provisioning-orders', () => {
    let isp: TenantWithToken;
    let all: Order[];
    let serviceA: Service;
    let serviceB: Service;
    let subscriberA: string;
    let subscriberB: string;
    let held: { release: () => void } | undefined;
    let heldOrder: Order;

    beforeAll(async () => {
      isp = await createTenantWithToken(t, PROVISIONING_SCOPES);
      subscriberA = (await createSubscriber(t, isp.token, { status: 'active' })).id;
      subscriberB = (await createSubscriber(t, isp.token, { status: 'active' })).id;
      const planA = await createPlan(t, isp.token);
      const planB = await createPlan(t, isp.token, { download_kbps: 100_000, upload_kbps: 20_000 });
      const act = async (
        serviceId: string,
        body: Record<string, unknown>,
        until = ['completed', 'failed'],
      ) => {
        const res = await postAction(t, isp.token, serviceId, body);
        expectSuccess(res, 202);
        return waitForOrder(t, isp.token, res.body.data.id, until);
      };
      const create = async (subscriberId: string) => {
        const { service, order } = await createService(t, isp.token, subscriberId, { plan_id: planA.id });
        await waitForOrder(t, isp.token, order.id, ['completed']);
        return service;
      };

      // A: activate, suspend, resume (fails for good). B: activate, modify, change_plan, terminate (held in progress).
      serviceA = await create(subscriberA);
      await act(serviceA.id, { action: 'suspend' });
      driver.script(serviceA.radius_username, fail('NAS refused', false));
      await act(serviceA.id, { action: 'resume' });
      serviceB = await create(subscriberB);
      expectSuccess(
        await patchService(t, isp.token, serviceB.id, { pppoe_password: uniquePassword('list') }),
      );
      const [modify] = await listOrders(t, isp.token, { service_id: serviceB.id });
      await waitForOrder(t, isp.token, modify.id, ['completed']);
      await act(serviceB.id, { action: 'change_plan', plan_id: planB.id });
      const hold = gate();
      held = hold;
      driver.script(serviceB.radius_username, hold.step);
      heldOrder = await act(serviceB.id, { action: 'terminate' }, ['in_progress']);

      all = await listOrders(t, isp.token, {});
    });

    afterAll(async () => {
      held?.release();
      if (heldOrder) {
        await waitForOrder(t, isp.token, heldOrder.id, ['completed', 'failed']);
      }
    });

    it('should list the tenant’s 7 orders newest first', () => {
      expect(
        all.map((order) => `${order.service_id === serviceA.id ? 'A' : 'B'} ${order.action} ${order.status}`),
      ).toEqual([
        'B terminate in_progress',
        'B change_plan completed',
        'B modify completed',
        'B activate completed',
        'A resume failed',
        'A suspend completed',
        'A activate completed',
      ]);
      const keys = all.map((order) => [order.created_at, order.id].join(' '));
      expect([...keys].sort().reverse()).toEqual(keys);
    });

    type Fixture = { a: Service; b: Service; subA: string; subB: string };
    const byFilter: [string, (q: Fixture) => Record<string, string>, (o: Order, q: Fixture) => boolean][] = [
      ['service_id', (q) => ({ service_id: q.a.id }), (o, q) => o.service_id === q.a.id],
      ['subscriber_id', (q) => ({ subscriber_id: q.subB }), (o, q) => o.subscriber_id === q.subB],
      ['status=completed', () => ({ status: 'completed' }), (o) => o.status === 'completed'],
      ['status=failed', () => ({ status: 'failed' }), (o) => o.status === 'failed'],
      ['status=in_progress', () => ({ status: 'in_progress' }), (o) => o.status === 'in_progress'],
      ['status=acknowledged', () => ({ status: 'acknowledged' }), () => false],
      ['action=activate', () => ({ action: 'activate' }), (o) => o.action === 'activate'],
      ['action=modify', () => ({ action: 'modify' }), (o) => o.action === 'modify'],
      [
        'subscriber_id and status',
        (q) => ({ subscriber_id: q.subA, status: 'completed' }),
        (o, q) => o.subscriber_id === q.subA && o.status === 'completed',
      ],
      [
        'service_id and action',
        (q) => ({ service_id: q.b.id, action: 'change_plan' }),
        (o, q) => o.service_id === q.b.id && o.action === 'change_plan',
      ],
    ];

    it.each(byFilter)('should filter by %s', async (_name, query, keep) => {
      const q = { a: serviceA, b: serviceB, subA: subscriberA, subB: subscriberB };
      const expected = all.filter((order) => keep(order, q)).map((order) => order.id);
      const rows = await listOrders(t, isp.token, query(q));
      expect(rows.map((order) => order.id)).toEqual(expected);
    });

    it('should filter by created_gte and created_lt around an order', async () => {
      const pivot = all[3];
      const from = await listOrders(t, isp.token, { created_gte: pivot.created_at });
      expect(from.map((order) => order.id)).toEqual(
        all.filter((order) => order.created_at >= pivot.created_at).map((order) => order.id),
      );
      expect(from.map((order) => order.id)).toContain(pivot.id);
      const before = await listOrders(t, isp.token, { created_lt: pivot.created_at });
      expect(before.map((order) => order.id)).toEqual(
        all.filter((order) => order.created_at < pivot.created_at).map((order) => order.id),
      );
      expect(before.length + from.length).toBe(all.length);
    });

    it('should walk the list two at a time', async () => {
      const { ids } = await walkPages(t, isp.token, '/api/v1/provisioning-orders', 2);
      expect(ids).toEqual(all.map((order) => order.id));
    });

    it('should show another tenant none of them', async () => {
      const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
      expect(await listOrders(t, other.token, {})).toEqual([]);
      expect(await listOrders(t, other.token, { service_id: serviceA.id })).toEqual([]);
      expectNotFound(
        await request(t.http).get(`/api/v1/provisioning-orders/${all[0].id}`).set(bearer(other.token)),
      );
    });

    it.each([
      [{ status: 'done' }, 'status'],
      [{ action: 'reboot' }, 'action'],
      [{ created_gte: 'yesterday' }, 'created_gte'],
      [{ created_lt: '2026-13-01T00:00:00Z' }, 'created_lt'],
      [{ limit: '0' }, 'limit'],
    ])('should refuse %j with 400 invalid_query naming the parameter', async (query, field) => {
      const res = await request(t.http)
        .get('/api/v1/provisioning-orders')
        .query(query)
        .set(bearer(isp.token));
      expectError(res, 400, 'invalid_query', field);
    });
  });

  describe('the PPPoE password', () => {
    it('should appear in no order, event, answer or log line across a whole lifecycle with a PATCHed password', async () => {
      const isp = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const subscriberId = (await createSubscriber(t, isp.token, { status: 'active' })).id;
      const planA = await createPlan(t, isp.token);
      const planB = await createPlan(t, isp.token, { download_kbps: 100_000, upload_kbps: 20_000 });
      const first = uniquePassword('FirstSecret');
      const second = uniquePassword('SecondSecret');
      const bodies: unknown[] = [];
      const logStart = logs.raw.length;

      const created = await createService(t, isp.token, subscriberId, {
        plan_id: planA.id,
        pppoe_password: first,
        static_ipv4: '198.51.100.77',
      });
      bodies.push(created);
      const service = created.service;
      bodies.push(await waitForOrder(t, isp.token, created.order.id, ['completed']));
      expect((await radiusRows(t, service.radius_username)).check).toEqual([
        { attribute: 'Cleartext-Password', op: ':=', value: first },
      ]);

      const patched = await patchService(t, isp.token, service.id, { pppoe_password: second });
      expectSuccess(patched);
      bodies.push(patched.body);
      const [modify] = await listOrders(t, isp.token, { service_id: service.id });
      expect(modify).toMatchObject({ action: 'modify', changes: ['pppoe_password'] });
      bodies.push(await waitForOrder(t, isp.token, modify.id, ['completed']));
      expect((await radiusRows(t, service.radius_username)).check).toEqual([
        { attribute: 'Cleartext-Password', op: ':=', value: second },
      ]);

      for (const body of [
        { action: 'suspend', reason: 'non_payment' },
        { action: 'resume' },
        { action: 'change_plan', plan_id: planB.id },
        { action: 'terminate' },
      ]) {
        const res = await postAction(t, isp.token, service.id, body);
        expectSuccess(res, 202);
        bodies.push(res.body);
        const done = await waitForOrder(t, isp.token, res.body.data.id, ['completed', 'failed']);
        expect(done.status).toBe('completed');
      }

      const orders = await listOrders(t, isp.token, { service_id: service.id });
      expect(orders.map((order) => order.action)).toEqual([
        'terminate',
        'change_plan',
        'resume',
        'suspend',
        'modify',
        'activate',
      ]);
      bodies.push(orders, await getService(t, isp.token, service.id));
      for (const order of orders) {
        bodies.push(await getOrder(t, isp.token, order.id));
      }
      const events = await listEvents(t, isp.token, {});
      expect(events.map((event) => event.type)).toEqual(
        expect.arrayContaining([
          'service.created',
          'service.updated',
          'service.activated',
          'service.suspended',
          'service.resumed',
          'service.plan_changed',
          'service.terminated',
          'provisioning_order.created',
          'provisioning_order.completed',
        ]),
      );
      bodies.push(events);
      const lines = logs.raw.slice(logStart);
      // The capture saw this lifecycle: its PATCH request line is there.
      expect(lines.some((line) => line.includes(`/api/v1/services/${service.id}`))).toBe(true);

      const everything = JSON.stringify(bodies);
      for (const password of [first, second]) {
        expect(everything).not.toContain(password);
        expect(lines.filter((line) => line.includes(password))).toEqual([]);
      }
    });
  });
});
