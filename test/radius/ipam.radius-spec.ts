import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import * as radius from 'radius';
import request from 'supertest';
import { bearer } from '../support/factories';
import { addressIn, createPool, getPool, randomIpv4Network, type IpPool } from '../support/ipam-factory';
import {
  createPlan,
  createService,
  DEFAULT_PPPOE_PASSWORD,
  type Order,
  postAction,
  PROVISIONING_SCOPES,
  type Service,
  type ServicePlan,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { freeRadiusBinary, startFreeRadius, type FreeRadius } from './support/freeradius';
import { accessRequest, type RadiusReply } from './support/radius-client';

// Before the first encode or decode: node-radius reads its dictionaries once (see useVendorDictionary).
radius.add_dictionary(join(__dirname, 'support', 'rfc6911.dictionary'));

/**
 * Issue #33 item 1 end to end: services take their addresses from the API's IP pools, and a real FreeRADIUS 3 answers
 * their logins with them: the pool's address (Framed-IP-Address), the delegated prefix (Delegated-IPv6-Prefix), and
 * a dynamic pool's name (Framed-Pool, Delegated-IPv6-Prefix-Pool).
 */

const DATABASE_URL = process.env.DATABASE_URL ?? '';
const STATIC_CLIENT_SECRET = 'static-client-secret';
const NAS_SECRET = 'ipam-nas-secret';

/** Delegated-IPv6-Prefix as it travels (RFC 4818: reserved, prefix length, the prefix's significant octets). */
function ipv6Prefix(value: unknown): string {
  const bytes = value as Buffer;
  const length = bytes[1];
  const full = Buffer.alloc(16);
  bytes.subarray(2).copy(full);
  const groups = Array.from({ length: 8 }, (_, i) => full.readUInt16BE(i * 2).toString(16));
  // Written as RFC 5952 does for these test prefixes: the trailing zero groups as `::`.
  let last = 7;
  while (last >= 0 && groups[last] === '0') {
    last--;
  }
  return `${groups.slice(0, last + 1).join(':')}::/${length}`;
}

describe('IPAM with a real FreeRADIUS (RADIUS suite)', () => {
  let t: TestApp;
  let server: FreeRadius;
  let tenant: TenantWithToken;
  let plan: ServicePlan;
  let nasId: string;
  const nasAddress = `127.3.${randomInt(256)}.${randomInt(2, 255)}`;

  beforeAll(async () => {
    if (!DATABASE_URL || !freeRadiusBinary()) {
      throw new Error('the RADIUS suite needs DATABASE_URL (a Postgres) and FreeRADIUS 3 installed');
    }
    t = await startTestApp({ PROVISIONING_POLL_MS: '50', PROVISIONING_RETRY_DELAYS_S: '0.05,0.05' });
    tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
    plan = await createPlan(t, tenant.token, { download_kbps: 100_000, upload_kbps: 20_000 });
    // The NAS first: FreeRADIUS reads its clients (the nas table) when it starts.
    const nas = await request(t.http)
      .post('/api/v1/nas')
      .set(bearer(tenant.token))
      .send({ name: 'bng-ipam', ip: nasAddress, secret: NAS_SECRET, type: 'mikrotik' });
    expect(nas.status).toBe(201);
    nasId = nas.body.data.id as string;
    server = await startFreeRadius({ databaseUrl: DATABASE_URL, clientSecret: STATIC_CLIENT_SECRET });
  });

  afterAll(async () => {
    await server?.stop();
    await t?.close();
  });

  async function withLog(run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      (error as Error).message += `\n--- FreeRADIUS output (tail) ---\n${server.log().slice(-4000)}`;
      throw error;
    }
  }

  async function completed(orderId: string): Promise<void> {
    const done = await waitForOrder(t, tenant.token, orderId, ['completed', 'failed']);
    expect({ status: done.status, error: done.last_error }).toEqual({ status: 'completed', error: null });
  }

  async function activeService(fields: Record<string, unknown>): Promise<Service> {
    const subscriber = await createSubscriber(t, tenant.token, { status: 'active' });
    const { service, order } = await createService(t, tenant.token, subscriber.id, {
      plan_id: plan.id,
      ...fields,
    });
    await completed(order.id);
    return service;
  }

  function login(service: Service): Promise<RadiusReply> {
    return accessRequest({
      server: { address: '127.0.0.1', port: server.authPort },
      secret: NAS_SECRET,
      source: nasAddress,
      userName: service.radius_username,
      password: DEFAULT_PPPOE_PASSWORD,
      attributes: [['NAS-IP-Address', nasAddress]],
    });
  }

  it("should answer a static pool's address and delegated prefix in the Access-Accept, and free them on termination", () =>
    withLog(async () => {
      const v4: IpPool = await createPool(t, tenant.token, {
        cidr: randomIpv4Network(28),
        nas_id: nasId,
        cooldown_s: 600,
      });
      const v6: IpPool = await createPool(t, tenant.token, {
        cidr: '2001:db8:7700::/48',
        delegated_prefix_length: 56,
        excluded: ['2001:db8:7700::/56'],
        nas_id: nasId,
        cooldown_s: 600,
      });
      const service = await activeService({ ip_pool_id: v4.id, ipv6_pool_id: v6.id });
      expect(service).toMatchObject({
        static_ipv4: addressIn(v4.cidr, 1),
        delegated_ipv6_prefix: '2001:db8:7700:100::/56',
      });

      const accept = await login(service);
      expect(accept.code).toBe('Access-Accept');
      expect(accept.attributes).toMatchObject({
        'Framed-IP-Address': addressIn(v4.cidr, 1),
        'Mikrotik-Rate-Limit': '20000k/100000k',
      });
      expect(ipv6Prefix(accept.attributes['Delegated-IPv6-Prefix'])).toBe('2001:db8:7700:100::/56');
      expect(accept.attributes['Framed-Pool']).toBeUndefined();

      const res = await postAction(t, tenant.token, service.id, { action: 'terminate' });
      expect(res.status).toBe(202);
      await completed((res.body.data as Order).id);
      expect((await login(service)).code).toBe('Access-Reject');
      expect((await getPool(t, tenant.token, v4.id)).utilisation).toMatchObject({ allocated: 0, cooling: 1 });
      expect((await getPool(t, tenant.token, v6.id)).utilisation).toMatchObject({ allocated: 0, cooling: 1 });
    }));

  it("should hand a dynamic pool's name to the NAS as Framed-Pool and Delegated-IPv6-Prefix-Pool", () =>
    withLog(async () => {
      const v4 = await createPool(t, tenant.token, {
        kind: 'dynamic',
        cidr: randomIpv4Network(22),
        nas_id: nasId,
      });
      const v6 = await createPool(t, tenant.token, {
        kind: 'dynamic',
        cidr: '2001:db8:7800::/40',
        nas_id: nasId,
      });
      const service = await activeService({ ip_pool_id: v4.id, ipv6_pool_id: v6.id });

      const accept = await login(service);
      expect(accept.code).toBe('Access-Accept');
      expect(accept.attributes).toMatchObject({
        'Framed-Pool': v4.name,
        'Delegated-IPv6-Prefix-Pool': v6.name,
      });
      expect(accept.attributes['Framed-IP-Address']).toBeUndefined();
      expect(accept.attributes['Delegated-IPv6-Prefix']).toBeUndefined();
    }));
});
