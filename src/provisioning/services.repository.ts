import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../common/pagination';
import { recordsetInsert } from '../database/entity-columns';
import { lockForUpdate } from '../database/lock-for-update';
import type { SqlParams } from '../database/sql-params';
import { Service } from './provisioning.entity';
import { PPPOE_USERNAME_PART } from './dto/service-fields';
import type { ServiceStatus } from './service-status';
import type { SearchPlaceholders } from '../subscribers';

export interface ServiceFilter {
  subscriberId?: string;
  statuses?: ServiceStatus[];
  planId?: string;
  pppoeUsername?: string;
}

/**
 * The services table in another module's statement, `services <alias>` after its FROM or JOIN, for the statements
 * that must read services with their own tables in one snapshot: billing's bill run (a service with its billing state,
 * service_billing; which subscribers and tenants have services to bill). They read its tenant_id, id, subscriber_id,
 * plan_id, status, activated_at, terminated_at, created_at and updated_at. Other reads call provisioning's exported
 * services and repositories (docs/architecture.md, "Owns (tables)").
 */
export function servicesTable(alias: string): string {
  return `services ${alias}`;
}

/**
 * Subscribers' search (`GET /subscribers?q=`) by PPPoE username, in subscribers' statement (SubscriberSearchSource,
 * handed in by ProvisioningModule): the subscriber of each of the tenant's live services whose username contains the
 * text, and whether it is the username exactly. Served by ix_services_pppoe_username_trgm. A terminated service's
 * login is freed (another service may take it), so it finds no one. Null for a text no username can contain (a space,
 * any character PPPOE_USERNAME refuses): its index scan would find nothing, and cost a fifth of the search's time.
 */
export function pppoeUsernameSearch(
  { tenant, pattern, exact }: SearchPlaceholders,
  text: string,
): string | null {
  if (!PPPOE_USERNAME_PART.test(text)) {
    return null;
  }
  return (
    `SELECT v.subscriber_id AS id, lower(v.pppoe_username) = ${exact} AS exact FROM services v ` +
    `WHERE v.tenant_id = ${tenant} AND lower(v.pppoe_username) LIKE ${pattern()} AND v.status <> 'terminated'`
  );
}

const INSERT_SERVICES = recordsetInsert(Service, 'services');

/** The only place the services table is read and written (and servicesTable the way others' statements join it). */
@Injectable()
export class ServicesRepository {
  /** insert() as a CTE of a larger statement (ServicesService.createIn), its parameter added to `params`. */
  insertCte(params: SqlParams, service: Service): string {
    const [rows] = INSERT_SERVICES.params([service]);
    return `service_row AS (${INSERT_SERVICES.at(params.add(rows))} RETURNING 1)`;
  }

  async insert(manager: EntityManager, service: Service): Promise<void> {
    await manager.insert(Service, service);
  }

  findById(manager: EntityManager, tenantId: string, id: string): Promise<Service | null> {
    return manager.findOne(Service, { where: { tenantId, id } });
  }

  /** The services of `ids` (any tenant's: the caller checks). */
  findByIds(manager: EntityManager, ids: string[]): Promise<Service[]> {
    return manager.find(Service, { where: { id: In(ids) } });
  }

  /** The services of `ids`, locked in id order (any tenant's: the caller checks). */
  lockForUpdateMany(manager: EntityManager, ids: string[]): Promise<Service[]> {
    return manager
      .getRepository(Service)
      .createQueryBuilder('service')
      .setLock('pessimistic_write')
      .where('service.id = ANY(:ids)', { ids })
      .orderBy('service.id')
      .getMany();
  }

  /** A subscriber's services, locked in id order (automation brings them in line with the subscriber). */
  lockForSubscriber(manager: EntityManager, tenantId: string, subscriberId: string): Promise<Service[]> {
    return manager
      .getRepository(Service)
      .createQueryBuilder('service')
      .setLock('pessimistic_write')
      .where('service.tenantId = :tenantId AND service.subscriberId = :subscriberId', {
        tenantId,
        subscriberId,
      })
      .orderBy('service.id')
      .getMany();
  }

