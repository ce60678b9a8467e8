import { NasDevice, ProvisioningOrder, Service, ServicePlan, SessionOutcome } from '../provisioning.entity';
import type { RadiusGroup, RadiusRepository, RadiusSession, RadiusUser } from '../radius.repository';
import { CapState, OrderAction, ServiceStatus } from '../service-status';
import { DriverError } from './network-driver';
import { type DynamicAuthorization, RadiusSqlDriver, radiusUser } from './radius-sql.driver';

const PLAN = Object.assign(new ServicePlan(), { id: 'plan_1', downloadKbps: 100_000, uploadKbps: 20_000 });

const service = (status: ServiceStatus, fields: Partial<Service> = {}): Service =>
  Object.assign(new Service(), {
    tenantId: 'ten_1',
    id: 'svc_1',
    status,
    radiusUsername: 'acme/alice',
    pppoePassword: 's3cret',
    staticIpv4: null,
    ...fields,
  });

const order = (action: OrderAction): ProvisioningOrder =>
  Object.assign(new ProvisioningOrder(), { id: 'ord_1', action });

describe('radiusUser', () => {
  it("should let an active service log in with its password and answer its plan's rate", () => {
    expect(radiusUser(service(ServiceStatus.Active), PLAN)).toEqual({
      check: [{ attribute: 'Cleartext-Password', op: ':=', value: 's3cret' }],
      reply: [
        { attribute: 'Mikrotik-Rate-Limit', op: ':=', value: '20000k/100000k' },
        { attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: '100000000' },
        { attribute: 'WISPr-Bandwidth-Max-Up', op: ':=', value: '20000000' },
      ],
      groups: [],
    });
  });

  it('should answer the static address of an active service that has one', () => {
    const user = radiusUser(service(ServiceStatus.Active, { staticIpv4: '100.64.0.7' }), PLAN)!;
    expect(user.reply.at(-1)).toEqual({ attribute: 'Framed-IP-Address', op: ':=', value: '100.64.0.7' });
  });

  it("should put a suspended service in its tenant's suspended group, with no rate and no address", () => {
    expect(radiusUser(service(ServiceStatus.Suspended, { staticIpv4: '100.64.0.7' }), PLAN)).toEqual({
      check: [{ attribute: 'Cleartext-Password', op: ':=', value: 's3cret' }],
      reply: [],
      groups: ['suspended:acme'],
    });
  });

  it("should write the plan's burst in MikroTik's order: rx/tx (client upload/download), burst, threshold, time", () => {
    const plan = Object.assign(new ServicePlan(), PLAN, {
      burstDownloadKbps: 200_000,
      burstUploadKbps: 40_000,
      burstThresholdDownloadKbps: 80_000,
      burstThresholdUploadKbps: 15_000,
      burstTimeS: 16,
    });
    expect(radiusUser(service(ServiceStatus.Active), plan)!.reply).toEqual([
      {
        attribute: 'Mikrotik-Rate-Limit',
        op: ':=',
        value: '20000k/100000k 40000k/200000k 15000k/80000k 16/16',
      },
      { attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: '100000000' },
      { attribute: 'WISPr-Bandwidth-Max-Up', op: ':=', value: '20000000' },
    ]);
  });

  it("should answer a throttled service its plan's throttle rates, without burst", () => {
    const plan = Object.assign(new ServicePlan(), PLAN, {
      dataCapBytes: 1_000,
      capAction: 'throttle',
      throttleDownloadKbps: 2_000,
      throttleUploadKbps: 1_000,
      burstDownloadKbps: 200_000,
      burstUploadKbps: 40_000,
      burstThresholdDownloadKbps: 80_000,
      burstThresholdUploadKbps: 15_000,
      burstTimeS: 16,
    });
    expect(radiusUser(service(ServiceStatus.Active, { capState: CapState.Throttled }), plan)!.reply).toEqual([
      { attribute: 'Mikrotik-Rate-Limit', op: ':=', value: '1000k/2000k' },
      { attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: '2000000' },
      { attribute: 'WISPr-Bandwidth-Max-Up', op: ':=', value: '1000000' },
    ]);
  });

  it('should reject the logins of a service its data cap blocks, with a message', () => {
    expect(radiusUser(service(ServiceStatus.Active, { capState: CapState.Blocked }), PLAN)).toEqual({
      check: [
        { attribute: 'Cleartext-Password', op: ':=', value: 's3cret' },
        { attribute: 'Auth-Type', op: ':=', value: 'Reject' },
      ],
      reply: [{ attribute: 'Reply-Message', op: ':=', value: 'Data cap reached' }],
      groups: [],
    });
  });

  it('should leave no rows at all for a pending or terminated service', () => {
    expect(radiusUser(service(ServiceStatus.Pending), PLAN)).toBeNull();
    expect(radiusUser(service(ServiceStatus.Terminated), PLAN)).toBeNull();
  });
});

