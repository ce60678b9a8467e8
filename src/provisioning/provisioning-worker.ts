import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { PollingLoop } from '../common/polling-loop';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { SYSTEM_SCOPE } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { EventsService, type EventType } from '../events';
import { OrderDto } from './dto/order.dto';
import { ServiceDto } from './dto/service.dto';
import {
  DriverError,
  type DriverOutcome,
  NETWORK_DRIVER,
  type NetworkDriver,
} from './network/network-driver';
import { ProvisioningOrder, Service } from './provisioning.entity';
import { ProvisioningOrdersRepository } from './provisioning-orders.repository';
import { ServicePlansRepository } from './service-plans.repository';
import { OrderAction, OrderStatus, ServiceStatus, statusAfter } from './service-status';
import { ServicesRepository } from './services.repository';

/** The event a completed order's service emits, by action (modify emitted service.updated when it was asked). */
const SERVICE_EVENTS: Partial<Record<OrderAction, EventType>> = {
  [OrderAction.Activate]: 'service.activated',
  [OrderAction.Suspend]: 'service.suspended',
  [OrderAction.Resume]: 'service.resumed',
  [OrderAction.ChangePlan]: 'service.plan_changed',
  [OrderAction.Terminate]: 'service.terminated',
};

const BATCH = 10;

/**
 * Carries provisioning orders to the network. Each pass claims due orders with FOR UPDATE SKIP LOCKED and a lease,
 * so instances share the work and never run one order at once; a service has one open order at a time, so its
 * orders apply in the order they were made. A pass runs on every poll tick and right after a commit that opened an
 * order (wake). The driver runs outside any transaction; the order and its service then complete together, only if
 * the claim still holds (a worker that outlived its lease records nothing: the one that took over does).
 */
@Injectable()
export class ProvisioningWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ProvisioningWorker');
  private readonly loop = new PollingLoop(this.logger, 'provisioning pass failed', () => this.drain());

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(NETWORK_DRIVER) private readonly driver: NetworkDriver,
    private readonly tx: TransactionRunner,
    private readonly events: EventsService,
    private readonly orders: ProvisioningOrdersRepository,
    private readonly services: ServicesRepository,
    private readonly plans: ServicePlansRepository,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    if (this.driver.name === 'none') {
      this.logger.warn({
        msg: 'NETWORK_DRIVER=none: provisioning orders complete without reaching any network (setups with no network only)',
      });
    }
    if (!this.config.provisioning.workerEnabled) {
      return;
    }
    this.loop.start(this.config.provisioning.pollMs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
    await this.driver.close?.();
  }

  /** Starts a pass now, or right after the one under way. */
  wake(): void {
    this.loop.wake();
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.loop.stopped) {
        return;
      }
      const leaseId = randomUUID();
      const claimed = await this.orders.claim(
        this.dataSource.manager,
        leaseId,
        this.config.provisioning.leaseMs,
        BATCH,
      );
      await Promise.all(claimed.map((id) => this.carryOut(id, leaseId)));
      if (claimed.length < BATCH) {
        return;
      }
    }
  }

  private async carryOut(orderId: string, leaseId: string): Promise<void> {
    const { manager } = this.dataSource;
    const order = await this.orders.findClaimed(manager, orderId, leaseId);
    if (!order) {
      return;
    }
    const service = await this.services.findById(manager, order.tenantId, order.serviceId);
    const plan = await this.plans.findById(manager, order.tenantId, order.planId);
    if (!service || !plan) {
      return this.fail(order, leaseId, new DriverError('the service or its plan no longer exists', false));
    }
    let after: Service;
    try {
      after = Object.assign(new Service(), service, {
        status: statusAfter(order.action, service.status),
        planId: plan.id,
      });
    } catch (error) {
      return this.fail(order, leaseId, new DriverError((error as Error).message, false));
    }
    let outcome: DriverOutcome | void;
    try {
      outcome = await this.driver.apply(order, after, plan);
    } catch (error) {
      const failure = error instanceof DriverError ? error : new DriverError((error as Error).message, true);
      return this.fail(order, leaseId, failure);
    }
    await this.complete(order, leaseId, after.status, outcome ?? {});
  }

  /** The order completed and its service moved, in one transaction, while the claim holds. */
  private async complete(
    claimed: ProvisioningOrder,
    leaseId: string,
    status: ServiceStatus,
    outcome: DriverOutcome,
  ): Promise<void> {
    await this.tx.run(SYSTEM_SCOPE, async (tx) => {
      const order = await this.orders.lockClaimed(tx.manager, claimed.id, leaseId);
      if (!order) {
        this.logger.warn({ msg: 'lease lost before the order was recorded', order_id: claimed.id });
        return;
      }
      const service = await this.services.lockForUpdate(tx.manager, order.tenantId, order.serviceId);
      // The business clock: a bill run prorates by the day an order completed.
      const now = this.clock.now();
      const moved = service.status !== status || service.planId !== order.planId;
      service.status = status;
      service.planId = order.planId;
      if (status === ServiceStatus.Active && service.activatedAt === null) {
        service.activatedAt = now;
      }
      if (status === ServiceStatus.Terminated) {
        service.terminatedAt = now;
      }
      if (moved) {
        service.updatedAt = now;
        await this.services.update(tx.manager, service);
      }
      Object.assign(order, {
        status: OrderStatus.Completed,
        completedAt: now,
        updatedAt: now,
        lastError: null,
        leaseId: null,
        leaseUntil: null,
        disconnect: outcome.disconnect ?? null,
        coa: outcome.coa ?? null,
      });
      await this.orders.update(tx.manager, order);
      const serviceEvent = SERVICE_EVENTS[order.action];
      if (serviceEvent) {
        await this.emit(tx, order, serviceEvent, ServiceDto.from(service));
      }
      await this.emit(tx, order, 'provisioning_order.completed', OrderDto.from(order));
    });
  }

  /** A transient failure is tried again after the next delay; a permanent one, or the last, fails the order. */
  private async fail(claimed: ProvisioningOrder, leaseId: string, error: DriverError): Promise<void> {
    const delays = this.config.provisioning.retryDelaysS;
    this.logger.warn({ msg: 'provisioning order attempt failed', order_id: claimed.id, err: error.message });
    await this.tx.run(SYSTEM_SCOPE, async (tx) => {
      const order = await this.orders.lockClaimed(tx.manager, claimed.id, leaseId);
      if (!order) {
        return;
      }
      if (error.transient && order.attempts <= delays.length) {
        await this.orders.retryLater(tx.manager, order, error.message, delays[order.attempts - 1]);
        return;
      }
      Object.assign(order, {
        status: OrderStatus.Failed,
        lastError: error.message,
        updatedAt: new Date(),
        leaseId: null,
        leaseUntil: null,
      });
      await this.orders.update(tx.manager, order);
      await this.emit(tx, order, 'provisioning_order.failed', OrderDto.from(order));
    });
  }

  private emit(tx: Tx, order: ProvisioningOrder, type: EventType, object: object) {
    const subjectId = type.startsWith('service.') ? order.serviceId : order.id;
    return this.events.append(tx, { tenantId: order.tenantId, type, subjectId, object });
  }
}
