import { join } from 'node:path';
import * as radius from 'radius';
import { addressIn, createPool, getPool, randomIpv4Network, type IpPool } from '../support/ipam-factory';
import { createPlan, type Service, type ServicePlan } from '../support/provisioning-factory';
import type { TestApp } from '../support/test-app';
import type { RadiusReply } from './support/radius-client';
import { RadiusLab, type TenantNetwork } from './support/radius-lab';

// Before the first encode or decode: node-radius reads its dictionaries once (see useVendorDictionary).
radius.add_dictionary(join(__dirname, 'support', 'rfc6911.dictionary'));

/**
 * Issue #33 item 1 end to end: services take their addresses from the API's IP pools, and a real FreeRADIUS 3 answers
 * their logins with them: the pool's address (Framed-IP-Address), the delegated prefix (Delegated-IPv6-Prefix), and
 * a dynamic pool's name (Framed-Pool, Delegated-IPv6-Prefix-Pool).
 */

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
  const lab = new RadiusLab();
  let t: TestApp;
  let net: TenantNetwork;
  let tenant: TenantNetwork['tenant'];
  let plan: ServicePlan;
  let nasId: string;
  const withLog = (run: () => Promise<void>) => lab.withLog(run);
  const activeService = (fields: Record<string, unknown>): Promise<Service> =>
    lab.activeService(net, plan.id, fields);
  const login = (service: Service): Promise<RadiusReply> => lab.login(net, service.radius_username);

  beforeAll(async () => {
    t = await lab.startApp();
    net = await lab.network('ipam-nas-secret', 3);
    ({ tenant, nasId } = net);
    plan = await createPlan(t, tenant.token, { download_kbps: 100_000, upload_kbps: 20_000 });
    await lab.startRadius();
  });

  afterAll(() => lab.stop());

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

      await lab.act(net, service, { action: 'terminate' });
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
