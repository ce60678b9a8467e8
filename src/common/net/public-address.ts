import { BlockList, isIP } from 'node:net';
import * as dns from 'node:dns';

/*
 * The addresses a tenant may not make this server connect to: a webhook's callback (src/webhooks/callback-address.ts)
 * and a tenant's own mail server (src/gateway/tenants/tenant-mail-settings.ts). Shared, so both refuse the same list.
 */

/** Where a tenant may never point this server: private, loopback, link-local, CGNAT, multicast, documentation and reserved. */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ['2002::', 16], // 6to4 embeds an IPv4 address, private ones included
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48], // local-use NAT64
  ['fec0::', 10], // deprecated site-local
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

export function isForbiddenAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) {
    return FORBIDDEN.check(mapped[1], 'ipv4');
  }
  const family = isIP(address);
  if (family === 0) {
    return true;
  }
  return FORBIDDEN.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class ForbiddenAddressError extends Error {}

/** Resolves a host the way a connection would, and refuses it when any address it has is forbidden. */
export async function assertPublicHost(host: string): Promise<void> {
  const addresses = isIP(host) ? [{ address: host }] : await dns.promises.lookup(host, { all: true });
  const forbidden = addresses.find(({ address }) => isForbiddenAddress(address));
  if (forbidden) {
    throw new ForbiddenAddressError(
      `${host} resolves to ${forbidden.address}, a private or reserved address`,
    );
  }
}
