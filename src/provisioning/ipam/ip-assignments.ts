import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import type { Tx } from '../../database/transaction-runner';
import type { Service } from '../provisioning.entity';
import { ServiceLifecycle } from '../service-lifecycle';
import { type Family, parseAddress, parseNetwork, contains } from './ip-math';
import type { IpPool } from './ip-pool.entity';
import { IpPoolsRepository } from './ip-pools.repository';
import { PoolSpace } from './pool-space';

/** The addressing fields of a service's create or PATCH (absent: unchanged; null: cleared). */
export interface AddressingRequest {
  ip_pool_id?: string | null;
  static_ipv4?: string | null;
  ipv6_pool_id?: string | null;
  delegated_ipv6_prefix?: string | null;
}

/** One family's fields of a service: its pool, and the address (IPv4) or delegated prefix (IPv6) it holds. */
interface Holding {
  poolId: string | null;
  address: string | null;
}

/** Where a family's fields live: on the service, and in the request. */
const FIELDS = {
  4: { pool: 'ip_pool_id', address: 'static_ipv4', poolKey: 'ipPoolId', addressKey: 'staticIpv4' },
  6: {
    pool: 'ipv6_pool_id',
    address: 'delegated_ipv6_prefix',
    poolKey: 'ipv6PoolId',
    addressKey: 'delegatedIpv6Prefix',
  },
} as const;

/** Tries at the next free address before a pool is called exhausted (a cooled row can refuse a candidate). */
const ATTEMPTS = 5;

/**
 * A service's addresses from the tenant's pools (docs/network.md, "IP pools"): the next free address of a static pool
 * or the one named, a delegated IPv6 prefix likewise, or a dynamic pool the NAS picks from. Each allocation is taken
 * with its pool row locked, and the allocations' primary key keeps two services from one address whatever happens.
 * What a service lets go of cools down before it is handed out again: when it takes another, and when it is
 * terminated (ServiceLifecycle's ended hook).
 */
@Injectable()
export class IpAssignments implements OnModuleInit {
  constructor(
    private readonly pools: IpPoolsRepository,
    private readonly lifecycle: ServiceLifecycle,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.lifecycle.onEnded((tx, tenantId, serviceIds) =>
      this.pools.release(tx.manager, tenantId, serviceIds, this.clock.now()),
    );
  }

  /**
   * Brings the service's addressing to what the request asks, in the caller's transaction (the service row locked, or
   * not yet inserted): allocates, releases, and sets the service's fields. Answers the fields that changed.
   */
  async assign(tx: Tx, service: Service, request: AddressingRequest): Promise<string[]> {
    const changed: string[] = [];
    for (const family of [4, 6] as const) {
      const fields = FIELDS[family];
      const poolId = request[fields.pool];
      const address = request[fields.address];
      if (poolId === undefined && address === undefined) {
        continue;
      }
      const current: Holding = { poolId: service[fields.poolKey], address: service[fields.addressKey] };
      const target = await this.target(tx, service, family, current, poolId, address);
      if (target.poolId === current.poolId && target.address === current.address) {
        continue;
      }
      const now = this.clock.now();
      if (current.poolId !== null && current.address !== null) {
        await this.pools.release(tx.manager, service.tenantId, [service.id], now, current.poolId);
      }
      const held = target.pool
        ? await this.allocate(tx, service, family, target.pool, target.address)
        : target;
      if (held.poolId !== current.poolId) {
        changed.push(fields.pool);
      }
      if (held.address !== current.address) {
        changed.push(fields.address);
      }
      service[fields.poolKey] = held.poolId;
      service[fields.addressKey] = held.address;
    }
    return changed;
  }

