import { randomBytes } from 'node:crypto';
import request, { type Response } from 'supertest';
import { DriverError, NETWORK_DRIVER, type NetworkDriver } from '../../src/provisioning';
import { expectError, expectList, expectSuccess, expectNotFound, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createPlan,
  createService,
  DEFAULT_PPPOE_PASSWORD,
  getOrder,
  getService,
  type Order,
  ORDER_ID,
  PLAN_ID,
  postAction,
  postPlan,
  postService,
  PROVISIONING_SCOPES,
  radiusRows,
  type Service,
  SERVICE_ID,
  type ServicePlan,
  uniquePlanName,
  uniquePppoeUsername,
  waitForOrder,
} from '../support/provisioning-factory';
import {
  createSubscriber,
  createSubscriberInState,
  type EventBody,
  ISO_MS,
  listen,
  listEvents,
} from '../support/subscriber-factory';
import {
  createTenantWithToken,
  startTestApp,
  type TenantWithToken,
  type TestApp,
  issueToken,
} from '../support/test-app';

type Body = Record<string, unknown>;

const PLAN_KEYS = [
  'active',
  'billing_period',
  'burst_download_kbps',
  'burst_threshold_download_kbps',
  'burst_threshold_upload_kbps',
  'burst_time_s',
  'burst_upload_kbps',
  'cap_action',
  'created_at',
  'currency',
  'data_cap_bytes',
  'download_kbps',
  'id',
  'name',
  'price',
  'tax_rate_ids',
  'throttle_download_kbps',
  'throttle_upload_kbps',
  'updated_at',
  'upload_kbps',
];
const SERVICE_KEYS = [
  'activated_at',
  'cap_state',
  'cpe_mac',
  'created_at',
  'delegated_ipv6_prefix',
  'external_id',
  'id',
  'installation_address',
  'ip_pool_id',
  'ipv6_pool_id',
  'plan_id',
  'pppoe_username',
  'radius_username',
  'static_ipv4',
  'status',
  'subscriber_id',
  'terminated_at',
  'updated_at',
];
const ORDER_KEYS = [
  'action',
  'attempts',
  'changes',
  'coa',
  'completed_at',
  'created_at',
  'disconnect',
  'id',
  'last_error',
  'plan_id',
  'reason',
  'service_id',
  'status',
  'subscriber_id',
  'updated_at',
];

/** The worker as these suites run it: a quick poll and quick retries. */
const WORKER_ENV = { PROVISIONING_POLL_MS: '50', PROVISIONING_RETRY_DELAYS_S: '0.05,0.05' };

/** A password no other test uses: long enough to be sought in any answer or event without a false match. */
function uniquePassword(): string {
  return `Pw-${randomBytes(9).toString('hex')}`;
}

/**
 * Issue: the provisioning catalogue — service plans, ordering services, their validation, uniqueness, lists, edits,
 * tenant isolation and scopes — and that the PPPoE password is write-only everywhere.
 */
