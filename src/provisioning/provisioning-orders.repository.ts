import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../common/pagination';
import { lockForUpdate } from '../database/lock-for-update';
import { ProvisioningOrder } from './provisioning.entity';
import { OPEN_ORDER_STATUSES, type OrderAction, type OrderStatus } from './service-status';

export interface OrderFilter {
  serviceId?: string;
  subscriberId?: string;
  status?: OrderStatus;
  action?: OrderAction;
}

/** The only place the provisioning_orders table is read and written. */
@Injectable()
export class ProvisioningOrdersRepository {
  async insert(manager: EntityManager, order: ProvisioningOrder): Promise<void> {
    await manager.insert(ProvisioningOrder, order);
  }

  findById(manager: EntityManager, tenantId: string, id: string): Promise<ProvisioningOrder | null> {
    return manager.findOne(ProvisioningOrder, { where: { tenantId, id } });
  }

  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<ProvisioningOrder> {
    return lockForUpdate(manager, ProvisioningOrder, tenantId, id, 'provisioning order');
  }

  hasOpen(manager: EntityManager, tenantId: string, serviceId: string): Promise<boolean> {
    return manager
      .getRepository(ProvisioningOrder)
      .createQueryBuilder('o')
      .where('o.tenantId = :tenantId AND o.serviceId = :serviceId', { tenantId, serviceId })
      .andWhere('o.status IN (:...open)', { open: OPEN_ORDER_STATUSES })
      .getExists();
  }

  /** The order, while the claim `leaseId` holds it (unlocked: the driver runs outside any transaction). */
  findClaimed(manager: EntityManager, id: string, leaseId: string): Promise<ProvisioningOrder | null> {
    return manager.findOne(ProvisioningOrder, { where: { id, leaseId } });
  }

  /** The order, row-locked, only while the claim `leaseId` still holds it (else another worker has taken it over). */
  lockClaimed(manager: EntityManager, id: string, leaseId: string): Promise<ProvisioningOrder | null> {
    return manager.findOne(ProvisioningOrder, {
      where: { id, leaseId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async update(manager: EntityManager, order: ProvisioningOrder): Promise<void> {
    const changes: Partial<ProvisioningOrder> = { ...order };
    for (const fixed of ['tenantId', 'id', 'serviceId', 'subscriberId', 'createdAt'] as const) {
      delete changes[fixed];
    }
    await manager.update(ProvisioningOrder, { tenantId: order.tenantId, id: order.id }, changes);
  }

  /**
   * Takes up to `limit` due orders for `leaseMs` by the database's clock, FOR UPDATE SKIP LOCKED, so instances share
   * the work and never take one order twice; an order whose claim ran out (its worker died) is due again.
   */
  async claim(manager: EntityManager, leaseId: string, leaseMs: number, limit: number): Promise<string[]> {
    // TypeORM answers an UPDATE … RETURNING with [rows, affected].
    const [rows] = await manager.query<[{ id: string }[], number]>(
      `UPDATE provisioning_orders o
          SET status = 'in_progress', lease_id = $1, lease_until = now() + make_interval(secs => $2::float8 / 1000),
              attempts = o.attempts + 1, updated_at = now()
        WHERE o.id IN (
          SELECT id FROM provisioning_orders
           WHERE status IN ('acknowledged', 'in_progress') AND next_attempt_at <= now()
             AND (lease_until IS NULL OR lease_until < now())
           ORDER BY next_attempt_at, created_at, id
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
        RETURNING o.id`,
      [leaseId, leaseMs, limit],
    );
    return rows.map((row) => row.id);
  }

  /** Gives the order back for another attempt in `delayS` seconds (database clock), with its error. */
  async retryLater(
    manager: EntityManager,
    order: ProvisioningOrder,
    error: string,
    delayS: number,
  ): Promise<void> {
    await manager.query(
      `UPDATE provisioning_orders
          SET lease_id = NULL, lease_until = NULL, last_error = $2, updated_at = now(),
              next_attempt_at = now() + make_interval(secs => $3::float8)
        WHERE id = $1`,
      [order.id, error, delayS],
    );
  }

  page(
    manager: EntityManager,
    tenantId: string,
    filter: OrderFilter,
    query: PageQueryDto,
  ): Promise<Page<ProvisioningOrder>> {
    const qb = manager
      .getRepository(ProvisioningOrder)
      .createQueryBuilder('o')
      .where('o.tenantId = :tenantId', { tenantId });
    if (filter.serviceId !== undefined) {
      qb.andWhere('o.serviceId = :serviceId', { serviceId: filter.serviceId });
    }
    if (filter.subscriberId !== undefined) {
      qb.andWhere('o.subscriberId = :subscriberId', { subscriberId: filter.subscriberId });
    }
    if (filter.status !== undefined) {
      qb.andWhere('o.status = :status', { status: filter.status });
    }
    if (filter.action !== undefined) {
      qb.andWhere('o.action = :action', { action: filter.action });
    }
    return paginate(qb, query);
  }
}