  /**
   * What the service is to hold in `family`: a static pool to allocate from (an address named, or null for the next
   * free one), a dynamic pool, a literal static IPv4 address of no pool, or nothing.
   */
  private async target(
    tx: Tx,
    service: Service,
    family: Family,
    current: Holding,
    poolId: string | null | undefined,
    address: string | null | undefined,
  ): Promise<Holding & { pool?: IpPool }> {
    const fields = FIELDS[family];
    if (poolId !== undefined && poolId !== null) {
      const pool = await this.poolNamed(tx, service.tenantId, family, poolId);
      if (pool.kind === 'dynamic') {
        if (address !== undefined && address !== null) {
          throw new ApiError(
            'validation_failed',
            `Pool ${pool.name} is dynamic: the NAS gives its addresses; leave ${fields.address} out.`,
            fields.address,
          );
        }
        return { poolId: pool.id, address: null };
      }
      // The same pool and no address named: what the service holds of it stays.
      const keep = address === undefined && current.poolId === pool.id && current.address !== null;
      return keep ? current : { poolId: pool.id, address: address ?? null, pool };
    }
    if (address !== undefined && address !== null) {
      const pool = await this.poolHolding(tx, service.tenantId, family, address);
      if (pool?.kind === 'dynamic') {
        throw new ApiError(
          'address_not_assignable',
          `${address} is inside dynamic pool ${pool.name}, whose addresses the NAS gives.`,
          fields.address,
        );
      }
      if (pool) {
        return { poolId: pool.id, address, pool };
      }
      if (family === 6) {
        throw new ApiError(
          'address_not_assignable',
          `${address} is inside none of the tenant's IPv6 pools: a delegated prefix comes from one.`,
          fields.address,
        );
      }
      return { poolId: null, address };
    }
    // Cleared: the address (a dynamic pool stays unless it is cleared itself), or the pool and its address.
    return poolId === null
      ? { poolId: null, address: null }
      : { poolId: current.address === null ? current.poolId : null, address: null };
  }

  /** Allocates the named address of a static pool, or its next free one; answers what the service now holds. */
  private async allocate(
    tx: Tx,
    service: Service,
    family: Family,
    pool: IpPool,
    named: string | null,
  ): Promise<Holding> {
    const fields = FIELDS[family];
    const locked = await this.pools.lockForUpdate(tx.manager, pool.tenantId, pool.id);
    const space = new PoolSpace(locked);
    const now = this.clock.now();
    const take = (address: string) =>
      this.pools.allocate(tx.manager, {
        tenantId: service.tenantId,
        poolId: pool.id,
        address,
        serviceId: service.id,
        now,
      });
    if (named !== null) {
      const found = space.unitNamed(named);
      if ('problem' in found) {
        throw new ApiError('address_not_assignable', `${fields.address} ${found.problem}.`, fields.address);
      }
      if (space.isBlocked(found.unit)) {
        throw new ApiError(
          'address_not_assignable',
          `${space.textOf(found.unit)} is excluded from pool ${pool.name} (or is its gateway, network or broadcast address).`,
          fields.address,
        );
      }
      const address = space.textOf(found.unit);
      if (!(await take(address))) {
        throw new ApiError(
          'address_in_use',
          `${address} of pool ${pool.name} is held by another service or cooling down after its release.`,
          fields.address,
        );
      }
      return { poolId: pool.id, address };
    }
    const taken = (await this.pools.unavailable(tx.manager, pool.id, now)).flatMap((text) => {
      const found = space.unitNamed(text);
      return 'unit' in found ? [found.unit] : [];
    });
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const unit = space.firstFree(taken);
      if (unit === null) {
        break;
      }
      const address = space.textOf(unit);
      if (await take(address)) {
        return { poolId: pool.id, address };
      }
      taken.push(unit);
    }
    throw new ApiError('pool_exhausted', `Pool ${pool.name} has no free address left.`, fields.pool);
  }

  /** The tenant's pool of this id and family; 422 on the field otherwise. */
  private async poolNamed(tx: Tx, tenantId: string, family: Family, id: string): Promise<IpPool> {
    const field = FIELDS[family].pool;
    const pool = await this.pools.findById(tx.manager, tenantId, id);
    if (!pool) {
      throw new ApiError('invalid_reference', `No IP pool ${id} exists.`, field);
    }
    if (pool.family !== family) {
      throw new ApiError(
        'validation_failed',
        `Pool ${pool.name} is an IPv${pool.family} pool; ${field} takes an IPv${family} one.`,
        field,
      );
    }
    return pool;
  }

  /** The tenant's pool whose network holds the address (IPv4) or prefix (IPv6), or null. */
  private async poolHolding(tx: Tx, tenantId: string, family: Family, text: string): Promise<IpPool | null> {
    const value = family === 4 ? parseAddress(text) : parseNetwork(text);
    if (!value) {
      return null;
    }
    const address = { family, value: 'base' in value ? value.base : value.value };
    const pools = await this.pools.findByFamily(tx.manager, tenantId, family);
    return pools.find((pool) => contains(parseNetwork(pool.cidr)!, address)) ?? null;
  }
}