describe('Provisioning: plans and services', () => {
  let t: TestApp;
  let isp: TenantWithToken;
  let driver: NetworkDriver;
  let subscriberId: string;
  let plan: ServicePlan;
  let ipSeq = 0;

  /** A static address not yet used in this run's tenants (they are fresh, so the sequence is enough). */
  const nextIp = () => {
    ipSeq += 1;
    return `198.18.${Math.floor(ipSeq / 250)}.${(ipSeq % 250) + 1}`;
  };

  const api = (method: 'get' | 'post' | 'patch', path: string, token = isp.token) =>
    request(t.http)[method](`/api/v1/${path}`).set(bearer(token));
  const patchPlan = (id: string, body: Body, token = isp.token) =>
    api('patch', `service-plans/${id}`, token).send(body);
  const patchService = (id: string, body: Body, token = isp.token) =>
    api('patch', `services/${id}`, token).send(body);

  /** Waits for an order to end and insists it completed (a failure shows its last_error). */
  async function completed(orderId: string, token = isp.token): Promise<Order> {
    const order = await waitForOrder(t, token, orderId, ['completed', 'failed', 'cancelled']);
    expect({ id: order.id, status: order.status, last_error: order.last_error }).toEqual({
      id: orderId,
      status: 'completed',
      last_error: null,
    });
    return order;
  }

  /** A service the worker has activated. */
  async function activeService(subscriber: string, overrides: Body = {}, token = isp.token) {
    const { service, order } = await createService(t, token, subscriber, overrides);
    await completed(order.id, token);
    return getService(t, token, service.id);
  }

  /** Terminates a service with no open order and waits for the order to complete. */
  async function terminate(serviceId: string, token = isp.token): Promise<Service> {
    const res = await postAction(t, token, serviceId, { action: 'terminate' });
    expectSuccess(res, 202);
    await completed(res.body.data.id as string, token);
    const service = await getService(t, token, serviceId);
    expect(service.status).toBe('terminated');
    return service;
  }

  async function suspend(serviceId: string): Promise<void> {
    const res = await postAction(t, isp.token, serviceId, { action: 'suspend' });
    expectSuccess(res, 202);
    await completed(res.body.data.id as string);
  }

  /** The driver as it is, except for the service with this username: its apply waits until released. */
  function holdApply(username: string) {
    const original = driver.apply.bind(driver);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const started = new Promise<void>((resolve) => (reached = resolve));
    const spy = jest.spyOn(driver, 'apply').mockImplementation(async (order, service, servicePlan) => {
      if (service.pppoeUsername === username) {
        reached();
        await gate;
      }
      return original(order, service, servicePlan);
    });
    return {
      started,
      release: () => {
        spy.mockRestore();
        release();
      },
    };
  }

  /** The driver as it is, except that it fails the orders of the service with this username for good. */
  function failApply(username: string) {
    const original = driver.apply.bind(driver);
    return jest.spyOn(driver, 'apply').mockImplementation(async (order, service, servicePlan) => {
      if (service.pppoeUsername === username) {
        throw new DriverError('the NAS refused the login', false);
      }
      return original(order, service, servicePlan);
    });
  }

  /** The ids of every order of a service, oldest first. */
  async function orderActions(serviceId: string): Promise<string[]> {
    const res = await api('get', `provisioning-orders?service_id=${serviceId}&limit=100`);
    expectList(res);
    return (res.body.data as Order[]).map((order) => order.action).reverse();
  }

  /** Every event of a tenant, newest first, through all pages, and each page's raw JSON. */
  async function allEvents(token: string): Promise<{ events: EventBody[]; raw: string[] }> {
    const events: EventBody[] = [];
    const raw: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Response = await request(t.http)
        .get('/api/v1/events')
        .query(cursor ? { limit: '100', starting_after: cursor } : { limit: '100' })
        .set(bearer(token));
      expectList(res);
      raw.push(res.text);
      events.push(...(res.body.data as EventBody[]));
      cursor = res.body.meta.pagination.has_more ? (res.body.meta.pagination.next_cursor as string) : null;
    } while (cursor);
    return { events, raw };
  }

  beforeAll(async () => {
    t = await startTestApp(WORKER_ENV);
    await listen(t);
    driver = t.app.get<NetworkDriver>(NETWORK_DRIVER);
    isp = await createTenantWithToken(t, PROVISIONING_SCOPES);
    subscriberId = (await createSubscriber(t, isp.token, { status: 'active' })).id;
    plan = await createPlan(t, isp.token);
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  afterAll(async () => {
    await t.close();
  });

  describe('POST /api/v1/service-plans', () => {
    it('should create a plan with the defaults, trimmed name, and its service_plan.created event', async () => {
      const name = uniquePlanName();
      const res = await postPlan(t, isp.token, {
        name: `  ${name}  `,
        download_kbps: 500_000,
        upload_kbps: 100_000,
        price: 4999,
        currency: 'EUR',
      });
      const created = successRecord<ServicePlan>(res, PLAN_KEYS, 201);
      expect(created).toEqual({
        id: expect.stringMatching(PLAN_ID),
        name,
        download_kbps: 500_000,
        upload_kbps: 100_000,
        price: 4999,
        currency: 'EUR',
        billing_period: 'monthly',
        active: true,
        tax_rate_ids: null,
        data_cap_bytes: null,
        cap_action: null,
        throttle_download_kbps: null,
        throttle_upload_kbps: null,
        burst_download_kbps: null,
        burst_upload_kbps: null,
        burst_threshold_download_kbps: null,
        burst_threshold_upload_kbps: null,
        burst_time_s: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: created.created_at,
      });
      const read = await api('get', `service-plans/${created.id}`);
      expectSuccess(read);
      expect(read.body.data).toEqual(created);
      const [event] = await listEvents(t, isp.token, { subject_id: created.id });
      expect(event.type).toBe('service_plan.created');
      expect(event.data.object).toEqual(created);
    });

    it('should take the bounds: speeds 1 and 100,000,000, price 0 and 2^53-1, monthly and inactive', async () => {
      const low = await createPlan(t, isp.token, {
        download_kbps: 1,
        upload_kbps: 1,
        price: 0,
        billing_period: 'monthly',
        active: false,
      });
      expect(low).toMatchObject({ download_kbps: 1, upload_kbps: 1, price: 0, active: false });
      const high = await createPlan(t, isp.token, {
        name: 'x'.repeat(90) + randomBytes(5).toString('hex'),
        download_kbps: 100_000_000,
        upload_kbps: 100_000_000,
        price: Number.MAX_SAFE_INTEGER,
        currency: 'JPY',
      });
      expect(high).toMatchObject({
        download_kbps: 100_000_000,
        upload_kbps: 100_000_000,
        price: Number.MAX_SAFE_INTEGER,
        currency: 'JPY',
      });
      expect(high.name).toHaveLength(100);
    });

    it.each([
      ['no name', { name: undefined }, 400, 'missing_field', 'name'],
      ['a null name', { name: null }, 400, 'missing_field', 'name'],
      ['an empty name', { name: '' }, 422, 'validation_failed', 'name'],
      ['a blank name', { name: '   ' }, 422, 'validation_failed', 'name'],
      ['a name of 101', { name: 'n'.repeat(101) }, 422, 'validation_failed', 'name'],
      ['a numeric name', { name: 500 }, 422, 'validation_failed', 'name'],
      ['no download_kbps', { download_kbps: undefined }, 400, 'missing_field', 'download_kbps'],
      ['a fractional download_kbps', { download_kbps: 1.5 }, 422, 'validation_failed', 'download_kbps'],
      ['a string download_kbps', { download_kbps: '500' }, 422, 'validation_failed', 'download_kbps'],
      ['a download_kbps of 0', { download_kbps: 0 }, 422, 'validation_failed', 'download_kbps'],
      ['a negative download_kbps', { download_kbps: -1 }, 422, 'validation_failed', 'download_kbps'],
      [
        'a download_kbps over 10^8',
        { download_kbps: 100_000_001 },
        422,
        'validation_failed',
        'download_kbps',
      ],
      ['no upload_kbps', { upload_kbps: undefined }, 400, 'missing_field', 'upload_kbps'],
      ['a null upload_kbps', { upload_kbps: null }, 400, 'missing_field', 'upload_kbps'],
      ['a fractional upload_kbps', { upload_kbps: 0.5 }, 422, 'validation_failed', 'upload_kbps'],
      ['an upload_kbps of 0', { upload_kbps: 0 }, 422, 'validation_failed', 'upload_kbps'],
      ['a negative upload_kbps', { upload_kbps: -10 }, 422, 'validation_failed', 'upload_kbps'],
      ['an upload_kbps over 10^8', { upload_kbps: 100_000_001 }, 422, 'validation_failed', 'upload_kbps'],
      ['no price', { price: undefined }, 400, 'missing_field', 'price'],
      ['a negative price', { price: -1 }, 422, 'validation_failed', 'price'],
      ['a fractional price', { price: 49.99 }, 422, 'validation_failed', 'price'],
      ['a string price', { price: '4999' }, 422, 'validation_failed', 'price'],
      ['a price of 2^53', { price: 2 ** 53 }, 422, 'validation_failed', 'price'],
      ['no currency', { currency: undefined }, 400, 'missing_field', 'currency'],
      ['a lower-case currency', { currency: 'usd' }, 422, 'validation_failed', 'currency'],
      ['an unknown currency', { currency: 'XYZ' }, 422, 'validation_failed', 'currency'],
      ['a two-letter currency', { currency: 'US' }, 422, 'validation_failed', 'currency'],
      ['a numeric currency', { currency: 840 }, 422, 'validation_failed', 'currency'],
      ['a weekly billing_period', { billing_period: 'weekly' }, 422, 'validation_failed', 'billing_period'],
      ['a null billing_period', { billing_period: null }, 422, 'validation_failed', 'billing_period'],
      ['a string active', { active: 'yes' }, 422, 'validation_failed', 'active'],
      ['a null active', { active: null }, 422, 'validation_failed', 'active'],
      ['an id', { id: 'plan_mine' }, 400, 'unknown_field', 'id'],
      ['an unknown field', { colour: 'blue' }, 400, 'unknown_field', 'colour'],
    ])('should refuse %s', async (_case, fields, status, code, field) => {
      const body = {
        name: uniquePlanName(),
        download_kbps: 50_000,
        upload_kbps: 10_000,
        price: 4999,
        currency: 'USD',
        ...fields,
      };
      expectError(await postPlan(t, isp.token, body), status, code, field);
    });

    it('should refuse a duplicate name in the tenant, trimmed, with 409 duplicate_service_plan, but not in another', async () => {
      const name = uniquePlanName();
      await createPlan(t, isp.token, { name });
      expectError(
        await postPlan(t, isp.token, {
          name: ` ${name} `,
          download_kbps: 1,
          upload_kbps: 1,
          price: 1,
          currency: 'USD',
        }),
        409,
        'duplicate_service_plan',
        'name',
      );
      const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
      expect((await createPlan(t, other.token, { name })).name).toBe(name);
      const renamed = await createPlan(t, isp.token);
      expectError(await patchPlan(renamed.id, { name }), 409, 'duplicate_service_plan', 'name');
    });
  });

  describe('GET /api/v1/service-plans', () => {
    it('should list the tenant’s plans newest first and filter on active', async () => {
      const fresh = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const first = await createPlan(t, fresh.token);
      const retired = await createPlan(t, fresh.token, { active: false });
      const third = await createPlan(t, fresh.token);
      const ids = async (query: string) => {
        const res = await api('get', `service-plans${query}`, fresh.token);
        expectList(res);
        return (res.body.data as ServicePlan[]).map((row) => row.id);
      };
      expect(await ids('')).toEqual([third.id, retired.id, first.id]);
      expect(await ids('?active=true')).toEqual([third.id, first.id]);
      expect(await ids('?active=false')).toEqual([retired.id]);
      expect(await ids('?active=true&limit=1')).toEqual([third.id]);
      expectError(await api('get', 'service-plans?active=yes', fresh.token), 400, 'invalid_query', 'active');
      expectError(await api('get', 'service-plans?colour=red', fresh.token), 400, 'invalid_query', 'colour');
      expectNotFound(await api('get', 'service-plans/plan_unknown'));
    });
  });

  describe('PATCH /api/v1/service-plans/{id}', () => {
    it('should rename and deactivate a plan in use, with service_plan.updated naming the changed fields', async () => {
      const used = await createPlan(t, isp.token);
      const service = await activeService(subscriberId, { plan_id: used.id });
      const name = uniquePlanName('Legacy');
      const res = await patchPlan(used.id, { name: ` ${name} `, active: false });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ ...used, name, active: false, updated_at: expect.any(String) });
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(used.updated_at));
      const [event] = await listEvents(t, isp.token, { subject_id: used.id, type: 'service_plan.updated' });
      expect(event.data.object).toEqual(res.body.data);
      expect(event.data.changed_fields).toEqual(['name', 'active']);
      expectSuccess(await patchPlan(used.id, { active: true }));
      // Sending the speeds and price it already has changes nothing, so it is not refused.
      const same = await patchPlan(used.id, { download_kbps: used.download_kbps, price: used.price });
      expectSuccess(same);
      expect(same.body.data).toMatchObject({ download_kbps: used.download_kbps, price: used.price });
      expect((await getService(t, isp.token, service.id)).status).toBe('active');
    });

    it.each([
      ['a blank name', { name: ' ' }, 422, 'validation_failed', 'name'],
      ['a null name', { name: null }, 422, 'validation_failed', 'name'],
      ['a download_kbps of 0', { download_kbps: 0 }, 422, 'validation_failed', 'download_kbps'],
      ['a fractional upload_kbps', { upload_kbps: 2.5 }, 422, 'validation_failed', 'upload_kbps'],
      ['a negative price', { price: -5 }, 422, 'validation_failed', 'price'],
      ['a currency', { currency: 'EUR' }, 400, 'unknown_field', 'currency'],
      ['a billing_period', { billing_period: 'monthly' }, 400, 'unknown_field', 'billing_period'],
      ['a string active', { active: 'false' }, 422, 'validation_failed', 'active'],
    ])('should refuse %s', async (_case, body, status, code, field) => {
      expectError(await patchPlan(plan.id, body), status, code, field);
    });

    it('should answer 404 for an unknown plan', async () => {
      expectNotFound(await patchPlan('plan_unknown', { name: 'x' }));
    });

    const frozen = [
      ['download_kbps', 60_000],
      ['upload_kbps', 20_000],
      ['price', 5999],
    ] as const;

    async function expectFrozen(planId: string): Promise<void> {
      for (const [field, value] of frozen) {
        expectError(
          await patchPlan(planId, { name: uniquePlanName(), [field]: value }),
          409,
          'plan_in_use',
          field,
        );
      }
      const read = await api('get', `service-plans/${planId}`);
      expect(read.body.data).toMatchObject({ download_kbps: 50_000, upload_kbps: 10_000, price: 4999 });
    }

    it('should refuse speed and price changes with 409 plan_in_use while a pending service uses the plan', async () => {
      const pendingPlan = await createPlan(t, isp.token);
      const username = uniquePppoeUsername();
      failApply(username);
      const { service, order } = await createService(t, isp.token, subscriberId, {
        plan_id: pendingPlan.id,
        pppoe_username: username,
      });
      const failed = await waitForOrder(t, isp.token, order.id, ['completed', 'failed']);
      expect(failed).toMatchObject({ status: 'failed', last_error: 'the NAS refused the login' });
      expect((await getService(t, isp.token, service.id)).status).toBe('pending');
      await expectFrozen(pendingPlan.id);
    });

    it('should refuse them while an active service uses the plan', async () => {
      const activePlan = await createPlan(t, isp.token);
      await activeService(subscriberId, { plan_id: activePlan.id });
      await expectFrozen(activePlan.id);
    });

    it('should refuse them while a suspended service uses the plan', async () => {
      const suspendedPlan = await createPlan(t, isp.token);
      const service = await activeService(subscriberId, { plan_id: suspendedPlan.id });
      await suspend(service.id);
      expect((await getService(t, isp.token, service.id)).status).toBe('suspended');
      await expectFrozen(suspendedPlan.id);
    });

    it('should refuse them on the plan an open change_plan order moves a service to, and free the old plan', async () => {
      const from = await createPlan(t, isp.token);
      const to = await createPlan(t, isp.token);
      const username = uniquePppoeUsername();
      const service = await activeService(subscriberId, { plan_id: from.id, pppoe_username: username });
      const held = holdApply(username);
      const res = await postAction(t, isp.token, service.id, { action: 'change_plan', plan_id: to.id });
      expectSuccess(res, 202);
      try {
        await held.started;
        expect((await getOrder(t, isp.token, res.body.data.id as string)).status).toBe('in_progress');
        await expectFrozen(to.id);
      } finally {
        held.release();
      }
      await completed(res.body.data.id as string);
      expect((await getService(t, isp.token, service.id)).plan_id).toBe(to.id);
      await expectFrozen(to.id);
      expectSuccess(await patchPlan(from.id, { price: 6999 }));
    });

    it('should allow them again once the only service of the plan is terminated', async () => {
      const lonely = await createPlan(t, isp.token);
      const username = uniquePppoeUsername();
      const service = await activeService(subscriberId, { plan_id: lonely.id, pppoe_username: username });
      await expectFrozen(lonely.id);
      const held = holdApply(username);
      const res = await postAction(t, isp.token, service.id, { action: 'terminate' });
      expectSuccess(res, 202);
      try {
        await held.started;
        // Until the terminate order completes the service is still live.
        await expectFrozen(lonely.id);
      } finally {
        held.release();
      }
      await completed(res.body.data.id as string);
      const updated = await patchPlan(lonely.id, { download_kbps: 60_000, upload_kbps: 20_000, price: 5999 });
      expectSuccess(updated);
      expect(updated.body.data).toMatchObject({ download_kbps: 60_000, upload_kbps: 20_000, price: 5999 });
      const [event] = await listEvents(t, isp.token, { subject_id: lonely.id, type: 'service_plan.updated' });
      expect(event.data.changed_fields).toEqual(['download_kbps', 'upload_kbps', 'price']);
    });
  });

  describe('POST /api/v1/subscribers/{id}/services', () => {
    it('should answer 202 with the pending service and its acknowledged activate order, then activate it', async () => {
      const username = uniquePppoeUsername();
      const ip = nextIp();
      const res = await postService(t, isp.token, subscriberId, {
        plan_id: ` ${plan.id} `,
        pppoe_username: ` ${username} `,
        pppoe_password: DEFAULT_PPPOE_PASSWORD,
        static_ipv4: ip,
        cpe_mac: 'AA-BB-CC-00-11-22',
        installation_address: '12 Fibre Lane, Springfield',
      });
      expectSuccess(res, 202);
      expect(Object.keys(res.body.data).sort()).toEqual(['order', 'service']);
      const { service, order } = res.body.data as { service: Service; order: Order };
      expect(Object.keys(service).sort()).toEqual(SERVICE_KEYS);
      expect(service).toEqual({
        id: expect.stringMatching(SERVICE_ID),
        subscriber_id: subscriberId,
        plan_id: plan.id,
        status: 'pending',
        external_id: null,
        pppoe_username: username,
        radius_username: `${isp.slug}/${username}`,
        static_ipv4: ip,
        ip_pool_id: null,
        ipv6_pool_id: null,
        delegated_ipv6_prefix: null,
        cpe_mac: 'aa:bb:cc:00:11:22',
        installation_address: '12 Fibre Lane, Springfield',
        activated_at: null,
        terminated_at: null,
        cap_state: 'normal',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: service.created_at,
      });
      expect(Object.keys(order).sort()).toEqual(ORDER_KEYS);
      expect(order).toEqual({
        id: expect.stringMatching(ORDER_ID),
        service_id: service.id,
        subscriber_id: subscriberId,
        action: 'activate',
        status: 'acknowledged',
        plan_id: plan.id,
        changes: null,
        reason: null,
        attempts: 0,
        last_error: null,
        completed_at: null,
        disconnect: null,
        coa: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: order.created_at,
      });

      const done = await completed(order.id);
      expect(done).toMatchObject({
        action: 'activate',
        attempts: 1,
        completed_at: expect.stringMatching(ISO_MS),
      });
      const active = await getService(t, isp.token, service.id);
      expect(active).toEqual({
        ...service,
        status: 'active',
        activated_at: expect.stringMatching(ISO_MS),
        updated_at: active.activated_at,
      });
      expect(Date.parse(active.activated_at as string)).toBeGreaterThanOrEqual(
        Date.parse(service.created_at),
      );
      const types = (await listEvents(t, isp.token, { subject_id: service.id })).map((event) => event.type);
      expect(types).toEqual(['service.activated', 'service.created']);
      expect((await radiusRows(t, service.radius_username)).check).toEqual([
        { attribute: 'Cleartext-Password', op: ':=', value: DEFAULT_PPPOE_PASSWORD },
      ]);
    });

    it('should take the bounds of the username and password and the edges of unicast IPv4', async () => {
      const allowed = `a.B_0@-${randomBytes(4).toString('hex')}`;
      const cases: Body[] = [
        { pppoe_username: `u${randomBytes(1).toString('hex')}` },
        { pppoe_username: allowed.padEnd(64, 'x') },
        { pppoe_password: 'p'.repeat(8) },
        { pppoe_password: ' !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'.padEnd(128, 'z') },
        { static_ipv4: '1.0.0.1' },
        { static_ipv4: '223.255.255.254' },
        { static_ipv4: ` ${nextIp()} ` },
      ];
      for (const fields of cases) {
        const res = await postService(t, isp.token, subscriberId, {
          plan_id: plan.id,
          pppoe_username: uniquePppoeUsername(),
          pppoe_password: DEFAULT_PPPOE_PASSWORD,
          ...fields,
        });
        expectSuccess(res, 202);
        const service = res.body.data.service as Service;
        if (typeof fields.pppoe_username === 'string') {
          expect(service.pppoe_username).toBe(fields.pppoe_username);
        }
        if (typeof fields.static_ipv4 === 'string') {
          expect(service.static_ipv4).toBe(fields.static_ipv4.trim());
        }
      }
      expect([
        (cases[1].pppoe_username as string).length,
        (cases[3].pppoe_password as string).length,
      ]).toEqual([64, 128]);
    });

    it.each([
      ['AA-BB-CC-00-11-22', 'aa:bb:cc:00:11:22'],
      ['aabb.cc00.1123', 'aa:bb:cc:00:11:23'],
      ['AABBCC001124', 'aa:bb:cc:00:11:24'],
      ['AA:bb:CC:00:11:25', 'aa:bb:cc:00:11:25'],
    ])('should store the MAC address %s as %s', async (sent, stored) => {
      const { service } = await createService(t, isp.token, subscriberId, {
        plan_id: plan.id,
        cpe_mac: sent,
      });
      expect(service.cpe_mac).toBe(stored);
      expect((await getService(t, isp.token, service.id)).cpe_mac).toBe(stored);
    });

    it.each([
      ['no plan_id', { plan_id: undefined }, 400, 'missing_field', 'plan_id'],
      ['a null plan_id', { plan_id: null }, 400, 'missing_field', 'plan_id'],
      ['an unknown plan_id', { plan_id: 'plan_unknown' }, 422, 'invalid_reference', 'plan_id'],
      ['a numeric plan_id', { plan_id: 42 }, 422, 'validation_failed', 'plan_id'],
      ['no pppoe_username', { pppoe_username: undefined }, 400, 'missing_field', 'pppoe_username'],
      ['an empty pppoe_username', { pppoe_username: '' }, 422, 'validation_failed', 'pppoe_username'],
      ['a pppoe_username of 2', { pppoe_username: 'ab' }, 422, 'validation_failed', 'pppoe_username'],
      [
        'a pppoe_username of 2 once trimmed',
        { pppoe_username: ' ab ' },
        422,
        'validation_failed',
        'pppoe_username',
      ],
      [
        'a pppoe_username of 65',
        { pppoe_username: 'u'.repeat(65) },
        422,
        'validation_failed',
        'pppoe_username',
      ],
      [
        'a pppoe_username with a space',
        { pppoe_username: 'ada love' },
        422,
        'validation_failed',
        'pppoe_username',
      ],
      [
        'a pppoe_username with a slash',
        { pppoe_username: 'isp/ada' },
        422,
        'validation_failed',
        'pppoe_username',
      ],
      [
        'a pppoe_username with a quote',
        { pppoe_username: "ada'--" },
        422,
        'validation_failed',
        'pppoe_username',
      ],
      ['a non-ASCII pppoe_username', { pppoe_username: 'adé.l' }, 422, 'validation_failed', 'pppoe_username'],
      ['a numeric pppoe_username', { pppoe_username: 12345 }, 422, 'validation_failed', 'pppoe_username'],
      ['no pppoe_password', { pppoe_password: undefined }, 400, 'missing_field', 'pppoe_password'],
      ['a null pppoe_password', { pppoe_password: null }, 400, 'missing_field', 'pppoe_password'],
      [
        'a pppoe_password of 7',
        { pppoe_password: 'p'.repeat(7) },
        422,
        'validation_failed',
        'pppoe_password',
      ],
      [
        'a pppoe_password of 129',
        { pppoe_password: 'p'.repeat(129) },
        422,
        'validation_failed',
        'pppoe_password',
      ],
      [
        'a non-ASCII pppoe_password',
        { pppoe_password: 'pässwört-1' },
        422,
        'validation_failed',
        'pppoe_password',
      ],
      [
        'a pppoe_password with a tab',
        { pppoe_password: 'pass\tword1' },
        422,
        'validation_failed',
        'pppoe_password',
      ],
      ['a numeric pppoe_password', { pppoe_password: 12345678 }, 422, 'validation_failed', 'pppoe_password'],
      ['a malformed static_ipv4', { static_ipv4: '10.0.0' }, 422, 'validation_failed', 'static_ipv4'],
      ['a static_ipv4 of 999.1.1.1', { static_ipv4: '999.1.1.1' }, 422, 'validation_failed', 'static_ipv4'],
      ['a static_ipv4 of 10.0.0.256', { static_ipv4: '10.0.0.256' }, 422, 'validation_failed', 'static_ipv4'],
      [
        'a static_ipv4 with a leading 0',
        { static_ipv4: '10.0.0.01' },
        422,
        'validation_failed',
        'static_ipv4',
      ],
      ['a loopback static_ipv4', { static_ipv4: '127.0.0.1' }, 422, 'validation_failed', 'static_ipv4'],
      ['a multicast static_ipv4', { static_ipv4: '224.0.0.1' }, 422, 'validation_failed', 'static_ipv4'],
      [
        'a broadcast static_ipv4',
        { static_ipv4: '255.255.255.255' },
        422,
        'validation_failed',
        'static_ipv4',
      ],
      ['a static_ipv4 of 0.0.0.0', { static_ipv4: '0.0.0.0' }, 422, 'validation_failed', 'static_ipv4'],
      ['an IPv6 static_ipv4', { static_ipv4: '2001:db8::1' }, 422, 'validation_failed', 'static_ipv4'],
      ['a numeric static_ipv4', { static_ipv4: 167772161 }, 422, 'validation_failed', 'static_ipv4'],
      ['a short cpe_mac', { cpe_mac: 'aa:bb:cc:dd:ee' }, 422, 'validation_failed', 'cpe_mac'],
      ['a non-hex cpe_mac', { cpe_mac: 'gg:bb:cc:dd:ee:ff' }, 422, 'validation_failed', 'cpe_mac'],
      ['a cpe_mac of mixed forms', { cpe_mac: 'aabb.ccdd:eeff' }, 422, 'validation_failed', 'cpe_mac'],
      ['a numeric cpe_mac', { cpe_mac: 112233445566 }, 422, 'validation_failed', 'cpe_mac'],
      [
        'an installation_address of 501',
        { installation_address: 'a'.repeat(501) },
        422,
        'validation_failed',
        'installation_address',
      ],
      [
        'a numeric installation_address',
        { installation_address: 12 },
        422,
        'validation_failed',
        'installation_address',
      ],
      ['a status', { status: 'active' }, 400, 'unknown_field', 'status'],
      ['a radius_username', { radius_username: 'x/y' }, 400, 'unknown_field', 'radius_username'],
      ['an unknown field', { vlan: 12 }, 400, 'unknown_field', 'vlan'],
    ])('should refuse %s', async (_case, fields, status, code, field) => {
      const username = uniquePppoeUsername();
      const body = {
        plan_id: plan.id,
        pppoe_username: username,
        pppoe_password: DEFAULT_PPPOE_PASSWORD,
        ...fields,
      };
      const res = await postService(t, isp.token, subscriberId, body);
      expectError(res, status, code, field);
      expect(res.text).not.toContain(DEFAULT_PPPOE_PASSWORD);
      const listed = await api('get', `services?pppoe_username=${username}`);
      expect(listed.body.data).toEqual([]);
    });

    it('should refuse an inactive plan with 422 validation_failed and another tenant’s with invalid_reference', async () => {
      const inactive = await createPlan(t, isp.token, { active: false });
      const base = { pppoe_username: uniquePppoeUsername(), pppoe_password: DEFAULT_PPPOE_PASSWORD };
      expectError(
        await postService(t, isp.token, subscriberId, { ...base, plan_id: inactive.id }),
        422,
        'validation_failed',
        'plan_id',
      );
      const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const theirs = await createPlan(t, other.token);
      expectError(
        await postService(t, isp.token, subscriberId, { ...base, plan_id: theirs.id }),
        422,
        'invalid_reference',
        'plan_id',
      );
      expectSuccess(await patchPlan(inactive.id, { active: true }));
      expectSuccess(await postService(t, isp.token, subscriberId, { ...base, plan_id: inactive.id }), 202);
    });

    it('should answer 404 for an unknown subscriber', async () => {
      expectNotFound(
        await postService(t, isp.token, 'sub_unknown', {
          plan_id: plan.id,
          pppoe_username: uniquePppoeUsername(),
          pppoe_password: DEFAULT_PPPOE_PASSWORD,
        }),
      );
    });

    it.each(['cancelled', 'archived'] as const)(
      'should refuse a %s subscriber with 409 subscriber_not_serviceable',
      async (status) => {
        const subscriber = await createSubscriberInState(t, isp.token, status);
        const username = uniquePppoeUsername();
        expectError(
          await postService(t, isp.token, subscriber.id, {
            plan_id: plan.id,
            pppoe_username: username,
            pppoe_password: DEFAULT_PPPOE_PASSWORD,
          }),
          409,
          'subscriber_not_serviceable',
          'subscriber_id',
        );
        const listed = await api('get', `subscribers/${subscriber.id}/services`);
        expectList(listed);
        expect(listed.body.data).toEqual([]);
      },
    );

    it.each(['prospect', 'pending', 'active', 'suspended'] as const)(
      'should order a service for a %s subscriber',
      async (status) => {
        const subscriber = await createSubscriberInState(t, isp.token, status);
        const { service } = await createService(t, isp.token, subscriber.id, { plan_id: plan.id });
        expect(service.subscriber_id).toBe(subscriber.id);
      },
    );
  });

  describe('uniqueness of the username and the static address', () => {
    it('should refuse a username a live service holds, on any subscriber of the tenant, but not in another tenant', async () => {
      const username = uniquePppoeUsername();
      const holder = await activeService(subscriberId, { plan_id: plan.id, pppoe_username: username });
      const neighbour = await createSubscriber(t, isp.token);
      for (const [subscriber, sent] of [
        [subscriberId, username],
        [neighbour.id, username],
        [neighbour.id, `  ${username} `],
      ]) {
        expectError(
          await postService(t, isp.token, subscriber, {
            plan_id: plan.id,
            pppoe_username: sent,
            pppoe_password: DEFAULT_PPPOE_PASSWORD,
          }),
          409,
          'duplicate_service_username',
          'pppoe_username',
        );
      }
      const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const theirSubscriber = await createSubscriber(t, other.token);
      const { service: theirs } = await createService(t, other.token, theirSubscriber.id, {
        pppoe_username: username,
      });
      expect(theirs.radius_username).toBe(`${other.slug}/${username}`);
      expect(holder.radius_username).toBe(`${isp.slug}/${username}`);

      // Freed only once the holder's terminate order has completed.
      const held = holdApply(username);
      const res = await postAction(t, isp.token, holder.id, { action: 'terminate' });
      expectSuccess(res, 202);
      try {
        await held.started;
        expectError(
          await postService(t, isp.token, neighbour.id, {
            plan_id: plan.id,
            pppoe_username: username,
            pppoe_password: DEFAULT_PPPOE_PASSWORD,
          }),
          409,
          'duplicate_service_username',
          'pppoe_username',
        );
      } finally {
        held.release();
      }
      await completed(res.body.data.id as string);
      const { service: successor, order } = await createService(t, isp.token, neighbour.id, {
        plan_id: plan.id,
        pppoe_username: username,
      });
      await completed(order.id);
      expect(successor.pppoe_username).toBe(username);
      const listed = await api('get', `services?pppoe_username=${username}`);
      expect((listed.body.data as Service[]).map((row) => [row.id, row.status])).toEqual([
        [successor.id, 'active'],
        [holder.id, 'terminated'],
      ]);
    });

    it('should refuse a static address a live service holds, on any subscriber of the tenant, but not in another tenant', async () => {
      const ip = nextIp();
      const holder = await activeService(subscriberId, { plan_id: plan.id, static_ipv4: ip });
      const neighbour = await createSubscriber(t, isp.token);
      for (const [subscriber, sent] of [
        [subscriberId, ip],
        [neighbour.id, ip],
        [neighbour.id, ` ${ip} `],
      ]) {
        expectError(
          await postService(t, isp.token, subscriber, {
            plan_id: plan.id,
            pppoe_username: uniquePppoeUsername(),
            pppoe_password: DEFAULT_PPPOE_PASSWORD,
            static_ipv4: sent,
          }),
          409,
          'duplicate_ip_address',
          'static_ipv4',
        );
      }
      // A PATCH of another service to that address is refused the same way.
      const other = await createService(t, isp.token, neighbour.id, { plan_id: plan.id });
      await completed(other.order.id);
      expectError(
        await patchService(other.service.id, { static_ipv4: ip }),
        409,
        'duplicate_ip_address',
        'static_ipv4',
      );

      const elsewhere = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const theirSubscriber = await createSubscriber(t, elsewhere.token);
      const { service: theirs } = await createService(t, elsewhere.token, theirSubscriber.id, {
        static_ipv4: ip,
      });
      expect(theirs.static_ipv4).toBe(ip);

      await terminate(holder.id);
      const { service: successor } = await createService(t, isp.token, neighbour.id, {
        plan_id: plan.id,
        static_ipv4: ip,
      });
      expect(successor.static_ipv4).toBe(ip);
    });

    it('should give exactly one of 50 parallel creates of one username a 202 and the others 409', async () => {
      const username = uniquePppoeUsername('race');
      const subscribers = [subscriberId, (await createSubscriber(t, isp.token)).id];
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          postService(t, isp.token, subscribers[index % 2], {
            plan_id: plan.id,
            pppoe_username: username,
            pppoe_password: DEFAULT_PPPOE_PASSWORD,
          }),
        ),
      );
      const statuses = answers.map((res) => res.status);
      expect(statuses.filter((status) => status === 202)).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(49);
      for (const res of answers.filter((answer) => answer.status === 409)) {
        expectError(res, 409, 'duplicate_service_username', 'pppoe_username');
      }
      const winner = answers.find((res) => res.status === 202)?.body.data as {
        service: Service;
        order: Order;
      };
      const listed = await api('get', `services?pppoe_username=${username}`);
      expect((listed.body.data as Service[]).map((row) => row.id)).toEqual([winner.service.id]);
      expect(await orderActions(winner.service.id)).toEqual(['activate']);
      const created = await listEvents(t, isp.token, {
        subject_id: winner.service.id,
        type: 'service.created',
      });
      expect(created).toHaveLength(1);
      await completed(winner.order.id);
    });
  });

  describe('GET /api/v1/services and /subscribers/{id}/services', () => {
    let shop: TenantWithToken;
    let alice: string;
    let bob: string;
    let fibre: ServicePlan;
    let copper: ServicePlan;
    const s: Record<'a1' | 'a2' | 'b1' | 'b2', Service> = {} as never;

    beforeAll(async () => {
      shop = await createTenantWithToken(t, PROVISIONING_SCOPES);
      alice = (await createSubscriber(t, shop.token)).id;
      bob = (await createSubscriber(t, shop.token)).id;
      fibre = await createPlan(t, shop.token);
      copper = await createPlan(t, shop.token);
      s.a1 = await activeService(alice, { plan_id: fibre.id }, shop.token);
      s.a2 = await activeService(alice, { plan_id: copper.id }, shop.token);
      s.b1 = await activeService(bob, { plan_id: fibre.id }, shop.token);
      s.b2 = await activeService(bob, { plan_id: copper.id }, shop.token);
      const suspended = await postAction(t, shop.token, s.b1.id, { action: 'suspend' });
      await completed(suspended.body.data.id as string, shop.token);
      await terminate(s.b2.id, shop.token);
    });

    const ids = async (path: string) => {
      const res = await api('get', path, shop.token);
      expectList(res);
      return (res.body.data as Service[]).map((row) => row.id);
    };

    it('should list the tenant’s services newest first, each in full', async () => {
      const res = await api('get', 'services', shop.token);
      expectList(res);
      const rows = res.body.data as Service[];
      expect(rows.map((row) => row.id)).toEqual([s.b2.id, s.b1.id, s.a2.id, s.a1.id]);
      for (const row of rows) {
        expect(Object.keys(row).sort()).toEqual(SERVICE_KEYS);
      }
      expect(rows.map((row) => row.status)).toEqual(['terminated', 'suspended', 'active', 'active']);
      expect(rows[0].terminated_at).toMatch(ISO_MS);
      expect(rows[0]).toEqual(await getService(t, shop.token, s.b2.id));
    });

    it.each([
      ['subscriber_id', () => `subscriber_id=${alice}`, () => [s.a2.id, s.a1.id]],
      ['status active', () => 'status=active', () => [s.a2.id, s.a1.id]],
      ['status suspended', () => 'status=suspended', () => [s.b1.id]],
      ['status terminated', () => 'status=terminated', () => [s.b2.id]],
      ['status pending', () => 'status=pending', () => []],
      ['plan_id', () => `plan_id=${fibre.id}`, () => [s.b1.id, s.a1.id]],
      ['pppoe_username', () => `pppoe_username=${s.a2.pppoe_username}`, () => [s.a2.id]],
      ['an unknown pppoe_username', () => 'pppoe_username=nobody.here', () => []],
      ['subscriber_id and plan_id', () => `subscriber_id=${bob}&plan_id=${copper.id}`, () => [s.b2.id]],
      ['subscriber_id and status', () => `subscriber_id=${bob}&status=active`, () => []],
      ['an unknown subscriber_id', () => 'subscriber_id=sub_unknown', () => []],
    ])('should filter on %s', async (_case, query, expected) => {
      expect(await ids(`services?${query()}`)).toEqual(expected());
    });

    it('should list a subscriber’s services with the same filters, and 404 for an unknown subscriber', async () => {
      expect(await ids(`subscribers/${alice}/services`)).toEqual([s.a2.id, s.a1.id]);
      expect(await ids(`subscribers/${bob}/services`)).toEqual([s.b2.id, s.b1.id]);
      expect(await ids(`subscribers/${bob}/services?status=suspended`)).toEqual([s.b1.id]);
      expect(await ids(`subscribers/${bob}/services?plan_id=${fibre.id}`)).toEqual([s.b1.id]);
      expect(await ids(`subscribers/${alice}/services?pppoe_username=${s.b1.pppoe_username}`)).toEqual([]);
      expectNotFound(await api('get', 'subscribers/sub_unknown/services', shop.token));
    });

    it('should page through the list', async () => {
      const first = await api('get', 'services?limit=3', shop.token);
      expectList(first);
      expect(first.body.meta.pagination).toMatchObject({ limit: 3, has_more: true });
      const rest = await api(
        'get',
        `services?limit=3&starting_after=${encodeURIComponent(first.body.meta.pagination.next_cursor as string)}`,
        shop.token,
      );
      expectList(rest);
      expect([...first.body.data, ...rest.body.data].map((row: Service) => row.id)).toEqual([
        s.b2.id,
        s.b1.id,
        s.a2.id,
        s.a1.id,
      ]);
      expect(rest.body.meta.pagination.has_more).toBe(false);
    });

    it.each([
      ['an unknown status', 'status=frozen', 'status'],
      ['an unknown parameter', 'colour=red', 'colour'],
      ['a limit of 0', 'limit=0', 'limit'],
    ])('should refuse %s with 400 invalid_query', async (_case, query, field) => {
      expectError(await api('get', `services?${query}`, shop.token), 400, 'invalid_query', field);
      expectError(
        await api('get', `subscribers/${alice}/services?${query}`, shop.token),
        400,
        'invalid_query',
        field,
      );
    });

    it('should answer 404 for an unknown service', async () => {
      expectNotFound(await api('get', 'services/svc_unknown', shop.token));
    });
  });

  describe('PATCH /api/v1/services/{id}', () => {
    it('should save cpe_mac and installation_address without opening an order', async () => {
      const service = await activeService(subscriberId, { plan_id: plan.id });
      const res = await patchService(service.id, { cpe_mac: 'AABB.CC00.99FF' });
      expectSuccess(res);
      expect(res.body.data).toEqual({
        ...service,
        cpe_mac: 'aa:bb:cc:00:99:ff',
        updated_at: expect.any(String),
      });
      const address = await patchService(service.id, { installation_address: '3 Copper Road' });
      expectSuccess(address);
      expect(address.body.data.installation_address).toBe('3 Copper Road');
      const cleared = await patchService(service.id, { cpe_mac: null, installation_address: null });
      expectSuccess(cleared);
      expect(cleared.body.data).toMatchObject({ cpe_mac: null, installation_address: null });
      expect(await orderActions(service.id)).toEqual(['activate']);
      const updates = await listEvents(t, isp.token, { subject_id: service.id, type: 'service.updated' });
      expect(updates.map((event) => event.data.changed_fields)).toEqual([
        ['cpe_mac', 'installation_address'],
        ['installation_address'],
        ['cpe_mac'],
      ]);
      // The same values again change nothing: no event, no order.
      expectSuccess(await patchService(service.id, { cpe_mac: null }));
      expect(
        await listEvents(t, isp.token, { subject_id: service.id, type: 'service.updated' }),
      ).toHaveLength(3);
    });

    it('should open a modify order naming the password, and carry the new one to RADIUS', async () => {
      const service = await activeService(subscriberId, { plan_id: plan.id });
      const password = uniquePassword();
      const res = await patchService(service.id, { pppoe_password: password, cpe_mac: '001122334455' });
      expectSuccess(res);
      expect(res.text).not.toContain(password);
      expect(res.body.data).toMatchObject({ status: 'active', cpe_mac: '00:11:22:33:44:55' });
      const orders = await api('get', `provisioning-orders?service_id=${service.id}&action=modify`);
      const [modify] = orders.body.data as Order[];
      expect(modify).toMatchObject({ action: 'modify', changes: ['pppoe_password'], plan_id: plan.id });
      await completed(modify.id);
      expect((await radiusRows(t, service.radius_username)).check).toEqual([
        { attribute: 'Cleartext-Password', op: ':=', value: password },
      ]);
      expect((await getService(t, isp.token, service.id)).status).toBe('active');
    });

    it('should open a modify order for static_ipv4, set and cleared, and for both fields at once', async () => {
      const service = await activeService(subscriberId, { plan_id: plan.id });
      const ip = nextIp();
      const changes: string[][] = [];
      for (const body of [
        { static_ipv4: ip },
        { static_ipv4: null },
        { static_ipv4: nextIp(), pppoe_password: uniquePassword() },
      ]) {
        const res = await patchService(service.id, body);
        expectSuccess(res);
        expect(res.body.data.static_ipv4).toBe(body.static_ipv4);
        const [latest] = (await api('get', `provisioning-orders?service_id=${service.id}`)).body
          .data as Order[];
        expect(latest.action).toBe('modify');
        changes.push(latest.changes as string[]);
        const done = await completed(latest.id);
        if (body.static_ipv4 === ip) {
          expect(done.status).toBe('completed');
          expect((await radiusRows(t, service.radius_username)).reply).toContainEqual({
            attribute: 'Framed-IP-Address',
            op: ':=',
            value: ip,
          });
        }
      }
      expect(changes).toEqual([['static_ipv4'], ['static_ipv4'], ['pppoe_password', 'static_ipv4']]);
      expect(await orderActions(service.id)).toEqual(['activate', 'modify', 'modify', 'modify']);
    });

    it('should refuse a network change with 409 order_in_progress while an order is open, but save cpe_mac', async () => {
      const username = uniquePppoeUsername();
      const held = holdApply(username);
      const { service, order } = await createService(t, isp.token, subscriberId, {
        plan_id: plan.id,
        pppoe_username: username,
      });
      try {
        await held.started;
        for (const body of [
          { pppoe_password: uniquePassword() },
          { static_ipv4: nextIp(), cpe_mac: 'aa:bb:cc:dd:ee:02' },
        ]) {
          expectError(await patchService(service.id, body), 409, 'order_in_progress', 'service_id');
        }
        const mac = await patchService(service.id, { cpe_mac: 'aa:bb:cc:dd:ee:03' });
        expectSuccess(mac);
        expect(mac.body.data).toMatchObject({
          status: 'pending',
          cpe_mac: 'aa:bb:cc:dd:ee:03',
          static_ipv4: null,
        });
      } finally {
        held.release();
      }
      await completed(order.id);
      expect(await orderActions(service.id)).toEqual(['activate']);
      const updates = await listEvents(t, isp.token, { subject_id: service.id, type: 'service.updated' });
      expect(updates.map((event) => event.data.changed_fields)).toEqual([['cpe_mac']]);
    });

    it('should refuse a terminated service with 409 invalid_state_transition', async () => {
      const service = await activeService(subscriberId, { plan_id: plan.id });
      await terminate(service.id);
      for (const body of [{ cpe_mac: 'aa:bb:cc:dd:ee:01' }, { pppoe_password: uniquePassword() }]) {
        expectError(await patchService(service.id, body), 409, 'invalid_state_transition', 'status');
      }
      expect(await orderActions(service.id)).toEqual(['activate', 'terminate']);
    });

    it.each([
      ['a short pppoe_password', { pppoe_password: 'short' }, 422, 'validation_failed', 'pppoe_password'],
      ['a null pppoe_password', { pppoe_password: null }, 422, 'validation_failed', 'pppoe_password'],
      ['a loopback static_ipv4', { static_ipv4: '127.0.0.1' }, 422, 'validation_failed', 'static_ipv4'],
      ['a malformed cpe_mac', { cpe_mac: 'aa:bb' }, 422, 'validation_failed', 'cpe_mac'],
      [
        'an installation_address of 501',
        { installation_address: 'x'.repeat(501) },
        422,
        'validation_failed',
        'installation_address',
      ],
      ['a pppoe_username', { pppoe_username: 'renamed' }, 400, 'unknown_field', 'pppoe_username'],
      ['a plan_id', { plan_id: 'plan_x' }, 400, 'unknown_field', 'plan_id'],
      ['a status', { status: 'active' }, 400, 'unknown_field', 'status'],
    ])('should refuse %s', async (_case, body, status, code, field) => {
      const { service } = await createService(t, isp.token, subscriberId, { plan_id: plan.id });
      expectError(await patchService(service.id, body), status, code, field);
    });

    it('should answer 404 for an unknown service', async () => {
      expectNotFound(await patchService('svc_unknown', { cpe_mac: 'aa:bb:cc:dd:ee:ff' }));
    });
  });

  describe('tenant isolation', () => {
    it("should answer 404 for another tenant's plan, service and order on every route, and refuse its plan", async () => {
      const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const theirPlan = await createPlan(t, other.token);
      const theirSubscriber = await createSubscriber(t, other.token);
      const theirs = await createService(t, other.token, theirSubscriber.id, { plan_id: theirPlan.id });
      await completed(theirs.order.id, other.token);
      const mine = await activeService(subscriberId, { plan_id: plan.id });

      expectNotFound(await api('get', `service-plans/${theirPlan.id}`));
      expectNotFound(await patchPlan(theirPlan.id, { name: 'Taken over' }));
      expectNotFound(await api('get', `services/${theirs.service.id}`));
      expectNotFound(await patchService(theirs.service.id, { cpe_mac: 'aa:bb:cc:dd:ee:ff' }));
      expectNotFound(await postAction(t, isp.token, theirs.service.id, { action: 'suspend' }));
      expectNotFound(await api('get', `provisioning-orders/${theirs.order.id}`));
      expectNotFound(await api('post', `provisioning-orders/${theirs.order.id}/cancel`));
      expectNotFound(await api('get', `subscribers/${theirSubscriber.id}/services`));
      expectNotFound(
        await postService(t, isp.token, theirSubscriber.id, {
          plan_id: plan.id,
          pppoe_username: uniquePppoeUsername(),
          pppoe_password: DEFAULT_PPPOE_PASSWORD,
        }),
      );
      expectError(
        await postAction(t, isp.token, mine.id, { action: 'change_plan', plan_id: theirPlan.id }),
        422,
        'invalid_reference',
        'plan_id',
      );

      const listed = async (path: string) => {
        const res = await api('get', path);
        expectList(res);
        return (res.body.data as { id: string }[]).map((row) => row.id);
      };
      expect(await listed('service-plans?limit=100')).not.toContain(theirPlan.id);
      expect(await listed(`services?subscriber_id=${theirSubscriber.id}`)).toEqual([]);
      expect(await listed(`services?plan_id=${theirPlan.id}`)).toEqual([]);
      expect(await listed(`services?pppoe_username=${theirs.service.pppoe_username}`)).toEqual([]);
      expect(await listed(`provisioning-orders?service_id=${theirs.service.id}`)).toEqual([]);

      const untouched = await getService(t, other.token, theirs.service.id);
      expect(untouched).toMatchObject({ status: 'active', cpe_mac: null });
      expect((await api('get', `service-plans/${theirPlan.id}`, other.token)).body.data.name).toBe(
        theirPlan.name,
      );
      const orders = await api('get', `provisioning-orders?service_id=${theirs.service.id}`, other.token);
      expect((orders.body.data as Order[]).map((order) => order.action)).toEqual(['activate']);
    });
  });

  describe('scopes', () => {
    it('should refuse writes without provisioning:write and reads without provisioning:read', async () => {
      const { service, order } = await createService(t, isp.token, subscriberId, { plan_id: plan.id });
      await completed(order.id);
      const reader = await issueToken(t, isp.slug, ['provisioning:read']);
      const writer = await issueToken(t, isp.slug, ['provisioning:write']);
      const none = await issueToken(t, isp.slug, ['subscribers:read', 'subscribers:write']);
      const as = (token: string, method: 'get' | 'post' | 'patch', path: string, body?: object) =>
        request(t.http)[method](`/api/v1/${path}`).set(bearer(token)).send(body);
      const writes = [
        [
          'post',
          'service-plans',
          { name: uniquePlanName(), download_kbps: 1, upload_kbps: 1, price: 0, currency: 'USD' },
        ],
        ['patch', `service-plans/${plan.id}`, { name: uniquePlanName() }],
        [
          'post',
          `subscribers/${subscriberId}/services`,
          { plan_id: plan.id, pppoe_username: uniquePppoeUsername(), pppoe_password: DEFAULT_PPPOE_PASSWORD },
        ],
        ['patch', `services/${service.id}`, { cpe_mac: 'aa:bb:cc:dd:ee:ff' }],
        ['post', `services/${service.id}/actions`, { action: 'suspend' }],
        ['post', `provisioning-orders/${order.id}/cancel`, {}],
      ] as const;
      const reads = [
        'service-plans',
        `service-plans/${plan.id}`,
        'services',
        `services/${service.id}`,
        `subscribers/${subscriberId}/services`,
        'provisioning-orders',
        `provisioning-orders/${order.id}`,
      ];
      for (const [method, path, body] of writes) {
        expectError(await as(reader.token, method, path, body), 403, 'insufficient_scope');
        expectError(await as(none.token, method, path, body), 403, 'insufficient_scope');
      }
      for (const path of reads) {
        expectError(await as(writer.token, 'get', path), 403, 'insufficient_scope');
        expectError(await as(none.token, 'get', path), 403, 'insufficient_scope');
        const read = await as(reader.token, 'get', path);
        // The list routes end in a plural; an id ends in an upper-case letter or a digit.
        if (path.endsWith('s')) {
          expectList(read);
        } else {
          expectSuccess(read);
        }
      }
      expect((await getService(t, isp.token, service.id)).cpe_mac).toBeNull();
      expect(await orderActions(service.id)).toEqual(['activate']);
      const [method, path, body] = writes[2];
      expectSuccess(await as(writer.token, method, path, body), 202);
      expectSuccess(
        await as(writer.token, 'patch', `services/${service.id}`, { cpe_mac: 'aa:bb:cc:dd:ee:ff' }),
      );
    });
  });

  describe('the PPPoE password is write-only', () => {
    it('should never answer the password, on any call, nor write it into any event of the tenant', async () => {
      const quiet = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const first = uniquePassword();
      const second = uniquePassword();
      const secrets = [first, second];
      const bodies: string[] = [];
      const seen = (res: Response) => {
        bodies.push(res.text);
        return res;
      };
      const call = (method: 'get' | 'post' | 'patch', path: string, body?: object) =>
        request(t.http)[method](`/api/v1/${path}`).set(bearer(quiet.token)).send(body);

      const subscriber = await createSubscriber(t, quiet.token);
      const quietPlan = await createPlan(t, quiet.token);
      const other = await createPlan(t, quiet.token);
      const username = uniquePppoeUsername();
      const created = seen(
        await postService(t, quiet.token, subscriber.id, {
          plan_id: quietPlan.id,
          pppoe_username: username,
          pppoe_password: first,
          static_ipv4: '203.0.113.10',
        }),
      );
      expectSuccess(created, 202);
      const { service, order } = created.body.data as { service: Service; order: Order };
      await completed(order.id, quiet.token);
      // Refusals that carry the password back must not echo it either.
      expectError(
        seen(
          await postService(t, quiet.token, subscriber.id, {
            plan_id: quietPlan.id,
            pppoe_username: username,
            pppoe_password: first,
          }),
        ),
        409,
        'duplicate_service_username',
        'pppoe_username',
      );
      expectError(
        seen(
          await postService(t, quiet.token, subscriber.id, {
            plan_id: quietPlan.id,
            pppoe_username: uniquePppoeUsername(),
            pppoe_password: `${first}é`,
          }),
        ),
        422,
        'validation_failed',
        'pppoe_password',
      );
      expectError(
        seen(await call('patch', `services/${service.id}`, { pppoe_password: `${second}\u0001` })),
        422,
        'validation_failed',
        'pppoe_password',
      );
      const patched = seen(await call('patch', `services/${service.id}`, { pppoe_password: second }));
      expectSuccess(patched);
      const [modify] = (await call('get', `provisioning-orders?service_id=${service.id}`)).body
        .data as Order[];
      seen(await call('get', `provisioning-orders/${modify.id}`));
      await completed(modify.id, quiet.token);
      const changed = seen(
        await postAction(t, quiet.token, service.id, { action: 'change_plan', plan_id: other.id }),
      );
      expectSuccess(changed, 202);
      await completed(changed.body.data.id as string, quiet.token);
      const suspended = seen(await postAction(t, quiet.token, service.id, { action: 'suspend' }));
      await completed(suspended.body.data.id as string, quiet.token);
      for (const path of [
        `services/${service.id}`,
        'services',
        `services?pppoe_username=${username}`,
        `subscribers/${subscriber.id}/services`,
        'provisioning-orders',
        `provisioning-orders/${order.id}`,
      ]) {
        const res = seen(await call('get', path));
        expect(res.status).toBe(200);
      }
      const terminated = seen(await postAction(t, quiet.token, service.id, { action: 'terminate' }));
      await completed(terminated.body.data.id as string, quiet.token);
      seen(await call('get', `services/${service.id}`));

      expect(bodies.length).toBeGreaterThan(15);
      for (const body of bodies) {
        for (const secret of secrets) {
          expect(body).not.toContain(secret);
        }
      }

      const { events, raw } = await allEvents(quiet.token);
      const types = new Set(events.map((event) => event.type));
      for (const type of [
        'service.created',
        'service.updated',
        'service.activated',
        'service.plan_changed',
        'service.suspended',
        'service.terminated',
        'provisioning_order.created',
        'provisioning_order.completed',
      ]) {
        expect(types).toContain(type);
      }
      const updated = events.find((event) => event.type === 'service.updated');
      expect(updated?.data.changed_fields).toEqual(['pppoe_password']);
      for (const page of raw) {
        for (const secret of secrets) {
          expect(page).not.toContain(secret);
        }
      }
      // The password was kept: the network saw the second one while the service was live.
      expect(
        await t.dataSource.query('SELECT 1 FROM services WHERE id = $1 AND pppoe_password = $2', [
          service.id,
          second,
        ]),
      ).toHaveLength(1);
    });

    it('should keep the default password of every service of this suite out of the main tenant’s events', async () => {
      const { events, raw } = await allEvents(isp.token);
      expect(events.filter((event) => event.type === 'service.created').length).toBeGreaterThan(20);
      for (const page of raw) {
        expect(page).not.toContain(DEFAULT_PPPOE_PASSWORD);
      }
    });
  });
});
