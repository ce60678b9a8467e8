import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import type { RenderedPage } from '../common/envelope/envelope';
import { type PageQueryDto } from '../common/pagination';
import {
  type Condition,
  isoTimestampSql,
  oneOf,
  type RenderedList,
  renderedPage,
} from '../database/rendered-page';
import { recordsetInsert } from '../database/entity-columns';
import { lockForUpdate } from '../database/lock-for-update';
import type { SqlParams } from '../database/sql-params';
import { ProvisioningOrder } from './provisioning.entity';
import { OPEN_ORDER_STATUSES, type OrderAction, type OrderStatus } from './service-status';

export interface OrderFilter {
  serviceId?: string;
  subscriberId?: string;
  statuses?: OrderStatus[];
  actions?: OrderAction[];
}

/**
 * The list, each item OrderDto.from as Postgres renders it, field for field (test/api/list-rendering.e2e-spec.ts holds
 * the two to the same answer).
 */
const INSERT_ORDERS = recordsetInsert(ProvisioningOrder, 'provisioning_orders');

const ORDER_LIST: RenderedList = {
  name: 'orders_page',
  table: 'provisioning_orders',
  alias: 'o',
  item: `json_build_object(
    'id', o.id, 'service_id', o.service_id, 'subscriber_id', o.subscriber_id, 'action', o.action,
    'status', o.status, 'plan_id', o.plan_id, 'changes', o.changes, 'reason', o.reason, 'attempts', o.attempts,
    'last_error', o.last_error, 'completed_at', ${isoTimestampSql('o.completed_at')}, 'disconnect', o.disconnect,
    'coa', o.coa, 'created_at', ${isoTimestampSql('o.created_at')}, 'updated_at', ${isoTimestampSql('o.updated_at')})`,
};

/**
 * The provisioning orders table in another module's statement, `provisioning_orders <alias>` after its FROM or JOIN:
 * billing's reports (src/billing/reports) read every service's plan history (the completed activate and change_plan
 * orders) with the services and plans in one statement. They read its tenant_id, id, service_id, action, status,
 * plan_id and completed_at. Other reads call this repository (docs/architecture.md, "Owns (tables)").
 */
export function provisioningOrdersTable(alias: string): string {
  return `provisioning_orders ${alias}`;
}

/** The only place the provisioning_orders table is read and written (and provisioningOrdersTable the way others' statements join it). */
@Injectable()
export class ProvisioningOrdersRepository {
  /**
   * A new order, due at the database's now(): the clock the worker's claim reads (as a webhook delivery's), whatever
   * the app's Clock says (a test's may stand in another year).
   */
  /**
   * insert() as a CTE of a larger statement (a new service's: ServicesService.createIn), its parameter added to
   * `params`; due at the database's now(), as insert() makes it.
   */
  insertCte(params: SqlParams, order: ProvisioningOrder): string {
    const [rows] = INSERT_ORDERS.params([order]);
    return `order_row AS (${INSERT_ORDERS.at(params.add(rows), { next_attempt_at: 'now()' })} RETURNING 1)`;
  }

  async insert(manager: EntityManager, order: ProvisioningOrder): Promise<void> {
    await manager.insert(ProvisioningOrder, { ...order, nextAttemptAt: () => 'now()' });
  }

  /**
   * The plans set on these services (completed activate and change_plan orders), oldest first: a service's plan
   * history, which billing's run prorates by.
   */
  async planChanges(
    manager: EntityManager,
    tenantId: string,
    serviceIds: string[],
  ): Promise<{ serviceId: string; planId: string; at: Date }[]> {
    if (serviceIds.length === 0) {
      return [];
    }
    const rows: { service_id: string; plan_id: string; completed_at: Date }[] = await manager.query(
      `SELECT service_id, plan_id, completed_at FROM provisioning_orders
        WHERE tenant_id = $1 AND service_id = ANY($2::text[]) AND status = 'completed'
          AND action IN ('activate', 'change_plan')
        ORDER BY completed_at, id`,
      [tenantId, serviceIds],
    );
    return rows.map((row) => ({ serviceId: row.service_id, planId: row.plan_id, at: row.completed_at }));
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

  /** The orders of `ids` the claim `leaseId` holds (unlocked: the driver runs outside any transaction). */
  findClaimed(manager: EntityManager, ids: string[], leaseId: string): Promise<ProvisioningOrder[]> {
    return manager.find(ProvisioningOrder, { where: { id: In(ids), leaseId }, order: { id: 'ASC' } });
  }

  /** The order, row-locked, only while the claim `leaseId` still holds it (else another worker has taken it over). */
  lockClaimed(manager: EntityManager, id: string, leaseId: string): Promise<ProvisioningOrder | null> {
    return manager.findOne(ProvisioningOrder, {
      where: { id, leaseId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /**
   * Writes the completed orders (what the worker's completion changes) in one statement, each only while the claim
   * `leaseId` still holds it; answers the ids written (the others were taken over by another worker).
   */
  async completeClaimed(
    manager: EntityManager,
    completed: { order: ProvisioningOrder; leaseId: string }[],
  ): Promise<string[]> {
    if (completed.length === 0) {
      return [];
    }
    // TypeORM answers an UPDATE … RETURNING with [rows, affected].
    const [rows] = await manager.query<[{ id: string }[], number]>(
      `UPDATE provisioning_orders o
          SET status = x.status, completed_at = x.completed_at, updated_at = x.updated_at, last_error = x.last_error,
              lease_id = x.lease_id, lease_until = x.lease_until, disconnect = x.disconnect, coa = x.coa
         FROM jsonb_to_recordset($1::jsonb) AS x(id text, claim text, status text, completed_at timestamptz,
              updated_at timestamptz, last_error text, lease_id text, lease_until timestamptz, disconnect text, coa text)
        WHERE o.id = x.id AND o.lease_id = x.claim
        RETURNING o.id`,
      [
        JSON.stringify(
          completed.map(({ order, leaseId }) => ({
            id: order.id,
            claim: leaseId,
            status: order.status,
            completed_at: order.completedAt,
            updated_at: order.updatedAt,
            last_error: order.lastError,
            lease_id: order.leaseId,
            lease_until: order.leaseUntil,
            disconnect: order.disconnect,
            coa: order.coa,
          })),
        ),
      ],
    );
    return rows.map((row) => row.id);
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

  /** A page of the tenant's orders, newest first, each rendered by Postgres as OrderDto. */
  page(
    manager: EntityManager,
    tenantId: string,
    filter: OrderFilter,
    query: PageQueryDto,
  ): Promise<RenderedPage> {
    const conditions: Condition[] = [{ sql: 'o.tenant_id = ?', values: [tenantId], indexed: true }];
    if (filter.serviceId !== undefined) {
      conditions.push({ sql: 'o.service_id = ?', values: [filter.serviceId] });
    }
    if (filter.subscriberId !== undefined) {
      conditions.push({ sql: 'o.subscriber_id = ?', values: [filter.subscriberId] });
    }
    if (filter.statuses !== undefined) {
      conditions.push(oneOf('o.status', filter.statuses));
    }
    if (filter.actions !== undefined) {
      conditions.push(oneOf('o.action', filter.actions));
    }
    return renderedPage(manager, ORDER_LIST, conditions, query);
  }

  /** Deletes every provisioning_orders row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM provisioning_orders WHERE tenant_id = $1', [tenantId]);
  }
}
