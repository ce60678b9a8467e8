import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../../common/clock';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { isUniqueViolation } from '../../common/errors/postgres-errors';
import { assertIfMatch } from '../../common/http/etag';
import { newId } from '../../common/ids';
import type { AuthContext } from '../../common/request-context';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService, type NewEvent } from '../../events';
import { CreateIpPoolDto, IpPoolDto, ListIpPoolsQueryDto, UpdateIpPoolDto } from '../dto/ip-pool.dto';
import { ServiceDto } from '../dto/service.dto';
import { NasRepository } from '../nas.repository';
import { ServicesRepository } from '../services.repository';
import { contains, formatNetwork, parseAddress, parseNetwork } from './ip-math';
import { IpPool, type PoolKind } from './ip-pool.entity';
import { IpPoolsRepository } from './ip-pools.repository';
import { delegatedLength, overlaps, poolExcluded, poolGateway, poolNetwork } from './pool-rules';
import { PoolSpace } from './pool-space';

function writeError(error: unknown): ApiError | null {
  return isUniqueViolation(error, 'uq_ip_pools_name')
    ? new ApiError('duplicate_ip_pool', 'An IP pool with this name exists in the tenant.', 'name')
    : null;
}

/**
 * IP pools (docs/network.md, "IP pools"): a tenant's networks, never overlapping, each answered with its utilisation.
 * A new static IPv4 pool adopts the static addresses live services already hold inside it, so an address of a pool is
 * always held through it.
 */