/** A RADIUS database in memory: what was written, the open sessions, and the failures asked for. */
function fakeRadius(options: { sessions?: RadiusSession[]; failBatch?: boolean; failUser?: string } = {}) {
  const written = new Map<string, RadiusUser | null>();
  const tenantGroups: { group: string; rows: RadiusGroup }[] = [];
  const calls = { groups: 0, batches: 0, sessions: 0 };
  const radius = {
    ensureSuspendedGroup: () => {
      calls.groups += 1;
      return Promise.resolve();
    },
    ensureGroup: (group: string, rows: RadiusGroup) => {
      tenantGroups.push({ group, rows });
      return Promise.resolve();
    },
    rewriteMany: (entries: { username: string; user: RadiusUser | null }[]) => {
      calls.batches += 1;
      if (options.failBatch) {
        return Promise.reject(new Error('batch failed'));
      }
      entries.forEach(({ username, user }) => written.set(username, user));
      return Promise.resolve();
    },
    rewrite: (username: string, user: RadiusUser | null) => {
      if (username === options.failUser) {
        return Promise.reject(new Error(`cannot write ${username}`));
      }
      written.set(username, user);
      return Promise.resolve();
    },
    openSessions: () => {
      calls.sessions += 1;
      return Promise.resolve(options.sessions ?? []);
    },
    close: () => Promise.resolve(),
  } as unknown as RadiusRepository;
  return { radius, written, calls, tenantGroups };
}

const NO_NAS: DynamicAuthorization = {
  nasAt: () => Promise.resolve(null as NasDevice | null),
  timeoutMs: 10,
  retries: 0,
};

const session = (nasIp: string): RadiusSession =>
  ({ acctSessionId: 'a1', username: 'acme/alice', nasIp, framedIp: null }) as RadiusSession;

