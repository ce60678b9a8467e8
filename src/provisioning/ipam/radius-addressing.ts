import type { Service } from '../provisioning.entity';
import type { ServicePools } from '../network/network-driver';
import type { IpPool } from './ip-pool.entity';

/** The names of the dynamic pools the service is linked to (of `pools`, by `tenant/id`), for its RADIUS reply. */
/** The pools (IPv4 and IPv6) the services name. */
export function poolIdsOf(services: Pick<Service, 'ipPoolId' | 'ipv6PoolId'>[]): string[] {
  return services.flatMap((service) => [service.ipPoolId ?? [], service.ipv6PoolId ?? []].flat());
}

export function servicePools(service: Service, pools: Map<string, IpPool>): ServicePools {
  const dynamic = (id: string | null) => {
    const pool = id === null ? undefined : pools.get(`${service.tenantId}/${id}`);
    return pool?.kind === 'dynamic' ? pool.name : null;
  };
  return { framedPool: dynamic(service.ipPoolId), delegatedPrefixPool: dynamic(service.ipv6PoolId) };
}

/**
 * An active service's addresses in its RADIUS reply (docs/network.md, "IP pools"): its static IPv4 address
 * (Framed-IP-Address) or else the dynamic pool the NAS gives one from (Framed-Pool); its delegated IPv6 prefix
 * (Delegated-IPv6-Prefix, RFC 4818) or else the dynamic pool the NAS delegates from (Delegated-IPv6-Prefix-Pool,
 * RFC 6911).
 */
export function addressReply(
  service: Pick<Service, 'staticIpv4' | 'delegatedIpv6Prefix'>,
  pools: ServicePools,
): { attribute: string; op: string; value: string }[] {
  const rows: { attribute: string; op: string; value: string }[] = [];
  if (service.staticIpv4) {
    rows.push({ attribute: 'Framed-IP-Address', op: ':=', value: service.staticIpv4 });
  } else if (pools.framedPool) {
    rows.push({ attribute: 'Framed-Pool', op: ':=', value: pools.framedPool });
  }
  if (service.delegatedIpv6Prefix) {
    rows.push({ attribute: 'Delegated-IPv6-Prefix', op: ':=', value: service.delegatedIpv6Prefix });
  } else if (pools.delegatedPrefixPool) {
    rows.push({ attribute: 'Delegated-IPv6-Prefix-Pool', op: ':=', value: pools.delegatedPrefixPool });
  }
  return rows;
}
