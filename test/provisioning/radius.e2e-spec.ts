import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import {
  DriverError,
  NETWORK_DRIVER,
  type NetworkDriver,
  OrderAction,
  ProvisioningOrder,
  Service as ServiceEntity,
  ServicePlan as ServicePlanEntity,
  ServiceStatus,
} from '../../src/provisioning';
import { RadiusRepository } from '../../src/provisioning/radius.repository';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createPlan,
  createService,
  expectedRows,
  fail,
  getService,
  type Order,
  postAction,
  PROVISIONING_SCOPES,
  radiusRows,
  type RadiusRows,
  rowsOf,
  scriptDriver,
  type Service,
  type ServicePlan,
  uniquePppoeUsername,
  waitForOrder,
  listOrders,
} from '../support/provisioning-factory';
import { createSubscriber, listen } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { FAST_WORKER } from '../support/network-factory';

const SEED = 20_261_216;
const RUNS = 25;

type Status = 'pending' | 'active' | 'suspended' | 'terminated';

const NO_ROWS: RadiusRows = { check: [], reply: [], groups: [] };

const uniquePassword = (label = 'pw') => `${label}-${randomBytes(6).toString('hex')}`;

const patchService = (t: TestApp, token: string, serviceId: string, body: Record<string, unknown>) =>
  request(t.http).patch(`/api/v1/services/${serviceId}`).set(bearer(token)).send(body);

