import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../../common/pagination';
import { lockForUpdate } from '../../database/lock-for-update';
import { IpAllocation, IpPool } from './ip-pool.entity';

/** How many of a pool's addresses are held and how many cool down after their release. */
export interface PoolCounts {
  allocated: number;
  cooling: number;
}

/** An allocation to make: the address of a pool for a service, at `now`. */
export interface NewAllocation {
  tenantId: string;
  poolId: string;
  address: string;
  serviceId: string;
  now: Date;
}

/** The only place the ip_pools and ip_allocations tables are read and written. */
@Injectable()
export class IpPoolsRepository {
  async insert(manager: EntityManager, pool: IpPool): Promise<void> {
    await manager.insert(IpPool, pool);
  }

  findById(manager: EntityManager, tenantId: string, id: string): Promise<IpPool | null> {
    return manager.findOne(IpPool, { where: { tenantId, id } });
  }

  /** The pools of `ids` (any tenant's: the caller checks). */
  findByIds(manager: EntityManager, ids: string[]): Promise<IpPool[]> {
    const unique = [...new Set(ids)];
    return unique.length === 0 ? Promise.resolve([]) : manager.find(IpPool, { where: { id: In(unique) } });
  }

  /** Every pool of the tenant in one family: a tenant has a handful, read to find the one holding an address. */
  findByFamily(manager: EntityManager, tenantId: string, family: 4 | 6): Promise<IpPool[]> {
    return manager.find(IpPool, { where: { tenantId, family }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Pool creations and network changes of one tenant queue behind each other: two never both pass the overlap check. */
  async lockTenantPools(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`ip-pools:${tenantId}`]);
  }

  /** The pool row-locked: allocations from one pool queue behind each other, so each sees the others' addresses. */
  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<IpPool> {
    return lockForUpdate(manager, IpPool, tenantId, id, 'IP pool');
  }

  async update(manager: EntityManager, pool: IpPool): Promise<void> {
    const changes: Partial<IpPool> = { ...pool };
    for (const fixed of ['tenantId', 'id', 'createdAt'] as const) {
      delete changes[fixed];
    }
    await manager.update(IpPool, { tenantId: pool.tenantId, id: pool.id }, changes);
  }

  /** Deletes the pool and (by the foreign key's cascade) its cooling allocations. */
  async delete(manager: EntityManager, tenantId: string, id: string): Promise<void> {
    await manager.delete(IpPool, { tenantId, id });
  }

  page(manager: EntityManager, tenantId: string, query: PageQueryDto): Promise<Page<IpPool>> {
    const qb = manager
      .getRepository(IpPool)
      .createQueryBuilder('pool')
      .where('pool.tenantId = :tenantId', { tenantId });
    return paginate(qb, query);
  }

  /** A NAS left the registry: its pools name no NAS any more. */
  async clearNas(manager: EntityManager, tenantId: string, nasId: string): Promise<void> {
    await manager.update(IpPool, { tenantId, nasId }, { nasId: null });
  }

  /** The addresses of the pool no one may take at `now`: held, or cooling until later. */
  async unavailable(manager: EntityManager, poolId: string, now: Date): Promise<string[]> {
    const rows: { address: string }[] = await manager.query(
      `SELECT address FROM ip_allocations
        WHERE pool_id = $1 AND (released_at IS NULL OR available_at > $2)`,
      [poolId, now],
    );
    return rows.map((row) => row.address);
  }

  /**
   * Takes the address for the service: a new row, or the row of an address whose cooldown has passed (or that this
   * same service let go of). Answers false when another service holds it or it is still cooling: the primary key
   * decides, so two services never hold one address however their requests interleave.
   */
  async allocate(manager: EntityManager, allocation: NewAllocation): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO ip_allocations (tenant_id, pool_id, address, service_id, allocated_at, released_at, available_at)
       VALUES ($1, $2, $3, $4, $5, NULL, NULL)
       ON CONFLICT (pool_id, address) DO UPDATE
          SET service_id = EXCLUDED.service_id, allocated_at = EXCLUDED.allocated_at, released_at = NULL,
              available_at = NULL
        WHERE ip_allocations.released_at IS NOT NULL
          AND (ip_allocations.available_at <= EXCLUDED.allocated_at
               OR ip_allocations.service_id = EXCLUDED.service_id)
       RETURNING address`,
      [allocation.tenantId, allocation.poolId, allocation.address, allocation.serviceId, allocation.now],
    );
    return rows.length === 1;
  }

  /** Lets go of what the services hold (all of it, or only in `poolId`): each cools down its pool's cooldown from `now`. */
  async release(
    manager: EntityManager,
    tenantId: string,
    serviceIds: string[],
    now: Date,
    poolId?: string,
  ): Promise<void> {
    if (serviceIds.length === 0) {
      return;
    }
    await manager.query(
      `UPDATE ip_allocations a
          SET released_at = $3,
              available_at = $3::timestamptz + make_interval(secs => p.cooldown_s)
         FROM ip_pools p
        WHERE p.tenant_id = a.tenant_id AND p.id = a.pool_id
          AND a.tenant_id = $1 AND a.service_id = ANY($2) AND a.released_at IS NULL
          AND ($4::text IS NULL OR a.pool_id = $4)`,
      [tenantId, serviceIds, now, poolId ?? null],
    );
  }

  /** Held and cooling addresses of each pool of `poolIds` at `now`. */
  async counts(manager: EntityManager, poolIds: string[], now: Date): Promise<Map<string, PoolCounts>> {
    const counts = new Map(poolIds.map((id): [string, PoolCounts] => [id, { allocated: 0, cooling: 0 }]));
    if (poolIds.length === 0) {
      return counts;
    }
    const rows: { pool_id: string; allocated: string; cooling: string }[] = await manager.query(
      `SELECT pool_id,
              count(*) FILTER (WHERE released_at IS NULL) AS allocated,
              count(*) FILTER (WHERE released_at IS NOT NULL AND available_at > $2) AS cooling
         FROM ip_allocations
        WHERE pool_id = ANY($1)
        GROUP BY pool_id`,
      [poolIds, now],
    );
    for (const row of rows) {
      counts.set(row.pool_id, { allocated: Number(row.allocated), cooling: Number(row.cooling) });
    }
    return counts;
  }

  /** Deletes the tenant's pools and allocations (its test clock is deleted). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM ip_allocations WHERE tenant_id = $1', [tenantId]);
    await manager.query('DELETE FROM ip_pools WHERE tenant_id = $1', [tenantId]);
  }

  /** The allocations rows of the tenant's services, for a test's or an operator's look (the service's holdings). */
  findForService(manager: EntityManager, tenantId: string, serviceId: string): Promise<IpAllocation[]> {
    return manager.find(IpAllocation, { where: { tenantId, serviceId } });
  }
}