describe('RadiusSqlDriver', () => {
  it('should write the service and, on activation, reach no session', async () => {
    const { radius, written, calls } = fakeRadius();
    const outcome = await new RadiusSqlDriver(radius, NO_NAS).apply(
      order(OrderAction.Activate),
      service(ServiceStatus.Active),
      PLAN,
    );
    expect(outcome).toEqual({});
    expect(written.get('acme/alice')?.groups).toEqual([]);
    expect(calls.sessions).toBe(0);
  });

  it('should record no session when a suspended subscriber is not online', async () => {
    const { radius, written } = fakeRadius();
    const outcome = await new RadiusSqlDriver(radius, NO_NAS).apply(
      order(OrderAction.Suspend),
      service(ServiceStatus.Suspended),
      PLAN,
    );
    expect(outcome).toEqual({ disconnect: SessionOutcome.NoSession });
    expect(written.get('acme/alice')?.groups).toEqual(['suspended:acme']);
  });

  it("should make the tenant's suspended group from its settings once per process, rejecting by default", async () => {
    const { radius, tenantGroups } = fakeRadius();
    const rejecting = new RadiusSqlDriver(radius, NO_NAS);
    for (const radiusUsername of ['acme/a', 'acme/b']) {
      await rejecting.apply(
        order(OrderAction.Suspend),
        service(ServiceStatus.Suspended, { radiusUsername }),
        PLAN,
      );
    }
    expect(tenantGroups).toEqual([
      {
        group: 'suspended:acme',
        rows: {
          check: [{ attribute: 'Auth-Type', op: ':=', value: 'Reject' }],
          reply: [{ attribute: 'Reply-Message', op: ':=', value: 'Service suspended' }],
        },
      },
    ]);

    const walled = new RadiusSqlDriver(radius, {
      ...NO_NAS,
      suspension: () =>
        Promise.resolve({
          mode: 'walled_garden',
          paymentPageUrl: 'https://pay.example/x',
          addressList: 'unpaid',
          filterId: 'redirect',
        }),
    });
    await walled.apply(order(OrderAction.Suspend), service(ServiceStatus.Suspended), PLAN);
    expect(tenantGroups[1].rows).toEqual({
      check: [],
      reply: [
        { attribute: 'Mikrotik-Address-List', op: ':=', value: 'unpaid' },
        { attribute: 'Filter-Id', op: ':=', value: 'redirect' },
        { attribute: 'WISPr-Redirection-URL', op: ':=', value: 'https://pay.example/x' },
      ],
    });
  });

  it('should remove a terminated service and record a session on an unregistered NAS', async () => {
    const { radius, written } = fakeRadius({ sessions: [session('192.0.2.1')] });
    const outcome = await new RadiusSqlDriver(radius, NO_NAS).apply(
      order(OrderAction.Terminate),
      service(ServiceStatus.Terminated),
      PLAN,
    );
    expect(outcome).toEqual({ disconnect: SessionOutcome.UnknownNas });
    expect(written.has('acme/alice')).toBe(true);
    expect(written.get('acme/alice')).toBeNull();
  });

  it("should answer a plan change's CoA outcome, not a disconnect", async () => {
    const { radius } = fakeRadius({ sessions: [session('192.0.2.1')] });
    const outcome = await new RadiusSqlDriver(radius, NO_NAS).apply(
      order(OrderAction.ChangePlan),
      service(ServiceStatus.Active),
      PLAN,
    );
    expect(outcome).toEqual({ coa: SessionOutcome.UnknownNas });
  });

  it('should write the orders carried out together in one batch, and make the suspended group once', async () => {
    const { radius, written, calls } = fakeRadius();
    const driver = new RadiusSqlDriver(radius, NO_NAS);
    await Promise.all(
      ['acme/a', 'acme/b', 'acme/c'].map((radiusUsername) =>
        driver.apply(order(OrderAction.Resume), service(ServiceStatus.Active, { radiusUsername }), PLAN),
      ),
    );
    expect([...written.keys()].sort()).toEqual(['acme/a', 'acme/b', 'acme/c']);
    expect(calls).toEqual({ groups: 1, batches: 1, sessions: 0 });
  });

  it('should fail only the order whose row cannot be written, as worth another try', async () => {
    const { radius, written } = fakeRadius({ failBatch: true, failUser: 'acme/bad' });
    const driver = new RadiusSqlDriver(radius, NO_NAS);
    const [good, bad] = await Promise.allSettled(
      ['acme/good', 'acme/bad'].map((radiusUsername) =>
        driver.apply(order(OrderAction.Modify), service(ServiceStatus.Active, { radiusUsername }), PLAN),
      ),
    );
    expect(good).toEqual({ status: 'fulfilled', value: {} });
    expect(written.has('acme/good')).toBe(true);
    expect(bad.status).toBe('rejected');
    const error = (bad as PromiseRejectedResult).reason as DriverError;
    expect(error).toBeInstanceOf(DriverError);
    expect(error.transient).toBe(true);
    expect(error.message).toBe('radius-sql: cannot write acme/bad');
  });
});
