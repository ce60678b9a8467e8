import type { Service } from '../provisioning.entity';
import { addressReply, servicePools } from './radius-addressing';
import type { IpPool } from './ip-pool.entity';

const NONE = { framedPool: null, delegatedPrefixPool: null };
const pool = (id: string, kind: 'static' | 'dynamic', name: string) =>
  ({ tenantId: 'ten_a', id, kind, name }) as IpPool;

describe('addressReply', () => {
  it('should answer a static address and a delegated prefix before any dynamic pool', () => {
    expect(
      addressReply(
        { staticIpv4: '198.51.100.10', delegatedIpv6Prefix: '2001:db8:100:100::/56' },
        { framedPool: 'cgnat', delegatedPrefixPool: 'pd' },
      ),
    ).toEqual([
      { attribute: 'Framed-IP-Address', op: ':=', value: '198.51.100.10' },
      { attribute: 'Delegated-IPv6-Prefix', op: ':=', value: '2001:db8:100:100::/56' },
    ]);
  });

  it('should name the dynamic pools when the service holds no address of its own', () => {
    expect(
      addressReply(
        { staticIpv4: null, delegatedIpv6Prefix: null },
        { framedPool: 'cgnat', delegatedPrefixPool: 'pd' },
      ),
    ).toEqual([
      { attribute: 'Framed-Pool', op: ':=', value: 'cgnat' },
      { attribute: 'Delegated-IPv6-Prefix-Pool', op: ':=', value: 'pd' },
    ]);
    expect(addressReply({ staticIpv4: null, delegatedIpv6Prefix: null }, NONE)).toEqual([]);
  });
});

describe('servicePools', () => {
  it("should give the names of the service's dynamic pools only, of its own tenant", () => {
    const pools = new Map([
      ['ten_a/ipp_1', pool('ipp_1', 'dynamic', 'cgnat')],
      ['ten_a/ipp_2', pool('ipp_2', 'static', 'public')],
      ['ten_b/ipp_3', pool('ipp_3', 'dynamic', 'theirs')],
    ]);
    const service = (ipPoolId: string | null, ipv6PoolId: string | null) =>
      ({ tenantId: 'ten_a', ipPoolId, ipv6PoolId }) as Service;
    expect(servicePools(service('ipp_1', 'ipp_2'), pools)).toEqual({
      framedPool: 'cgnat',
      delegatedPrefixPool: null,
    });
    expect(servicePools(service('ipp_3', null), pools)).toEqual(NONE);
    expect(servicePools(service(null, null), pools)).toEqual(NONE);
  });
});
