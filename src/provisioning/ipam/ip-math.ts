/**
 * IPv4 and IPv6 addresses as BigInt, for the pools' arithmetic (docs/network.md, "IP pools"): parsing, the canonical
 * text (IPv6 as RFC 5952 writes it, which is what FreeRADIUS prints), networks and ranges.
 */
export type Family = 4 | 6;

export const BITS: Record<Family, number> = { 4: 32, 6: 128 };

/** An address: its family and its value. */
export interface Address {
  family: Family;
  value: bigint;
}

/** A network: its first address (host bits zero) and its prefix length. */
export interface Network {
  family: Family;
  base: bigint;
  length: number;
}

/** A closed range of addresses of one family. */
export interface AddressRange {
  family: Family;
  from: bigint;
  to: bigint;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function parseIpv4(text: string): bigint | null {
  const match = IPV4.exec(text);
  if (!match) {
    return null;
  }
  let value = 0n;
  for (const part of match.slice(1)) {
    // No leading zeros: 010 is octal to some parsers and decimal to others.
    if (Number(part) > 255 || String(Number(part)) !== part) {
      return null;
    }
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseGroups(text: string): bigint[] | null {
  if (text === '') {
    return [];
  }
  const groups: bigint[] = [];
  const parts = text.split(':');
  for (const [index, part] of parts.entries()) {
    if (index === parts.length - 1 && part.includes('.')) {
      const v4 = parseIpv4(part);
      if (v4 === null) {
        return null;
      }
      groups.push(v4 >> 16n, v4 & 0xffffn);
    } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
      groups.push(BigInt(`0x${part}`));
    } else {
      return null;
    }
  }
  return groups;
}

function parseIpv6(text: string): bigint | null {
  const halves = text.split('::');
  if (halves.length > 2) {
    return null;
  }
  const head = parseGroups(halves[0]);
  const tail = halves.length === 2 ? parseGroups(halves[1]) : [];
  if (head === null || tail === null) {
    return null;
  }
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || (halves.length === 2 && missing < 1)) {
    return null;
  }
  return [...head, ...Array<bigint>(missing).fill(0n), ...tail].reduce(
    (value, group) => (value << 16n) | group,
    0n,
  );
}

/** An IPv4 (dotted quad) or IPv6 address, or null. */
export function parseAddress(text: string): Address | null {
  if (typeof text !== 'string' || text.length > 45) {
    return null;
  }
  const v4 = parseIpv4(text);
  if (v4 !== null) {
    return { family: 4, value: v4 };
  }
  const v6 = text.includes(':') ? parseIpv6(text) : null;
  return v6 === null ? null : { family: 6, value: v6 };
}

/** The canonical text: IPv4 dotted, IPv6 lower case with the longest run of two or more zero groups as `::`. */
export function formatAddress(family: Family, value: bigint): string {
  if (family === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  }
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => (value >> shift) & 0xffffn);
  let best = { at: -1, length: 0 };
  for (let at = 0; at < 8;) {
    let length = 0;
    while (at + length < 8 && groups[at + length] === 0n) {
      length++;
    }
    if (length > best.length) {
      best = { at, length };
    }
    at += length + 1;
  }
  const hex = groups.map((group) => group.toString(16));
  if (best.length < 2) {
    return hex.join(':');
  }
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.length).join(':')}`;
}

/** The mask of the host bits of a prefix of `length` in `family`. */
export function hostMask(family: Family, length: number): bigint {
  return (1n << BigInt(BITS[family] - length)) - 1n;
}

/** `address/length`; `hostBits` says whether the address had bits set past the prefix (then base drops them). */
export function parseNetwork(text: string): (Network & { hostBits: boolean }) | null {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(typeof text === 'string' ? text : '');
  if (!match) {
    return null;
  }
  const address = parseAddress(match[1]);
  const length = Number(match[2]);
  if (!address || length > BITS[address.family] || String(length) !== match[2]) {
    return null;
  }
  const mask = hostMask(address.family, length);
  return {
    family: address.family,
    base: address.value & ~mask,
    length,
    hostBits: (address.value & mask) !== 0n,
  };
}

export function formatNetwork(network: Network): string {
  return `${formatAddress(network.family, network.base)}/${network.length}`;
}

export function lastOf(network: Network): bigint {
  return network.base | hostMask(network.family, network.length);
}

export function contains(network: Network, address: Address): boolean {
  return (
    address.family === network.family && address.value >= network.base && address.value <= lastOf(network)
  );
}

/**
 * An excluded range as written: one address, `first-last`, or a network. Answers the range and its canonical text
 * (null when it is none of these, or its last address comes before its first).
 */
export function parseRange(text: string): { range: AddressRange; text: string } | null {
  if (typeof text !== 'string') {
    return null;
  }
  if (text.includes('/')) {
    const network = parseNetwork(text);
    return network && !network.hostBits
      ? {
          range: { family: network.family, from: network.base, to: lastOf(network) },
          text: formatNetwork(network),
        }
      : null;
  }
  const [first, last, ...rest] = text.split('-');
  const from = parseAddress(first);
  const to = last === undefined ? from : parseAddress(last);
  if (rest.length > 0 || !from || !to || from.family !== to.family || to.value < from.value) {
    return null;
  }
  const canonical =
    to.value === from.value
      ? formatAddress(from.family, from.value)
      : `${formatAddress(from.family, from.value)}-${formatAddress(to.family, to.value)}`;
  return { range: { family: from.family, from: from.value, to: to.value }, text: canonical };
}

/** Closed intervals sorted and merged (overlapping or adjacent ones become one). */
export function mergeIntervals(intervals: [bigint, bigint][]): [bigint, bigint][] {
  const sorted = [...intervals].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const merged: [bigint, bigint][] = [];
  for (const [from, to] of sorted) {
    const last = merged[merged.length - 1];
    if (last && from <= last[1] + 1n) {
      last[1] = to > last[1] ? to : last[1];
    } else {
      merged.push([from, to]);
    }
  }
  return merged;
}