  /** The tenant's service imported as `externalId`, row-locked until the transaction ends (or null). */
  lockByExternalId(manager: EntityManager, tenantId: string, externalId: string): Promise<Service | null> {
    return manager.findOne(Service, { where: { tenantId, externalId }, lock: { mode: 'pessimistic_write' } });
  }

  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<Service> {
    return lockForUpdate(manager, Service, tenantId, id, 'service');
  }

  async update(manager: EntityManager, service: Service): Promise<void> {
    const changes: Partial<Service> = { ...service };
    for (const fixed of ['tenantId', 'id', 'subscriberId', 'createdAt'] as const) {
      delete changes[fixed];
    }
    await manager.update(Service, { tenantId: service.tenantId, id: service.id }, changes);
  }

  /** Writes what the provisioning worker moves (status, plan, activation and termination times) for many services. */
  async updateMany(manager: EntityManager, services: Service[]): Promise<void> {
    if (services.length === 0) {
      return;
    }
    await manager.query(
      `UPDATE services s
          SET status = x.status, plan_id = x.plan_id, activated_at = x.activated_at, terminated_at = x.terminated_at,
              updated_at = x.updated_at, cap_state = x.cap_state
         FROM jsonb_to_recordset($1::jsonb) AS x(tenant_id text, id text, status text, plan_id text,
              activated_at timestamptz, terminated_at timestamptz, updated_at timestamptz, cap_state text)
        WHERE s.tenant_id = x.tenant_id AND s.id = x.id`,
      [
        JSON.stringify(
          services.map((service) => ({
            tenant_id: service.tenantId,
            id: service.id,
            status: service.status,
            plan_id: service.planId,
            activated_at: service.activatedAt,
            terminated_at: service.terminatedAt,
            updated_at: service.updatedAt,
            cap_state: service.capState,
          })),
        ),
      ],
    );
  }

  page(
    manager: EntityManager,
    tenantId: string,
    filter: ServiceFilter,
    query: PageQueryDto,
  ): Promise<Page<Service>> {
    const qb = manager
      .getRepository(Service)
      .createQueryBuilder('service')
      .where('service.tenantId = :tenantId', { tenantId });
    if (filter.subscriberId !== undefined) {
      qb.andWhere('service.subscriberId = :subscriberId', { subscriberId: filter.subscriberId });
    }
    if (filter.statuses !== undefined) {
      qb.andWhere('service.status IN (:...statuses)', { statuses: filter.statuses });
    }
    if (filter.planId !== undefined) {
      qb.andWhere('service.planId = :planId', { planId: filter.planId });
    }
    if (filter.pppoeUsername !== undefined) {
      qb.andWhere('service.pppoeUsername = :username', { username: filter.pppoeUsername });
    }
    return paginate(qb, query);
  }

  /** How many of the tenant's services that are not terminated are linked to the pool (IPv4 or IPv6). */
  countLiveInPool(manager: EntityManager, tenantId: string, poolId: string): Promise<number> {
    return manager
      .getRepository(Service)
      .createQueryBuilder('service')
      .where('service.tenantId = :tenantId AND service.status <> :terminated', {
        tenantId,
        terminated: 'terminated',
      })
      .andWhere('(service.ipPoolId = :poolId OR service.ipv6PoolId = :poolId)', { poolId })
      .getCount();
  }

  /**
   * The tenant's services that are not terminated and hold a static IPv4 address of no pool, locked in id order: a new
   * pool adopts those inside its network.
   */
  lockUnpooledStaticIpv4(manager: EntityManager, tenantId: string): Promise<Service[]> {
    return manager
      .getRepository(Service)
      .createQueryBuilder('service')
      .setLock('pessimistic_write')
      .where('service.tenantId = :tenantId AND service.status <> :terminated', {
        tenantId,
        terminated: 'terminated',
      })
      .andWhere('service.staticIpv4 IS NOT NULL AND service.ipPoolId IS NULL')
      .orderBy('service.id')
      .getMany();
  }

  /** The RADIUS usernames of every service the tenant has had. */
  async radiusUsernames(manager: EntityManager, tenantId: string): Promise<string[]> {
    const rows: { radius_username: string }[] = await manager.query(
      'SELECT DISTINCT radius_username FROM services WHERE tenant_id = $1',
      [tenantId],
    );
    return rows.map((row) => row.radius_username);
  }

  /** Deletes every services row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM services WHERE tenant_id = $1', [tenantId]);
  }
}
