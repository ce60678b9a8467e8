import {
  type Address,
  BITS,
  contains,
  formatAddress,
  formatNetwork,
  hostMask,
  mergeIntervals,
  type Network,
  parseAddress,
  parseNetwork,
  parseRange,
} from './ip-math';

/** What a pool is made of, as stored. */
export interface PoolShape {
  cidr: string;
  gateway: string | null;
  excluded: string[];
  /** IPv6: the length of the prefixes it delegates; IPv4: null (it hands out single addresses). */
  delegatedPrefixLength: number | null;
}

/**
 * A pool's units, numbered from 0: its addresses (IPv4) or its delegated prefixes (IPv6, each of
 * `delegatedPrefixLength`), and which of them may never be handed out: the excluded ranges, the gateway, and an IPv4
 * network's own and broadcast addresses (from /30 up; a /31 or /32 has none).
 */
export class PoolSpace {
  readonly network: Network;
  /** How many units the network holds. */
  readonly units: bigint;
  /** The units never handed out, merged and sorted. */
  readonly blocked: [bigint, bigint][];
  private readonly shift: bigint;

  constructor(shape: PoolShape) {
    const network = parseNetwork(shape.cidr);
    if (!network) {
      throw new Error(`not a network: ${shape.cidr}`);
    }
    this.network = network;
    const unitLength = network.family === 4 ? 32 : (shape.delegatedPrefixLength ?? 64);
    this.shift = BigInt(BITS[network.family] - unitLength);
    this.units = 1n << BigInt(unitLength - network.length);
    const blocked: [bigint, bigint][] = [];
    if (network.family === 4 && network.length <= 30) {
      blocked.push([0n, 0n], [this.units - 1n, this.units - 1n]);
    }
    const gateway = shape.gateway === null ? null : parseAddress(shape.gateway);
    if (gateway && contains(network, gateway)) {
      const unit = this.unitOf(gateway.value);
      blocked.push([unit, unit]);
    }
    for (const text of shape.excluded) {
      const range = parseRange(text)?.range;
      if (range && range.family === network.family) {
        const from = range.from > network.base ? range.from : network.base;
        const last = network.base | hostMask(network.family, network.length);
        const to = range.to < last ? range.to : last;
        if (from <= to) {
          blocked.push([this.unitOf(from), this.unitOf(to)]);
        }
      }
    }
    this.blocked = mergeIntervals(blocked);
  }

  get family() {
    return this.network.family;
  }

  /** The units that may be handed out. */
  get size(): bigint {
    return this.blocked.reduce((size, [from, to]) => size - (to - from + 1n), this.units);
  }

  /** The unit holding this address of the network. */
  unitOf(value: bigint): bigint {
    return (value - this.network.base) >> this.shift;
  }

  /** A unit's text: the address (IPv4) or the delegated prefix (IPv6, `x::/56`). */
  textOf(unit: bigint): string {
    const value = this.network.base + (unit << this.shift);
    return this.family === 4
      ? formatAddress(4, value)
      : formatNetwork({ family: 6, base: value, length: BITS[6] - Number(this.shift) });
  }

  /**
   * The unit a named address or prefix is, or why it cannot be one: outside the network, or (IPv6) not a prefix of
   * the delegated length.
   */
  unitNamed(text: string): { unit: bigint } | { problem: string } {
    const length = BITS[this.family] - Number(this.shift);
    let value: Address | null;
    if (this.family === 6) {
      const prefix = parseNetwork(text);
      if (!prefix || prefix.family !== 6 || prefix.length !== length || prefix.hostBits) {
        return { problem: `must be a /${length} prefix of ${formatNetwork(this.network)}` };
      }
      value = { family: 6, value: prefix.base };
    } else {
      value = parseAddress(text);
    }
    if (!value || !contains(this.network, value)) {
      return { problem: `is not inside ${formatNetwork(this.network)}` };
    }
    return { unit: this.unitOf(value.value) };
  }

  isBlocked(unit: bigint): boolean {
    return this.blocked.some(([from, to]) => unit >= from && unit <= to);
  }

  /** The lowest unit neither blocked nor taken, or null when the pool is full. */
  firstFree(taken: bigint[]): bigint | null {
    let candidate = 0n;
    for (const [from, to] of mergeIntervals([
      ...this.blocked,
      ...taken.map((unit): [bigint, bigint] => [unit, unit]),
    ])) {
      if (from > candidate) {
        break;
      }
      candidate = to + 1n > candidate ? to + 1n : candidate;
    }
    return candidate < this.units ? candidate : null;
  }
}
