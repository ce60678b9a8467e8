import { Injectable } from '@nestjs/common';
import { assertIfMatch } from '../common/http/etag';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RenderedPage } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { isUniqueViolation } from '../common/errors/postgres-errors';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import type { SqlParams } from '../database/sql-params';
import { EventsService, type NewEvent } from '../events';
import { ListOrdersQueryDto, OrderDto } from './dto/order.dto';
import { ProvisioningOrder, Service } from './provisioning.entity';
import { ProvisioningOrdersRepository } from './provisioning-orders.repository';
import { ProvisioningWorker } from './provisioning-worker';
import { OrderAction, OrderStatus } from './service-status';

/** 409 order_in_progress: a service takes one order at a time, so its orders reach the network in order. */
export function orderInProgress(serviceId: string): ApiError {
  return new ApiError(
    'order_in_progress',
    `Service ${serviceId} has an open provisioning order; wait for it to complete or cancel it.`,
    'service_id',
  );
}

@Injectable()
export class ProvisioningOrdersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly orders: ProvisioningOrdersRepository,
    private readonly worker: ProvisioningWorker,
    private readonly clock: Clock,
  ) {}

  /**
   * A new order for `service`, in the caller's transaction, with its `provisioning_order.created` event; the worker
   * is woken once that transaction commits. A second open order of the service fails on the one-open-order index.
   */
  async open(
    tx: Tx,
    service: Service,
    action: OrderAction,
    fields: { planId: string; reason?: string | null; changes?: string[] | null },
  ): Promise<ProvisioningOrder> {
    const order = this.build(service, action, fields);
    try {
      await this.orders.insert(tx.manager, order);
    } catch (error) {
      throw isUniqueViolation(error, 'uq_provisioning_orders_open_per_service')
        ? orderInProgress(service.id)
        : error;
    }
    await this.events.append(tx, this.createdEvent(order));
    this.opened(tx);
    return order;
  }

  /**
   * A new service's activate order written by the service's own statement (ServicesService.createIn): the order, the
   * CTE that inserts it (its parameter added to `params`) and its `provisioning_order.created`; the caller writes
   * them, then calls opened(). A new service has no open order, so uq_provisioning_orders_open_per_service holds.
   */
  openInStatement(
    params: SqlParams,
    service: Service,
    action: OrderAction,
    fields: { planId: string },
  ): { order: ProvisioningOrder; cte: string; event: NewEvent } {
    const order = this.build(service, action, fields);
    return { order, cte: this.orders.insertCte(params, order), event: this.createdEvent(order) };
  }

  /** Once the transaction that opened an order commits, the worker looks for it at once. */
  opened(tx: Tx): void {
    tx.afterCommit(() => this.worker.wake());
  }

  private createdEvent(order: ProvisioningOrder): NewEvent {
    return {
      tenantId: order.tenantId,
      type: 'provisioning_order.created',
      subjectId: order.id,
      object: OrderDto.from(order),
    };
  }

  private build(
    service: Service,
    action: OrderAction,
    fields: { planId: string; reason?: string | null; changes?: string[] | null },
  ): ProvisioningOrder {
    const now = this.clock.now();
    return Object.assign(new ProvisioningOrder(), {
      tenantId: service.tenantId,
      id: newId('ord', now),
      serviceId: service.id,
      subscriberId: service.subscriberId,
      action,
      status: OrderStatus.Acknowledged,
      planId: fields.planId,
      changes: fields.changes ?? null,
      reason: fields.reason ?? null,
      attempts: 0,
      lastError: null,
      nextAttemptAt: now,
      leaseId: null,
      leaseUntil: null,
      completedAt: null,
      disconnect: null,
      coa: null,
      createdAt: now,
      updatedAt: now,
    });
  }

  /** Whether the service has an order still open (checked before opening one, for a clear answer). */
  hasOpen(tx: Tx, service: Service): Promise<boolean> {
    return this.orders.hasOpen(tx.manager, service.tenantId, service.id);
  }

  async get(tenantId: string, id: string): Promise<ProvisioningOrder> {
    const order = await this.orders.findById(this.dataSource.manager, tenantId, id);
    if (!order) {
      throw ApiError.notFound('provisioning order', id);
    }
    return order;
  }

  list(tenantId: string, query: ListOrdersQueryDto): Promise<RenderedPage> {
    const filter = {
      serviceId: query.service_id,
      subscriberId: query.subscriber_id,
      statuses: query.status,
      actions: query.action,
    };
    return this.orders.page(this.dataSource.manager, tenantId, filter, query);
  }

  /** Only an order no worker has taken yet can be cancelled; the service stays as it is. */
  cancel(auth: AuthContext, id: string): Promise<OrderDto> {
    return this.transactionRunner.run(auth, async (tx) => {
      const order = await this.orders.lockForUpdate(tx.manager, auth.tenantId, id);
      await assertIfMatch(() => OrderDto.from(order));
      if (order.status !== OrderStatus.Acknowledged) {
        throw new ApiError(
          'invalid_state_transition',
          `Order ${id} is ${order.status}: only an acknowledged order, not yet taken by the worker, can be cancelled.`,
          'status',
        );
      }
      order.status = OrderStatus.Cancelled;
      order.updatedAt = this.clock.now();
      await this.orders.update(tx.manager, order);
      const answer = OrderDto.from(order);
      await this.events.append(tx, {
        tenantId: auth.tenantId,
        type: 'provisioning_order.cancelled',
        subjectId: order.id,
        object: answer,
      });
      return answer;
    });
  }
}
