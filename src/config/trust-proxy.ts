import { isIP } from 'node:net';

/** What Express may trust to report the client address: nothing, a count of hops, or these addresses/subnets. */
export type TrustProxy = false | number | string[];

/** Express' (proxy-addr's) named ranges. */
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

const INSTEAD =
  'Write the hop count of the proxies in front of the service (TRUST_PROXY=1 behind one load balancer) or their ' +
  'addresses/subnets (TRUST_PROXY=10.0.0.0/8,fd00::/8; loopback, linklocal and uniquelocal are also accepted)';

/** Why an address or subnet entry is wrong, or null when it is a valid IPv4/IPv6 address, CIDR or named range. */
function entryProblem(entry: string): string | null {
  if (NAMED_RANGES.includes(entry)) {
    return null;
  }
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0) {
    return `holds "${entry}", not an IP address, a subnet or one of ${NAMED_RANGES.join(', ')}`;
  }
  if (prefix === undefined) {
    return null;
  }
  const bits = family === 4 ? 32 : 128;
  if (rest.length > 0 || !/^\d{1,3}$/.test(prefix) || Number(prefix) > bits) {
    return `holds "${entry}", whose prefix length must be 0 to ${bits} for IPv${family}`;
  }
  return null;
}

/**
 * Reads TRUST_PROXY. Returns the value for Express' `trust proxy`, or the reason it is refused. `true` is refused:
 * Express would then take the left-most X-Forwarded-For entry, which the client writes.
 */
export function parseTrustProxy(raw: string | undefined): TrustProxy | { problem: string } {
  const value = raw?.trim() ?? '';
  if (value === '' || value.toLowerCase() === 'false' || value === '0') {
    return false;
  }
  if (['true', 'yes', 'on'].includes(value.toLowerCase())) {
    return {
      problem:
        'may not be true: a client could spoof its address (and get another address blocked, or dodge its own ' +
        `block) by sending X-Forwarded-For. ${INSTEAD}.`,
    };
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 32) {
      return { problem: `must be a hop count of at most 32, got ${value}. ${INSTEAD}.` };
    }
    return hops;
  }
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const problem = entry === '' ? 'holds an empty entry' : entryProblem(entry);
    if (problem) {
      return { problem: `${problem}, got "${value}". ${INSTEAD}.` };
    }
  }
  return entries;
}
