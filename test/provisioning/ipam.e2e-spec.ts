import request from 'supertest';
import { expectError, expectList, expectNotFound, expectSuccess, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  addressIn,
  createPool,
  deletePool,
  getPool,
  getPoolRes,
  IP_POOL_FIELDS,
  IP_POOL_ID,
  type IpPool,
  patchPool,
  postPool,
  randomIpv4Network,
  uniquePoolName,
} from '../support/ipam-factory';
import { FAST_WORKER } from '../support/network-factory';
import {
  createPlan,
  DEFAULT_PPPOE_PASSWORD,
  getService,
  type Order,
  postAction,
  postService,
  PROVISIONING_SCOPES,
  radiusRows,
  type Service,
  type ServicePlan,
  uniquePppoeUsername,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber, listen, listEvents } from '../support/subscriber-factory';
import {
  createTenantWithToken,
  issueToken,
  startTestApp,
  type TenantWithToken,
  type TestApp,
} from '../support/test-app';
import { letTimePass } from '../support/wait-for';

const patchService = (t: TestApp, token: string, id: string, body: Record<string, unknown>) =>
  request(t.http).patch(`/api/v1/services/${id}`).set(bearer(token)).send(body);

/** Issue #33 item 1: IP pools, their utilisation, and services' addresses and delegated prefixes from them. */
describe('IPAM: IP pools and the addresses services hold of them', () => {
  let t: TestApp;
  let isp: TenantWithToken;
  let subscriberId: string;
  let plan: ServicePlan;

  beforeAll(async () => {
    // The race queues 200 requests on the embedded database's one connection: room to wait for it.
    t = await startTestApp({ ...FAST_WORKER, DATABASE_ACQUIRE_TIMEOUT_MS: '120000' });
    await listen(t);
    isp = await createTenantWithToken(t, PROVISIONING_SCOPES);
    subscriberId = (await createSubscriber(t, isp.token, { status: 'active' })).id;
    plan = await createPlan(t, isp.token);
  });

  afterAll(async () => {
    await t?.close();
  });

  /** A service of the suite's subscriber with the addressing fields given; answers the raw response. */
  const order = (fields: Record<string, unknown>, token = isp.token, subscriber = subscriberId) =>
    postService(t, token, subscriber, {
      plan_id: plan.id,
      pppoe_username: uniquePppoeUsername(),
      pppoe_password: DEFAULT_PPPOE_PASSWORD,
      ...fields,
    });

  const created = async (fields: Record<string, unknown>) => {
    const res = await order(fields);
    expectSuccess(res, 202);
    return res.body.data as { service: Service; order: Order };
  };

  async function completed(orderId: string): Promise<Order> {
    const done = await waitForOrder(t, isp.token, orderId, ['completed', 'failed']);
    expect({ status: done.status, error: done.last_error }).toEqual({ status: 'completed', error: null });
    return done;
  }

  async function terminate(serviceId: string): Promise<void> {
    const res = await postAction(t, isp.token, serviceId, { action: 'terminate' });
    expectSuccess(res, 202);
    await completed((res.body.data as Order).id);
  }

  describe('the pools', () => {
    it('should require authentication', async () => {
      expectError(await request(t.http).get('/api/v1/ip-pools'), 401, 'authentication_required');
      expectError(await request(t.http).post('/api/v1/ip-pools').send({}), 401, 'authentication_required');
    });

    it('should require provisioning:write to create and provisioning:read to read', async () => {
      const reader = await issueToken(t, isp.slug, ['provisioning:read']);
      const writer = await issueToken(t, isp.slug, ['subscribers:read']);
      const body = { name: uniquePoolName(), cidr: randomIpv4Network(), kind: 'static' };
      expectError(await postPool(t, reader.token, body), 403, 'insufficient_scope');
      expectError(
        await request(t.http).get('/api/v1/ip-pools').set(bearer(writer.token)),
        403,
        'insufficient_scope',
      );
      expectList(await request(t.http).get('/api/v1/ip-pools').set(bearer(reader.token)));
    });

    it('should create a static IPv4 pool, canonical, with its utilisation, and emit ip_pool.created', async () => {
      const cidr = randomIpv4Network(24);
      const res = await postPool(t, isp.token, {
        name: uniquePoolName(),
        cidr,
        gateway: addressIn(cidr, 1),
        excluded: [`${addressIn(cidr, 2)}-${addressIn(cidr, 9)}`, addressIn(cidr, 200)],
        kind: 'static',
      });
      const pool = successRecord<IpPool>(res, IP_POOL_FIELDS, 201);
      expect(pool).toMatchObject({
        family: 4,
        cidr,
        gateway: addressIn(cidr, 1),
        kind: 'static',
        delegated_prefix_length: null,
        nas_id: null,
        cooldown_s: 3600,
        // 256 less the network and broadcast addresses, the gateway, .2–.9 and .200.
        utilisation: { size: 256 - 2 - 1 - 8 - 1, allocated: 0, cooling: 0, free: 244 },
      });
      expect(pool.id).toMatch(IP_POOL_ID);
      const events = await listEvents(t, isp.token, { type: 'ip_pool.created', subject_id: pool.id });
      expect(events.map((event) => event.data.object)).toEqual([pool]);
    });

    it('should create an IPv6 pool delegating /56 prefixes by default', async () => {
      const pool = await createPool(t, isp.token, { cidr: '2001:DB8:1200::/48' });
      expect(pool).toMatchObject({
        family: 6,
        cidr: '2001:db8:1200::/48',
        delegated_prefix_length: 56,
        utilisation: { size: 256, allocated: 0, cooling: 0, free: 256 },
      });
    });

    it.each([
      ['host bits in the cidr', { cidr: '10.250.0.1/24' }, 422, 'validation_failed', 'cidr'],
      ['a cidr that is no network', { cidr: '10.250.0.0' }, 422, 'validation_failed', 'cidr'],
      ['an IPv4 pool shorter than /8', { cidr: '0.0.0.0/4' }, 422, 'validation_failed', 'cidr'],
      ['an IPv6 pool longer than /64', { cidr: '2001:db8:ff::/120' }, 422, 'validation_failed', 'cidr'],
      [
        'a gateway outside',
        { cidr: '10.251.0.0/24', gateway: '10.251.1.1' },
        422,
        'validation_failed',
        'gateway',
      ],
      [
        'an excluded range outside',
        { cidr: '10.251.0.0/24', excluded: ['10.251.0.250-10.251.1.3'] },
        422,
        'validation_failed',
        'excluded',
      ],
      [
        'an excluded range backwards',
        { excluded: ['10.0.0.9-10.0.0.2'] },
        422,
        'validation_failed',
        'excluded',
      ],
      [
        'a delegated prefix length for IPv4',
        { cidr: '10.252.0.0/24', delegated_prefix_length: 56 },
        422,
        'validation_failed',
        'delegated_prefix_length',
      ],
      [
        'a delegated prefix length shorter than the pool',
        { cidr: '2001:db8:ff00::/56', delegated_prefix_length: 48 },
        422,
        'validation_failed',
        'delegated_prefix_length',
      ],
      ['an unknown kind', { kind: 'floating' }, 422, 'validation_failed', 'kind'],
      ['a name with a space', { name: 'north pool' }, 422, 'validation_failed', 'name'],
      ['a negative cooldown', { cooldown_s: -1 }, 422, 'validation_failed', 'cooldown_s'],
      ['an unknown NAS', { nas_id: 'nas_unknown' }, 422, 'invalid_reference', 'nas_id'],
      ['an unknown field', { vlan: 3 }, 400, 'unknown_field', 'vlan'],
    ])('should refuse %s', async (_case, fields, status, code, field) => {
      const res = await postPool(t, isp.token, {
        name: uniquePoolName(),
        cidr: randomIpv4Network(),
        kind: 'static',
        ...fields,
      });
      expectError(res, status, code, field);
    });

    it('should refuse a pool overlapping another of the tenant (409 pool_overlap), not of another tenant', async () => {
      const pool = await createPool(t, isp.token, { cidr: randomIpv4Network(24) });
      const inside = `${addressIn(pool.cidr, 128)}/25`;
      expectError(
        await postPool(t, isp.token, { name: uniquePoolName(), cidr: inside, kind: 'static' }),
        409,
        'pool_overlap',
        'cidr',
      );
      const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
      expectSuccess(
        await postPool(t, other.token, { name: pool.name, cidr: pool.cidr, kind: 'static' }),
        201,
      );
      expectError(
        await postPool(t, isp.token, { name: pool.name, cidr: randomIpv4Network(), kind: 'static' }),
        409,
        'duplicate_ip_pool',
        'name',
      );
    });

    it("should list the tenant's pools newest first by cursor, and hide another tenant's", async () => {
      const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const first = await createPool(t, tenant.token);
      const second = await createPool(t, tenant.token);
      const page = await request(t.http)
        .get('/api/v1/ip-pools')
        .query({ limit: 1 })
        .set(bearer(tenant.token));
      expectList(page);
      expect(page.body.data.map((pool: IpPool) => pool.id)).toEqual([second.id]);
      const next = await request(t.http)
        .get('/api/v1/ip-pools')
        .query({ limit: 1, starting_after: page.body.meta.pagination.next_cursor as string })
        .set(bearer(tenant.token));
      expect(next.body.data.map((pool: IpPool) => pool.id)).toEqual([first.id]);
      expectNotFound(await getPoolRes(t, isp.token, first.id));
      expectNotFound(await patchPool(t, isp.token, first.id, { name: 'stolen' }));
      expectNotFound(await deletePool(t, isp.token, first.id));
    });

    it('should change the name, exclusions and cooldown, and emit ip_pool.updated naming them', async () => {
      const pool = await createPool(t, isp.token, { cidr: randomIpv4Network(28) });
      const res = await patchPool(t, isp.token, pool.id, {
        name: `${pool.name}-b`,
        excluded: [addressIn(pool.cidr, 1)],
        cooldown_s: 60,
      });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        name: `${pool.name}-b`,
        excluded: [addressIn(pool.cidr, 1)],
        cooldown_s: 60,
        utilisation: { size: 13, free: 13 },
      });
      const [event] = await listEvents(t, isp.token, { type: 'ip_pool.updated', subject_id: pool.id });
      expect(event.data.changed_fields).toEqual(['name', 'excluded', 'cooldown_s']);
      expectError(
        await patchPool(t, isp.token, pool.id, { cidr: '10.0.0.0/8' }),
        400,
        'unknown_field',
        'cidr',
      );
    });
  });

  describe('static IPv4 addresses', () => {
    it('should give each service the next free address, skipping the excluded ones and the gateway', async () => {
      const cidr = randomIpv4Network(28);
      const pool = await createPool(t, isp.token, {
        cidr,
        gateway: addressIn(cidr, 1),
        excluded: [`${addressIn(cidr, 2)}-${addressIn(cidr, 4)}`],
      });
      const a = await created({ ip_pool_id: pool.id });
      const b = await created({ ip_pool_id: pool.id });
      expect([a.service, b.service].map((s) => [s.ip_pool_id, s.static_ipv4])).toEqual([
        [pool.id, addressIn(cidr, 5)],
        [pool.id, addressIn(cidr, 6)],
      ]);
      expect((await getPool(t, isp.token, pool.id)).utilisation).toEqual({
        size: 10,
        allocated: 2,
        cooling: 0,
        free: 8,
      });
    });

    it('should take the address named, and refuse one held (409 address_in_use) or excluded (422)', async () => {
      const cidr = randomIpv4Network(28);
      const pool = await createPool(t, isp.token, { cidr, gateway: addressIn(cidr, 1) });
      const named = await created({ ip_pool_id: pool.id, static_ipv4: addressIn(cidr, 9) });
      expect(named.service.static_ipv4).toBe(addressIn(cidr, 9));
      expectError(
        await order({ ip_pool_id: pool.id, static_ipv4: addressIn(cidr, 9) }),
        409,
        'address_in_use',
        'static_ipv4',
      );
      // Named without the pool: the pool that holds it is found.
      expectError(await order({ static_ipv4: addressIn(cidr, 9) }), 409, 'address_in_use', 'static_ipv4');
      for (const offset of [0, 1, 15]) {
        expectError(
          await order({ ip_pool_id: pool.id, static_ipv4: addressIn(cidr, offset) }),
          422,
          'address_not_assignable',
          'static_ipv4',
        );
      }
      expectError(
        await order({ ip_pool_id: pool.id, static_ipv4: '192.0.2.77' }),
        422,
        'address_not_assignable',
        'static_ipv4',
      );
      expectError(await order({ ip_pool_id: 'ipp_unknown' }), 422, 'invalid_reference', 'ip_pool_id');
    });

    it('should allocate an address named without a pool from the pool that holds it', async () => {
      const pool = await createPool(t, isp.token, { cidr: randomIpv4Network(28) });
      const { service } = await created({ static_ipv4: addressIn(pool.cidr, 7) });
      expect(service).toMatchObject({ ip_pool_id: pool.id, static_ipv4: addressIn(pool.cidr, 7) });
      expect((await getPool(t, isp.token, pool.id)).utilisation.allocated).toBe(1);
    });

    it('should keep a literal static_ipv4 outside every pool as before', async () => {
      const { service } = await created({ static_ipv4: '192.0.2.201' });
      expect(service).toMatchObject({ ip_pool_id: null, static_ipv4: '192.0.2.201' });
      expectError(await order({ static_ipv4: '192.0.2.201' }), 409, 'duplicate_ip_address', 'static_ipv4');
    });

    it('should refuse a service once the pool is full (409 pool_exhausted), writing nothing', async () => {
      const pool = await createPool(t, isp.token, { cidr: randomIpv4Network(30) });
      await created({ ip_pool_id: pool.id });
      await created({ ip_pool_id: pool.id });
      const username = uniquePppoeUsername();
      expectError(
        await order({ ip_pool_id: pool.id, pppoe_username: username }),
        409,
        'pool_exhausted',
        'ip_pool_id',
      );
      const listed = await request(t.http)
        .get('/api/v1/services')
        .query({ pppoe_username: username })
        .set(bearer(isp.token));
      expect(listed.body.data).toEqual([]);
      expect((await getPool(t, isp.token, pool.id)).utilisation).toEqual({
        size: 2,
        allocated: 2,
        cooling: 0,
        free: 0,
      });
    });

    it('should adopt the static addresses live services hold inside a new pool', async () => {
      const cidr = randomIpv4Network(28);
      const { service } = await created({ static_ipv4: addressIn(cidr, 3) });
      expect(service.ip_pool_id).toBeNull();
      const pool = await createPool(t, isp.token, { cidr });
      expect(pool.utilisation.allocated).toBe(1);
      expect(await getService(t, isp.token, service.id)).toMatchObject({
        ip_pool_id: pool.id,
        static_ipv4: addressIn(cidr, 3),
      });
      const [event] = await listEvents(t, isp.token, { type: 'service.updated', subject_id: service.id });
      expect(event.data.changed_fields).toEqual(['ip_pool_id']);
      expectError(await order({ static_ipv4: addressIn(cidr, 3) }), 409, 'address_in_use', 'static_ipv4');
    });
  });

  describe('release and cooldown', () => {
    it('should cool an address down after termination, then hand it out again', async () => {
      const pool = await createPool(t, isp.token, { cidr: randomIpv4Network(30), cooldown_s: 2 });
      const first = await created({ ip_pool_id: pool.id });
      await completed(first.order.id);
      await terminate(first.service.id);
      const address = first.service.static_ipv4!;
      expect((await getPool(t, isp.token, pool.id)).utilisation).toEqual({
        size: 2,
        allocated: 0,
        cooling: 1,
        free: 1,
      });
      expectError(
        await order({ ip_pool_id: pool.id, static_ipv4: address }),
        409,
        'address_in_use',
        'static_ipv4',
      );
      // The next free one is the other address, not the cooling one.
      const second = await created({ ip_pool_id: pool.id });
      expect(second.service.static_ipv4).not.toBe(address);
      await letTimePass(2100);
      const third = await created({ ip_pool_id: pool.id });
      expect(third.service.static_ipv4).toBe(address);
      expect((await getPool(t, isp.token, pool.id)).utilisation).toMatchObject({ allocated: 2, cooling: 0 });
    });

    it('should move a service to another address by PATCH, cooling the old one, with a modify order', async () => {
      const pool = await createPool(t, isp.token, { cidr: randomIpv4Network(28), cooldown_s: 600 });
      const made = await created({ ip_pool_id: pool.id });
      await completed(made.order.id);
      const res = await patchService(t, isp.token, made.service.id, { static_ipv4: addressIn(pool.cidr, 8) });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ ip_pool_id: pool.id, static_ipv4: addressIn(pool.cidr, 8) });
      expect((await getPool(t, isp.token, pool.id)).utilisation).toMatchObject({ allocated: 1, cooling: 1 });
      const modify = await request(t.http)
        .get('/api/v1/provisioning-orders')
        .query({ service_id: made.service.id, action: 'modify' })
        .set(bearer(isp.token));
      expect(modify.body.data.map((o: Order & { changes: string[] }) => o.changes)).toEqual([
        ['static_ipv4'],
      ]);
      await completed((modify.body.data[0] as Order).id);
      expect((await radiusRows(t, made.service.radius_username)).reply).toContainEqual({
        attribute: 'Framed-IP-Address',
        op: ':=',
        value: addressIn(pool.cidr, 8),
      });
      // Cleared: the address cools down too, and the service leaves the pool.
      const cleared = await patchService(t, isp.token, made.service.id, { ip_pool_id: null });
      expectSuccess(cleared);
      expect(cleared.body.data).toMatchObject({ ip_pool_id: null, static_ipv4: null });
      expect((await getPool(t, isp.token, pool.id)).utilisation).toMatchObject({ allocated: 0, cooling: 2 });
    });

    it('should refuse to delete a pool while a service holds an address of it (409 pool_in_use)', async () => {
      const pool = await createPool(t, isp.token, { cidr: randomIpv4Network(29) });
      const made = await created({ ip_pool_id: pool.id });
      expectError(await deletePool(t, isp.token, pool.id), 409, 'pool_in_use');
      await completed(made.order.id);
      await terminate(made.service.id);
      const res = await deletePool(t, isp.token, pool.id);
      expectSuccess(res);
      expectNotFound(await getPoolRes(t, isp.token, pool.id));
      const events = await listEvents(t, isp.token, { type: 'ip_pool.deleted', subject_id: pool.id });
      expect(events).toHaveLength(1);
    });
  });

  describe('IPv6 delegated prefixes', () => {
    it('should delegate the next free prefix, or the one named, and carry it to RADIUS', async () => {
      const pool = await createPool(t, isp.token, {
        cidr: '2001:db8:3400::/48',
        excluded: ['2001:db8:3400::/56'],
      });
      const a = await created({ ipv6_pool_id: pool.id });
      expect(a.service).toMatchObject({
        ipv6_pool_id: pool.id,
        delegated_ipv6_prefix: '2001:db8:3400:100::/56',
      });
      const b = await created({ delegated_ipv6_prefix: '2001:DB8:3400:FF00::/56' });
      expect(b.service).toMatchObject({
        ipv6_pool_id: pool.id,
        delegated_ipv6_prefix: '2001:db8:3400:ff00::/56',
      });
      expectError(
        await order({ delegated_ipv6_prefix: '2001:db8:3400:ff00::/56' }),
        409,
        'address_in_use',
        'delegated_ipv6_prefix',
      );
      expectError(
        await order({ delegated_ipv6_prefix: '2001:db8:3400:ff00::/64' }),
        422,
        'address_not_assignable',
        'delegated_ipv6_prefix',
      );
      expectError(
        await order({ delegated_ipv6_prefix: '2001:db8:9999::/56' }),
        422,
        'address_not_assignable',
        'delegated_ipv6_prefix',
      );
      expectError(await order({ ip_pool_id: pool.id }), 422, 'validation_failed', 'ip_pool_id');
      await completed(a.order.id);
      expect((await radiusRows(t, a.service.radius_username)).reply).toContainEqual({
        attribute: 'Delegated-IPv6-Prefix',
        op: ':=',
        value: '2001:db8:3400:100::/56',
      });
    });
  });

  describe('dynamic pools', () => {
    it('should hand a dynamic pool to the NAS as Framed-Pool and Delegated-IPv6-Prefix-Pool', async () => {
      const v4 = await createPool(t, isp.token, { kind: 'dynamic', cidr: randomIpv4Network(22) });
      const v6 = await createPool(t, isp.token, { kind: 'dynamic', cidr: '2001:db8:5600::/40' });
      const made = await created({ ip_pool_id: v4.id, ipv6_pool_id: v6.id });
      expect(made.service).toMatchObject({
        ip_pool_id: v4.id,
        static_ipv4: null,
        ipv6_pool_id: v6.id,
        delegated_ipv6_prefix: null,
      });
      await completed(made.order.id);
      const { reply } = await radiusRows(t, made.service.radius_username);
      expect(reply.filter((row) => /Pool|Framed|Delegated/.test(row.attribute))).toEqual([
        { attribute: 'Delegated-IPv6-Prefix-Pool', op: ':=', value: v6.name },
        { attribute: 'Framed-Pool', op: ':=', value: v4.name },
      ]);
      expect((await getPool(t, isp.token, v4.id)).utilisation).toMatchObject({ allocated: 0 });
      expectError(
        await order({ static_ipv4: addressIn(v4.cidr, 10) }),
        422,
        'address_not_assignable',
        'static_ipv4',
      );
      expectError(
        await order({ ip_pool_id: v4.id, static_ipv4: addressIn(v4.cidr, 10) }),
        422,
        'validation_failed',
        'static_ipv4',
      );
      // Its name is in the service's RADIUS rows: not renamed, not deleted while the service is live.
      expectError(await patchPool(t, isp.token, v4.id, { name: `${v4.name}-x` }), 409, 'pool_in_use');
      expectError(await deletePool(t, isp.token, v4.id), 409, 'pool_in_use');
    });
  });

  describe('a race', () => {
    it('should never give two of 200 parallel services one address of a small pool', async () => {
      const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const racePlan = await createPlan(t, tenant.token);
      const subscribers = await Promise.all(
        Array.from(
          { length: 20 },
          async () => (await createSubscriber(t, tenant.token, { status: 'active' })).id,
        ),
      );
      const pool = await createPool(t, tenant.token, { cidr: randomIpv4Network(28) });
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          postService(t, tenant.token, subscribers[i % subscribers.length], {
            plan_id: racePlan.id,
            pppoe_username: uniquePppoeUsername('race'),
            pppoe_password: DEFAULT_PPPOE_PASSWORD,
            ip_pool_id: pool.id,
          }),
        ),
      );
      const statuses = answers.map((res) => res.status);
      expect({
        202: statuses.filter((s) => s === 202).length,
        409: statuses.filter((s) => s === 409).length,
      }).toEqual({ 202: 14, 409: 186 });
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'pool_exhausted', 'ip_pool_id');
      }
      const addresses = answers
        .filter((res) => res.status === 202)
        .map((res) => (res.body.data as { service: Service }).service.static_ipv4);
      expect(new Set(addresses).size).toBe(14);
      expect(
        addresses.every((address) => address?.startsWith(pool.cidr.split('.').slice(0, 3).join('.'))),
      ).toBe(true);
      const rows = await t.dataSource.query<{ static_ipv4: string; n: string }[]>(
        `SELECT static_ipv4, count(*) AS n FROM services WHERE tenant_id = $1 GROUP BY static_ipv4`,
        [tenant.tenantId],
      );
      expect(rows.every((row) => Number(row.n) === 1)).toBe(true);
      expect((await getPool(t, tenant.token, pool.id)).utilisation).toEqual({
        size: 14,
        allocated: 14,
        cooling: 0,
        free: 0,
      });
    }, 120_000);
  });
});
