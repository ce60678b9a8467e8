import { ApiError } from '../../common/errors/api-error';
import {
  contains,
  type Family,
  formatAddress,
  formatNetwork,
  lastOf,
  type Network,
  parseAddress,
  parseNetwork,
  parseRange,
} from './ip-math';

/** The shortest IPv4 pool: a /8 holds 16 million addresses, more than any access network gives out. */
export const MIN_IPV4_LENGTH = 8;
/** At most 2^48 delegated prefixes in a pool: the count stays an exact JSON number. */
const MAX_UNIT_BITS = 48;

const invalid = (field: string, message: string) => new ApiError('validation_failed', message, field);

/** The network of a new pool, canonical; 422 on `cidr` for host bits or a size the API does not keep. */
export function poolNetwork(cidr: string): Network {
  const network = parseNetwork(cidr);
  if (!network) {
    throw invalid('cidr', 'cidr must be an IPv4 or IPv6 network, e.g. 198.51.100.0/24');
  }
  if (network.hostBits) {
    throw invalid('cidr', `cidr has host bits set: the network is ${formatNetwork(network)}`);
  }
  if (network.family === 4 && network.length < MIN_IPV4_LENGTH) {
    throw invalid('cidr', `an IPv4 pool must be a /${MIN_IPV4_LENGTH} or longer`);
  }
  if (network.family === 6 && network.length > 64) {
    throw invalid('cidr', 'an IPv6 pool delegates /48 to /64 prefixes: its network must be a /64 or shorter');
  }
  return network;
}

/** An IPv6 pool's delegated prefix length (default /56, or /64 for a longer pool); null for IPv4. */
export function delegatedLength(network: Network, requested: number | null | undefined): number | null {
  if (network.family === 4) {
    if (requested !== undefined && requested !== null) {
      throw invalid('delegated_prefix_length', 'delegated_prefix_length applies to IPv6 pools only');
    }
    return null;
  }
  const length = requested ?? (network.length <= 56 ? 56 : 64);
  if (length < network.length) {
    throw invalid(
      'delegated_prefix_length',
      `delegated_prefix_length /${length} is shorter than the pool's /${network.length}`,
    );
  }
  if (length - network.length > MAX_UNIT_BITS) {
    throw invalid('cidr', `the pool would hold more than 2^${MAX_UNIT_BITS} prefixes: use a longer network`);
  }
  return length;
}

/** The gateway, canonical: an address of the pool's network. */
export function poolGateway(network: Network, gateway: string | null | undefined): string | null {
  if (gateway === undefined || gateway === null) {
    return null;
  }
  const address = parseAddress(gateway);
  if (!address || !contains(network, address)) {
    throw invalid('gateway', `gateway must be an address inside ${formatNetwork(network)}`);
  }
  return formatAddress(address.family, address.value);
}

/** The excluded ranges, canonical, each of the pool's family and inside its network. */
export function poolExcluded(network: Network, excluded: string[] | undefined): string[] {
  return (excluded ?? []).map((text, index) => {
    const parsed = parseRange(text);
    if (!parsed) {
      throw invalid('excluded', `excluded.${index} must be an address, a range first-last or a network`);
    }
    const { range } = parsed;
    if (range.family !== network.family || range.from < network.base || range.to > lastOf(network)) {
      throw invalid('excluded', `excluded.${index} (${parsed.text}) is not inside ${formatNetwork(network)}`);
    }
    return parsed.text;
  });
}

/** Whether two networks of one family share an address. */
export function overlaps(a: Network, b: Network): boolean {
  return a.family === b.family && a.base <= lastOf(b) && b.base <= lastOf(a);
}

export function familyOf(cidr: string): Family {
  return parseNetwork(cidr)?.family ?? 4;
}