/** Issue #16: the FreeRADIUS tables the radius-sql driver keeps for each service. */
describe('Provisioning: RADIUS rows (radius-sql)', () => {
  let t: TestApp;
  let driver: ReturnType<typeof scriptDriver>;
  let isp: TenantWithToken;
  let subscriberId: string;
  let basic: ServicePlan;
  let fast: ServicePlan;
  let nextIp = 1;

  beforeAll(async () => {
    t = await startTestApp(FAST_WORKER);
    await listen(t);
    driver = scriptDriver(t);
    isp = await createTenantWithToken(t, PROVISIONING_SCOPES);
    subscriberId = (await createSubscriber(t, isp.token, { status: 'active' })).id;
    basic = await createPlan(t, isp.token, { download_kbps: 50_000, upload_kbps: 10_000 });
    fast = await createPlan(t, isp.token, { download_kbps: 300_000, upload_kbps: 75_000 });
  });

  afterAll(async () => {
    driver.restore();
    await t.close();
  });

  /** A static address no other service of the tenant has. */
  const freshIp = () => `198.51.100.${nextIp++}`;

  /** Waits for the order to end and requires it completed. */
  async function completes(token: string, orderId: string): Promise<Order> {
    const order = await waitForOrder(t, token, orderId, ['completed', 'failed', 'cancelled']);
    expect(order).toMatchObject({ status: 'completed', last_error: null });
    return order;
  }

  async function act(serviceId: string, body: Record<string, unknown>, token = isp.token): Promise<Service> {
    const res = await postAction(t, token, serviceId, body);
    expectSuccess(res, 202);
    await completes(token, res.body.data.id);
    return getService(t, token, serviceId);
  }

  /** PATCHes the service and waits for the modify order it opens. */
  async function modify(serviceId: string, body: Record<string, unknown>): Promise<Service> {
    const res = await patchService(t, isp.token, serviceId, body);
    expectSuccess(res);
    const [order] = await listOrders(t, isp.token, { service_id: serviceId });
    expect(order.action).toBe('modify');
    await completes(isp.token, order.id);
    return getService(t, isp.token, serviceId);
  }

  /** An active service on `plan` with a known password. */
  async function activeService(plan: ServicePlan, overrides: Record<string, unknown> = {}) {
    const password = uniquePassword();
    const { service, order } = await createService(t, isp.token, subscriberId, {
      plan_id: plan.id,
      pppoe_password: password,
      ...overrides,
    });
    await completes(isp.token, order.id);
    return { service: await getService(t, isp.token, service.id), password };
  }

  describe('one row set per service state', () => {
    it('should give an activated service its password, its plan’s rate and its static address, and no group', async () => {
      const pppoe = uniquePppoeUsername();
      const ip = freshIp();
      const { service, password } = await activeService(basic, { pppoe_username: pppoe, static_ipv4: ip });
      expect(service).toMatchObject({ status: 'active', radius_username: `${isp.slug}/${pppoe}` });
      expect(await rowsOf(t, service.radius_username)).toEqual({
        check: [{ attribute: 'Cleartext-Password', op: ':=', value: password }],
        reply: [
          { attribute: 'Framed-IP-Address', op: ':=', value: ip },
          { attribute: 'Mikrotik-Rate-Limit', op: ':=', value: '10000k/50000k' },
          { attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: '50000000' },
          { attribute: 'WISPr-Bandwidth-Max-Up', op: ':=', value: '10000000' },
        ],
        groups: [],
      });
    });

    it('should write no Framed-IP-Address for a service without a static address', async () => {
      const { service, password } = await activeService(fast);
      expect(await rowsOf(t, service.radius_username)).toEqual({
        check: [{ attribute: 'Cleartext-Password', op: ':=', value: password }],
        reply: [
          { attribute: 'Mikrotik-Rate-Limit', op: ':=', value: '75000k/300000k' },
          { attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: '300000000' },
          { attribute: 'WISPr-Bandwidth-Max-Up', op: ':=', value: '75000000' },
        ],
        groups: [],
      });
    });

    it("should keep only the password of a suspended service and put it in its tenant's suspended group, which rejects", async () => {
      const { service, password } = await activeService(basic, { static_ipv4: freshIp() });
      expect((await act(service.id, { action: 'suspend', reason: 'non_payment' })).status).toBe('suspended');
      const group = `suspended:${isp.slug}`;
      expect(await rowsOf(t, service.radius_username)).toEqual({
        check: [{ attribute: 'Cleartext-Password', op: ':=', value: password }],
        reply: [],
        groups: [{ groupname: group, priority: 0 }],
      });
      expect(
        await t.dataSource.query(`SELECT attribute, op, value FROM radgroupcheck WHERE groupname = $1`, [
          group,
        ]),
      ).toEqual([{ attribute: 'Auth-Type', op: ':=', value: 'Reject' }]);
      expect(
        await t.dataSource.query(`SELECT attribute, op, value FROM radgroupreply WHERE groupname = $1`, [
          group,
        ]),
      ).toEqual([{ attribute: 'Reply-Message', op: ':=', value: 'Service suspended' }]);
    });

    it('should give a resumed service its rate and address back and take it out of the group', async () => {
      const ip = freshIp();
      const { service, password } = await activeService(basic, { static_ipv4: ip });
      await act(service.id, { action: 'suspend' });
      expect((await act(service.id, { action: 'resume' })).status).toBe('active');
      expect(await rowsOf(t, service.radius_username)).toEqual(expectedRows('active', password, basic, ip));
    });

    it('should write the new plan’s rate once an active service’s change_plan completes', async () => {
      const ip = freshIp();
      const { service, password } = await activeService(basic, { static_ipv4: ip });
      const changed = await act(service.id, { action: 'change_plan', plan_id: fast.id });
      expect(changed).toMatchObject({ status: 'active', plan_id: fast.id });
      expect(await rowsOf(t, service.radius_username)).toEqual({
        check: [{ attribute: 'Cleartext-Password', op: ':=', value: password }],
        reply: [
          { attribute: 'Framed-IP-Address', op: ':=', value: ip },
          { attribute: 'Mikrotik-Rate-Limit', op: ':=', value: '75000k/300000k' },
          { attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: '300000000' },
          { attribute: 'WISPr-Bandwidth-Max-Up', op: ':=', value: '75000000' },
        ],
        groups: [],
      });
    });

    it('should keep a suspended service suspended through change_plan, and give it the new rate on resume', async () => {
      const { service, password } = await activeService(basic);
      await act(service.id, { action: 'suspend' });
      const changed = await act(service.id, { action: 'change_plan', plan_id: fast.id });
      expect(changed).toMatchObject({ status: 'suspended', plan_id: fast.id });
      expect(await rowsOf(t, service.radius_username)).toEqual(
        expectedRows('suspended', password, fast, null, service.radius_username),
      );
      await act(service.id, { action: 'resume' });
      expect(await rowsOf(t, service.radius_username)).toEqual(expectedRows('active', password, fast, null));
    });

    it('should rewrite the password and the address through a modify order, and drop the address when cleared', async () => {
      const { service } = await activeService(basic, { static_ipv4: freshIp() });
      const password = uniquePassword('changed');
      const ip = freshIp();
      const modified = await modify(service.id, { pppoe_password: password, static_ipv4: ip });
      expect(modified.static_ipv4).toBe(ip);
      const [order] = await listOrders(t, isp.token, { service_id: service.id });
      expect(order.changes).toEqual(['pppoe_password', 'static_ipv4']);
      expect(await rowsOf(t, service.radius_username)).toEqual(expectedRows('active', password, basic, ip));

      expect((await modify(service.id, { static_ipv4: null })).static_ipv4).toBeNull();
      expect(await rowsOf(t, service.radius_username)).toEqual(expectedRows('active', password, basic, null));
    });

    it('should change a suspended service’s password without giving it any reply rows', async () => {
      const { service } = await activeService(basic);
      await act(service.id, { action: 'suspend' });
      const password = uniquePassword('suspended');
      await modify(service.id, { pppoe_password: password, static_ipv4: freshIp() });
      expect(await rowsOf(t, service.radius_username)).toEqual(
        expectedRows('suspended', password, basic, null, service.radius_username),
      );
    });

    it.each(['active', 'suspended'] as const)(
      'should remove every row of a %s service once it is terminated',
      async (from) => {
        const { service } = await activeService(basic, { static_ipv4: freshIp() });
        if (from === 'suspended') {
          await act(service.id, { action: 'suspend' });
        }
        expect(await rowsOf(t, service.radius_username)).not.toEqual(NO_ROWS);
        expect((await act(service.id, { action: 'terminate' })).status).toBe('terminated');
        expect(await rowsOf(t, service.radius_username)).toEqual(NO_ROWS);
      },
    );

    it('should write nothing for a pending service (failed activation, change_plan, PATCH), then the current plan and password on activate', async () => {
      const pppoe = uniquePppoeUsername();
      driver.script(`${isp.slug}/${pppoe}`, fail('NAS unknown'));
      const { service, order } = await createService(t, isp.token, subscriberId, {
        plan_id: basic.id,
        pppoe_username: pppoe,
        pppoe_password: uniquePassword(),
      });
      expect((await waitForOrder(t, isp.token, order.id, ['completed', 'failed'])).status).toBe('failed');
      expect(await rowsOf(t, service.radius_username)).toEqual(NO_ROWS);

      expect((await act(service.id, { action: 'change_plan', plan_id: fast.id })).status).toBe('pending');
      const password = uniquePassword('pending');
      const ip = freshIp();
      await modify(service.id, { pppoe_password: password, static_ipv4: ip });
      expect(await rowsOf(t, service.radius_username)).toEqual(NO_ROWS);

      expect((await act(service.id, { action: 'activate' })).status).toBe('active');
      expect(await rowsOf(t, service.radius_username)).toEqual(expectedRows('active', password, fast, ip));
    });
  });

  describe('tenants', () => {
    it('should give two tenants’ services of one pppoe_username different radius usernames and separate rows', async () => {
      const pppoe = uniquePppoeUsername('shared');
      const tenants = [isp, await createTenantWithToken(t, PROVISIONING_SCOPES)];
      const lines = await Promise.all(
        tenants.map(async (tenant, index) => {
          const subscriber = await createSubscriber(t, tenant.token, { status: 'active' });
          const plan =
            index === 0
              ? basic
              : await createPlan(t, tenant.token, { download_kbps: 20_000, upload_kbps: 5_000 });
          const password = uniquePassword(`tenant${index}`);
          const { service, order } = await createService(t, tenant.token, subscriber.id, {
            plan_id: plan.id,
            pppoe_username: pppoe,
            pppoe_password: password,
          });
          await completes(tenant.token, order.id);
          return { tenant, service, password, plan };
        }),
      );
      const [mine, theirs] = lines;
      expect(mine.service.radius_username).toBe(`${isp.slug}/${pppoe}`);
      expect(theirs.service.radius_username).toBe(`${theirs.tenant.slug}/${pppoe}`);
      for (const line of lines) {
        expect(await rowsOf(t, line.service.radius_username)).toEqual(
          expectedRows('active', line.password, line.plan, null),
        );
      }
      expect(await radiusRows(t, pppoe)).toEqual(NO_ROWS);

      await act(mine.service.id, { action: 'suspend' });
      expect(await rowsOf(t, mine.service.radius_username)).toEqual(
        expectedRows('suspended', mine.password, mine.plan, null, mine.service.radius_username),
      );
      expect(await rowsOf(t, theirs.service.radius_username)).toEqual(
        expectedRows('active', theirs.password, theirs.plan, null),
      );
      await act(mine.service.id, { action: 'terminate' });
      expect(await rowsOf(t, mine.service.radius_username)).toEqual(NO_ROWS);
      expect(await rowsOf(t, theirs.service.radius_username)).toEqual(
        expectedRows('active', theirs.password, theirs.plan, null),
      );
    });
  });

  describe('orders carried out side by side', () => {
    const planEntity = () =>
      Object.assign(new ServicePlanEntity(), {
        id: basic.id,
        tenantId: isp.tenantId,
        downloadKbps: 50_000,
        uploadKbps: 10_000,
      });

    /** An order and its service as the worker hands them to the driver (the service as it is once the order completes). */
    function line(status: ServiceStatus, password = uniquePassword(), staticIpv4: string | null = null) {
      const pppoe = uniquePppoeUsername('side');
      const service = Object.assign(new ServiceEntity(), {
        tenantId: isp.tenantId,
        id: `svc_${randomBytes(13).toString('hex').toUpperCase()}`,
        status,
        radiusUsername: `${isp.slug}/${pppoe}`,
        pppoePassword: password,
        staticIpv4,
      });
      const action = {
        [ServiceStatus.Active]: OrderAction.Activate,
        [ServiceStatus.Suspended]: OrderAction.Suspend,
        [ServiceStatus.Terminated]: OrderAction.Terminate,
        [ServiceStatus.Pending]: OrderAction.Modify,
      }[status];
      const order = Object.assign(new ProvisioningOrder(), {
        tenantId: isp.tenantId,
        serviceId: service.id,
        action,
      });
      return { service, order, password };
    }

    const apply = (entry: ReturnType<typeof line>) =>
      t.app.get<NetworkDriver>(NETWORK_DRIVER).apply(entry.order, entry.service, planEntity());

    it('should write the rows of orders applied together in one transaction, each as it would be alone', async () => {
      const radius = t.app.get(RadiusRepository);
      const gone = line(ServiceStatus.Active);
      await apply(gone);
      const lines = [
        line(ServiceStatus.Active, uniquePassword(), freshIp()),
        line(ServiceStatus.Active),
        line(ServiceStatus.Suspended),
        {
          ...gone,
          service: Object.assign(new ServiceEntity(), gone.service, { status: ServiceStatus.Terminated }),
        },
      ];
      const rewriteMany = jest.spyOn(radius, 'rewriteMany');
      try {
        await Promise.all(lines.map(apply));
        expect(rewriteMany).toHaveBeenCalledTimes(1);
        expect(rewriteMany.mock.calls[0][0].map((entry) => entry.username)).toEqual(
          lines.map((entry) => entry.service.radiusUsername),
        );
      } finally {
        rewriteMany.mockRestore();
      }
      for (const entry of lines) {
        expect(await rowsOf(t, entry.service.radiusUsername)).toEqual(
          expectedRows(
            entry.service.status as Status,
            entry.password,
            basic,
            entry.service.staticIpv4,
            entry.service.radiusUsername,
          ),
        );
      }
    });

    it('should leave a username given twice in one batch as its last order wrote it', async () => {
      const first = line(ServiceStatus.Active);
      const second = {
        ...first,
        service: Object.assign(new ServiceEntity(), first.service, { status: ServiceStatus.Suspended }),
      };
      await Promise.all([apply(first), apply(second)]);
      expect(await rowsOf(t, first.service.radiusUsername)).toEqual(
        expectedRows('suspended', first.password, basic, null, first.service.radiusUsername),
      );
    });

    it('should fail only the order whose row the database refuses, and write the others', async () => {
      const good = [line(ServiceStatus.Active), line(ServiceStatus.Suspended)];
      // Postgres text cannot hold a NUL: this username's INSERT fails, and with it the batch's transaction.
      const bad = line(ServiceStatus.Active, 'nul\u0000byte');
      const results = await Promise.allSettled([good[0], bad, good[1]].map(apply));
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const failure = (results[1] as PromiseRejectedResult).reason as DriverError;
      expect(failure).toBeInstanceOf(DriverError);
      expect(failure.transient).toBe(true);
      expect(await rowsOf(t, bad.service.radiusUsername)).toEqual(NO_ROWS);
      for (const entry of good) {
        expect(await rowsOf(t, entry.service.radiusUsername)).toEqual(
          expectedRows(
            entry.service.status as Status,
            entry.password,
            basic,
            null,
            entry.service.radiusUsername,
          ),
        );
      }
    });
  });

  describe('property: the rows follow the API state', () => {
    type Action = 'activate' | 'suspend' | 'resume' | 'terminate';
    type Command =
      | { op: Action; svc: number }
      | { op: 'change_plan'; svc: number; plan: number }
      | { op: 'patch'; svc: number; password: string | undefined; ip: number | null | undefined };

    const RULES: Record<Action, { from: Status[]; to: Status }> = {
      activate: { from: ['pending'], to: 'active' },
      suspend: { from: ['active'], to: 'suspended' },
      resume: { from: ['suspended'], to: 'active' },
      terminate: { from: ['pending', 'active', 'suspended'], to: 'terminated' },
    };
    const PASSWORDS = ['alpha-pass-1', 'bravo-pass-2', 'charlie-pass-3'];
    const PLAN_SPEEDS = [
      { download_kbps: 20_000, upload_kbps: 5_000 },
      { download_kbps: 100_000, upload_kbps: 20_000 },
      { download_kbps: 1_000_000, upload_kbps: 500_000 },
    ];

    const commandArb: fc.Arbitrary<Command> = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          op: fc.constantFrom<Action>('activate', 'suspend', 'resume', 'terminate'),
          svc: fc.nat(2),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({ op: fc.constant('change_plan' as const), svc: fc.nat(2), plan: fc.nat(2) }),
      },
      {
        weight: 2,
        arbitrary: fc
          .record({
            op: fc.constant('patch' as const),
            svc: fc.nat(2),
            password: fc.option(fc.constantFrom(...PASSWORDS), { nil: undefined }),
            ip: fc.oneof(fc.constant(undefined), fc.constant(null), fc.nat(3)),
          })
          .filter((command) => command.password !== undefined || command.ip !== undefined),
      },
    );
    const scenarioArb = fc.record({
      services: fc.array(
        fc.record({ pending: fc.boolean(), plan: fc.nat(2), ip: fc.option(fc.nat(3), { nil: null }) }),
        { minLength: 2, maxLength: 3 },
      ),
      commands: fc.array(commandArb, { minLength: 1, maxLength: 12 }),
    });

    interface Model {
      service: Service;
      status: Status;
      plan: number;
      password: string;
      ip: string | null;
      lastOrderId: string;
    }

    it(`should match what each service's final API state implies after random actions and PATCHes (${RUNS} runs)`, async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArb, async (scenario) => {
          const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
          const subscriber = await createSubscriber(t, tenant.token, { status: 'active' });
          const plans: ServicePlan[] = [];
          for (const speeds of PLAN_SPEEDS) {
            plans.push(await createPlan(t, tenant.token, speeds));
          }
          // Each service takes its static addresses from a /24 of its own, so they never collide.
          const address = (svc: number, n: number) => `10.77.${svc}.${n + 1}`;

          const models: Model[] = [];
          for (const [index, spec] of scenario.services.entries()) {
            const pppoe = uniquePppoeUsername('prop');
            if (spec.pending) {
              driver.script(`${tenant.slug}/${pppoe}`, fail('NAS unknown'));
            }
            const password = `initial-${index}-${randomBytes(4).toString('hex')}`;
            const ip = spec.ip === null ? null : address(index, spec.ip);
            const { service, order } = await createService(t, tenant.token, subscriber.id, {
              plan_id: plans[spec.plan].id,
              pppoe_username: pppoe,
              pppoe_password: password,
              ...(ip ? { static_ipv4: ip } : {}),
            });
            const activation = await waitForOrder(t, tenant.token, order.id, ['completed', 'failed']);
            expect(activation.status).toBe(spec.pending ? 'failed' : 'completed');
            models.push({
              service,
              status: spec.pending ? 'pending' : 'active',
              plan: spec.plan,
              password,
              ip,
              lastOrderId: order.id,
            });
          }

          const finish = async (model: Model, orderId: string) => {
            expect(orderId).not.toBe(model.lastOrderId);
            const order = await waitForOrder(t, tenant.token, orderId, ['completed', 'failed', 'cancelled']);
            expect(order.status).toBe('completed');
            model.lastOrderId = orderId;
          };

          for (const command of scenario.commands) {
            const svc = command.svc % models.length;
            const model = models[svc];
            const id = model.service.id;
            if (command.op === 'patch') {
              const body: Record<string, unknown> = {};
              const changes: string[] = [];
              if (command.password !== undefined) {
                body.pppoe_password = command.password;
                if (command.password !== model.password) {
                  changes.push('pppoe_password');
                }
              }
              const ip =
                command.ip === undefined ? undefined : command.ip === null ? null : address(svc, command.ip);
              if (ip !== undefined) {
                body.static_ipv4 = ip;
                if (ip !== model.ip) {
                  changes.push('static_ipv4');
                }
              }
              const res = await patchService(t, tenant.token, id, body);
              if (model.status === 'terminated') {
                expectError(res, 409, 'invalid_state_transition', 'status');
                continue;
              }
              expectSuccess(res);
              const [latest] = await listOrders(t, tenant.token, { service_id: id, limit: '1' });
              if (changes.length === 0) {
                expect(latest.id).toBe(model.lastOrderId);
                continue;
              }
              expect(latest).toMatchObject({ action: 'modify', changes });
              await finish(model, latest.id);
              model.password = command.password ?? model.password;
              model.ip = ip === undefined ? model.ip : ip;
              continue;
            }
            const body =
              command.op === 'change_plan'
                ? { action: command.op, plan_id: plans[command.plan].id }
                : { action: command.op };
            const res = await postAction(t, tenant.token, id, body);
            const allowed =
              command.op === 'change_plan'
                ? model.status !== 'terminated'
                : RULES[command.op].from.includes(model.status);
            if (!allowed) {
              expectError(res, 409, 'invalid_state_transition', 'action');
              continue;
            }
            if (command.op === 'change_plan' && command.plan === model.plan) {
              expectError(res, 422, 'validation_failed', 'plan_id');
              continue;
            }
            expectSuccess(res, 202);
            await finish(model, res.body.data.id);
            if (command.op === 'change_plan') {
              model.plan = command.plan;
            } else {
              model.status = RULES[command.op].to;
            }
          }

          expect(await listOrders(t, tenant.token, { status: 'acknowledged' })).toEqual([]);
          expect(await listOrders(t, tenant.token, { status: 'in_progress' })).toEqual([]);
          for (const model of models) {
            const service = await getService(t, tenant.token, model.service.id);
            expect(service).toMatchObject({
              status: model.status,
              plan_id: plans[model.plan].id,
              static_ipv4: model.ip,
            });
            const plan = plans.find((candidate) => candidate.id === service.plan_id)!;
            expect(await rowsOf(t, service.radius_username)).toEqual(
              expectedRows(
                service.status as Status,
                model.password,
                plan,
                service.static_ipv4,
                service.radius_username,
              ),
            );
          }
        }),
        { numRuns: RUNS, seed: SEED, interruptAfterTimeLimit: 100_000, markInterruptAsFailure: true },
      );
    }, 120_000);
  });
});