@Injectable()
export class IpPoolsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly pools: IpPoolsRepository,
    private readonly services: ServicesRepository,
    private readonly nas: NasRepository,
    private readonly clock: Clock,
  ) {}

  async create(auth: AuthContext, dto: CreateIpPoolDto): Promise<IpPoolDto> {
    const network = poolNetwork(dto.cidr);
    const now = this.clock.now();
    const pool = Object.assign(new IpPool(), {
      tenantId: auth.tenantId,
      id: newId('ipp', now),
      name: dto.name,
      family: network.family,
      cidr: formatNetwork(network),
      gateway: poolGateway(network, dto.gateway),
      excluded: poolExcluded(network, dto.excluded),
      kind: dto.kind as PoolKind,
      delegatedPrefixLength: delegatedLength(network, dto.delegated_prefix_length),
      nasId: dto.nas_id ?? null,
      cooldownS: dto.cooldown_s,
      createdAt: now,
      updatedAt: now,
    });
    try {
      return await this.transactionRunner.run(auth, async (tx) => {
        await this.assertNas(tx.manager, auth.tenantId, pool.nasId);
        await this.pools.lockTenantPools(tx.manager, auth.tenantId);
        const other = (await this.pools.findByFamily(tx.manager, auth.tenantId, pool.family)).find(
          (existing) => overlaps(network, parseNetwork(existing.cidr)!),
        );
        if (other) {
          throw new ApiError(
            'pool_overlap',
            `${pool.cidr} overlaps pool ${other.name} (${other.cidr}) of the tenant.`,
            'cidr',
          );
        }
        await this.pools.insert(tx.manager, pool);
        await this.adopt(tx, pool);
        return this.emit(tx, pool, 'ip_pool.created');
      });
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }

  async get(tenantId: string, id: string): Promise<IpPoolDto> {
    const pool = await this.pools.findById(this.dataSource.manager, tenantId, id);
    if (!pool) {
      throw ApiError.notFound('IP pool', id);
    }
    return this.answer(this.dataSource.manager, pool);
  }

  async list(tenantId: string, query: ListIpPoolsQueryDto): Promise<Page<IpPoolDto>> {
    const { manager } = this.dataSource;
    const page = await this.pools.page(manager, tenantId, query);
    const counts = await this.pools.counts(
      manager,
      page.items.map((pool) => pool.id),
      this.clock.now(),
    );
    return page.map((pool) => IpPoolDto.from(pool, new PoolSpace(pool).size, counts.get(pool.id)!));
  }

  async update(auth: AuthContext, id: string, dto: UpdateIpPoolDto): Promise<IpPoolDto> {
    try {
      return await this.transactionRunner.run(auth, async (tx) => {
        const pool = await this.pools.lockForUpdate(tx.manager, auth.tenantId, id);
        await assertIfMatch(() => this.answer(tx.manager, pool));
        const network = parseNetwork(pool.cidr)!;
        const next = {
          name: dto.name ?? pool.name,
          excluded: dto.excluded === undefined ? pool.excluded : poolExcluded(network, dto.excluded),
          nasId: dto.nas_id === undefined ? pool.nasId : dto.nas_id,
          cooldownS: dto.cooldown_s ?? pool.cooldownS,
        };
        const changed = (
          [
            ['name', next.name !== pool.name],
            ['excluded', next.excluded.join(',') !== pool.excluded.join(',')],
            ['nas_id', next.nasId !== pool.nasId],
            ['cooldown_s', next.cooldownS !== pool.cooldownS],
          ] as const
        ).flatMap(([field, differs]) => (differs ? [field] : []));
        if (changed.length === 0) {
          return this.answer(tx.manager, pool);
        }
        if (changed.includes('nas_id')) {
          await this.assertNas(tx.manager, auth.tenantId, next.nasId);
        }
        // A dynamic pool's name is in its services' RADIUS rows (Framed-Pool): renamed, they would name a pool the
        // NAS no longer has.
        if (changed.includes('name') && pool.kind === 'dynamic') {
          await this.assertUnused(tx.manager, pool, 'renamed while services are linked to it');
        }
        Object.assign(pool, next, { updatedAt: this.clock.now() });
        await this.pools.update(tx.manager, pool);
        return this.emit(tx, pool, 'ip_pool.updated', { changed_fields: changed });
      });
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }

  /** Refused (409 pool_in_use) while a service holds an address of it or a live service is linked to it. */
  remove(auth: AuthContext, id: string): Promise<IpPoolDto> {
    return this.transactionRunner.run(auth, async (tx) => {
      const pool = await this.pools.lockForUpdate(tx.manager, auth.tenantId, id);
      await assertIfMatch(() => this.answer(tx.manager, pool));
      await this.assertUnused(
        tx.manager,
        pool,
        'deleted while services hold its addresses or are linked to it',
      );
      const answer = await this.answer(tx.manager, pool);
      await this.pools.delete(tx.manager, auth.tenantId, id);
      await this.events.append(tx, {
        tenantId: pool.tenantId,
        type: 'ip_pool.deleted',
        subjectId: pool.id,
        object: answer,
      });
      return answer;
    });
  }

  private async assertUnused(manager: EntityManager, pool: IpPool, what: string): Promise<void> {
    const held = (await this.pools.counts(manager, [pool.id], this.clock.now())).get(pool.id)!.allocated;
    const linked = await this.services.countLiveInPool(manager, pool.tenantId, pool.id);
    if (held > 0 || linked > 0) {
      throw new ApiError(
        'pool_in_use',
        `Pool ${pool.id} cannot be ${what}: ${held} address(es) held, ${linked} live service(s) linked.`,
      );
    }
  }

  private async assertNas(manager: EntityManager, tenantId: string, nasId: string | null): Promise<void> {
    if (nasId !== null && !(await this.nas.findById(manager, tenantId, nasId))) {
      throw new ApiError('invalid_reference', `No NAS ${nasId} exists.`, 'nas_id');
    }
  }

  /**
   * A static IPv4 pool takes over the static addresses live services hold inside it (given before the pool existed):
   * each becomes an allocation of the pool and the service names the pool (service.updated).
   */
  private async adopt(tx: Tx, pool: IpPool): Promise<void> {
    if (pool.kind !== 'static' || pool.family !== 4) {
      return;
    }
    const network = parseNetwork(pool.cidr)!;
    const now = this.clock.now();
    const events: NewEvent[] = [];
    for (const service of await this.services.lockUnpooledStaticIpv4(tx.manager, pool.tenantId)) {
      const address = parseAddress(service.staticIpv4!);
      if (!address || !contains(network, address)) {
        continue;
      }
      await this.pools.allocate(tx.manager, {
        tenantId: pool.tenantId,
        poolId: pool.id,
        address: service.staticIpv4!,
        serviceId: service.id,
        now,
      });
      Object.assign(service, { ipPoolId: pool.id, updatedAt: now });
      await this.services.update(tx.manager, service);
      events.push({
        tenantId: pool.tenantId,
        type: 'service.updated',
        subjectId: service.id,
        object: ServiceDto.from(service),
        details: { changed_fields: ['ip_pool_id'] },
      });
    }
    await this.events.appendMany(tx, events);
  }

  private async answer(manager: EntityManager, pool: IpPool): Promise<IpPoolDto> {
    const counts = await this.pools.counts(manager, [pool.id], this.clock.now());
    return IpPoolDto.from(pool, new PoolSpace(pool).size, counts.get(pool.id)!);
  }

  private async emit(
    tx: Tx,
    pool: IpPool,
    type: 'ip_pool.created' | 'ip_pool.updated',
    details?: Record<string, unknown>,
  ): Promise<IpPoolDto> {
    const answer = await this.answer(tx.manager, pool);
    await this.events.append(tx, {
      tenantId: pool.tenantId,
      type,
      subjectId: pool.id,
      object: answer,
      details,
    });
    return answer;
  }
}
