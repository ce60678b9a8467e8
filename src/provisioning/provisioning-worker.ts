import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { PolledWorker } from '../common/polled-worker';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Batcher } from '../common/batcher';
import { atFrozenTime, Clock } from '../common/clock';
import { groupBy } from '../common/group-by';
import { SYSTEM_SCOPE } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { EventsService, type EventType, type NewEvent } from '../events';
import { TenantTime } from '../gateway';
import { type Subscriber, SubscribersService, SubscriberStatus } from '../subscribers';
import { OrderDto } from './dto/order.dto';
import { ServiceDto } from './dto/service.dto';
import {
  DriverError,
  type DriverOutcome,
  NETWORK_DRIVER,
  type NetworkDriver,
  type ServicePools,
} from './network/network-driver';
import { IpPoolsRepository } from './ipam/ip-pools.repository';
import { poolIdsOf, servicePools } from './ipam/radius-addressing';
import { ProvisioningOrder, Service, ServicePlan } from './provisioning.entity';
import { ProvisioningOrdersRepository } from './provisioning-orders.repository';
import { ServicePlansRepository } from './service-plans.repository';
import { capStateAfter, OrderAction, OrderStatus, ServiceStatus, statusAfter } from './service-status';
import { ServiceLifecycle } from './service-lifecycle';
import { ServicesRepository } from './services.repository';

/** The event a completed order's service emits, by action (modify emitted service.updated when it was asked). */
const SERVICE_EVENTS: Partial<Record<OrderAction, EventType>> = {
  [OrderAction.Activate]: 'service.activated',
  [OrderAction.Suspend]: 'service.suspended',
  [OrderAction.Resume]: 'service.resumed',
  [OrderAction.ChangePlan]: 'service.plan_changed',
  [OrderAction.Terminate]: 'service.terminated',
};

/** Orders per claim: carried out side by side, their RADIUS rows written and their completions recorded together. */
const BATCH = 200;

/**
 * Claims carried out at once, each as an instance would: while one waits on the database, the next is under way, so
 * the work is not one round trip after another.
 */
const LANES = 4;

/** An order whose driver call succeeded, to be recorded with the others that finished in the same turn. */
interface Completion {
  claimed: ProvisioningOrder;
  leaseId: string;
  status: ServiceStatus;
  outcome: DriverOutcome;
}

/** An order claimed under a lease, as its completion will record it. */
interface ClaimedOrder {
  order: ProvisioningOrder;
  leaseId: string;
}

/** The order as its completion records it: completed at `now`, its claim released, the driver's outcome kept. */
export function completedOrder(
  claimed: ProvisioningOrder,
  outcome: DriverOutcome,
  now: Date,
): ProvisioningOrder {
  return Object.assign(new ProvisioningOrder(), claimed, {
    status: OrderStatus.Completed,
    completedAt: now,
    updatedAt: now,
    lastError: null,
    leaseId: null,
    leaseUntil: null,
    disconnect: outcome.disconnect ?? null,
    coa: outcome.coa ?? null,
  });
}

/** The actions whose completion moves a service's plan history or active life (what MRR is made of). */
const PLAN_HISTORY_ACTIONS: readonly OrderAction[] = [
  OrderAction.Activate,
  OrderAction.ChangePlan,
  OrderAction.Terminate,
];

/**
 * Moves the service to where its completed order leaves it (status, plan, the day it was activated or terminated);
 * answers whether it changed, so it is written.
 */
export function moveService(
  service: Service,
  order: ProvisioningOrder,
  status: ServiceStatus,
  now: Date,
): boolean {
  const capState = capStateAfter(order.action, service.capState);
  const changed =
    service.status !== status || service.planId !== order.planId || service.capState !== capState;
  service.status = status;
  service.planId = order.planId;
  service.capState = capState;
  if (status === ServiceStatus.Active && service.activatedAt === null) {
    service.activatedAt = now;
  }
  if (status === ServiceStatus.Terminated) {
    service.terminatedAt = now;
  }
  if (changed) {
    service.updatedAt = now;
  }
  return changed;
}

/**
 * Carries provisioning orders to the network. Each pass claims due orders with FOR UPDATE SKIP LOCKED and a lease,
 * so instances share the work and never run one order at once; a service has one open order at a time, so its
 * orders apply in the order they were made. A pass runs on every poll tick and right after a commit that opened an
 * order (wake). The driver runs outside any transaction; the order and its service then complete together, only if
 * the claim still holds (a worker that outlived its lease records nothing: the one that took over does). The orders of
 * a claim that finish together are recorded in one transaction (Batcher), each as it would be alone.
 */
@Injectable()
export class ProvisioningWorker extends PolledWorker {
  private readonly completions = new Batcher<Completion, void>((batch) => this.completeMany(batch));

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(NETWORK_DRIVER) private readonly driver: NetworkDriver,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly orders: ProvisioningOrdersRepository,
    private readonly services: ServicesRepository,
    private readonly plans: ServicePlansRepository,
    private readonly clock: Clock,
    private readonly tenantTime: TenantTime,
    private readonly subscribers: SubscribersService,
    private readonly lifecycle: ServiceLifecycle,
    private readonly pools: IpPoolsRepository,
  ) {
    super('ProvisioningWorker', 'provisioning pass failed');
  }

  override onApplicationBootstrap(): void {
    if (this.driver.name === 'none') {
      this.logger.warn({
        msg: 'NETWORK_DRIVER=none: provisioning orders complete without reaching any network (setups with no network only)',
      });
    }
    super.onApplicationBootstrap();
  }

  protected pollMs(): number | null {
    return this.config.provisioning.workerEnabled ? this.config.provisioning.pollMs : null;
  }

  override async onApplicationShutdown(): Promise<void> {
    await super.onApplicationShutdown();
    await this.driver.close?.();
  }

  protected async pass(): Promise<void> {
    await Promise.all(Array.from({ length: LANES }, () => this.lane()));
  }

  /** Claims and carries out batches until one comes back short (the due orders are all taken). */
  private async lane(): Promise<void> {
    const { manager } = this.dataSource;
    for (;;) {
      if (this.loop.stopped) {
        return;
      }
      const leaseId = randomUUID();
      const claimed = await this.orders.claim(manager, leaseId, this.config.provisioning.leaseMs, BATCH);
      if (claimed.length > 0) {
        const orders = await this.orders.findClaimed(manager, claimed, leaseId);
        const byKey = <T extends { tenantId: string; id: string }>(rows: T[]) =>
          new Map(rows.map((row) => [`${row.tenantId}/${row.id}`, row]));
        const services = byKey(
          await this.services.findByIds(
            manager,
            orders.map((order) => order.serviceId),
          ),
        );
        const plans = byKey(
          await this.plans.findByIds(
            manager,
            orders.map((order) => order.planId),
          ),
        );
        const pools = byKey(await this.pools.findByIds(manager, poolIdsOf([...services.values()])));
        await Promise.all(
          orders.map((order) => {
            const service = services.get(`${order.tenantId}/${order.serviceId}`);
            return this.carryOut(
              order,
              leaseId,
              service,
              plans.get(`${order.tenantId}/${order.planId}`),
              service && servicePools(service, pools),
            );
          }),
        );
      }
      if (claimed.length < BATCH) {
        return;
      }
    }
  }

  private async carryOut(
    order: ProvisioningOrder,
    leaseId: string,
    service: Service | undefined,
    plan: ServicePlan | undefined,
    pools?: ServicePools,
  ): Promise<void> {
    if (!service || !plan) {
      return this.fail(order, leaseId, new DriverError('the service or its plan no longer exists', false));
    }
    let after: Service;
    try {
      after = Object.assign(new Service(), service, {
        status: statusAfter(order.action, service.status),
        planId: plan.id,
        capState: capStateAfter(order.action, service.capState),
      });
    } catch (error) {
      return this.fail(order, leaseId, new DriverError((error as Error).message, false));
    }
    let outcome: DriverOutcome | void;
    try {
      outcome = await this.driver.apply(order, after, plan, pools);
    } catch (error) {
      const failure = error instanceof DriverError ? error : new DriverError((error as Error).message, true);
      return this.fail(order, leaseId, failure);
    }
    await this.completions.submit({ claimed: order, leaseId, status: after.status, outcome: outcome ?? {} });
  }

  /**
   * Each order completed and its service moved, all in one transaction, for the orders whose claim still holds: the
   * services of the batch are locked first, in id order, then the orders are written, only where the claim holds
   * (which locks them), and the services moved. A deadlock or serialization failure re-runs the whole transaction
   * (TransactionRunner); one that outlasts the retries fails the pass, and the orders, still claimed, are taken again
   * once their lease ends: none is lost.
   */
  private async completeMany(batch: Completion[]): Promise<void[]> {
    // A test tenant's orders complete at its clock's time (docs/test-clocks.md): each time's orders apart.
    const frozen = await this.tenantTime.frozenTimes(
      this.dataSource.manager,
      batch.map(({ claimed }) => claimed.tenantId),
    );
    const byTime = groupBy(batch, ({ claimed }) => frozen.get(claimed.tenantId)?.toISOString() ?? '');
    for (const [time, group] of byTime) {
      await atFrozenTime(time === '' ? null : new Date(time), () => this.completeAt(group));
    }
    return batch.map(() => undefined);
  }

  private async completeAt(batch: Completion[]): Promise<void> {
    // The business clock: a bill run prorates by the day an order completed.
    const now = this.clock.now();
    const completed = batch.map(({ claimed, leaseId, outcome }) => ({
      leaseId,
      order: completedOrder(claimed, outcome, now),
    }));
    await this.transactionRunner.run(SYSTEM_SCOPE, (tx) => this.recordCompleted(tx, batch, completed, now));
  }

  /** completeMany's transaction: the locks in their order, then the orders, services, events and subscribers. */
  private async recordCompleted(
    tx: Tx,
    batch: Completion[],
    completed: ClaimedOrder[],
    now: Date,
  ): Promise<void> {
    const joining = await this.lockJoining(tx, completed);
    // Lock order (docs/decisions.md "One lock order"): services in id order, then their orders, as update() and
    // act() take them; orders first deadlocked with a PATCH holding the service and waiting on the order.
    const services = new Map(
      (
        await this.services.lockForUpdateMany(
          tx.manager,
          completed.map(({ order }) => order.serviceId),
        )
      ).map((service) => [`${service.tenantId}/${service.id}`, service]),
    );
    const held = new Set(await this.orders.completeClaimed(tx.manager, completed));
    const activated = new Map<Subscriber, string>();
    const moved: Service[] = [];
    const history: ProvisioningOrder[] = [];
    const events: NewEvent[] = [];
    batch.forEach(({ status }, index) => {
      const { order } = completed[index];
      if (!held.has(order.id)) {
        this.logger.warn({ msg: 'lease lost before the order was recorded', order_id: order.id });
        return;
      }
      const service = services.get(`${order.tenantId}/${order.serviceId}`);
      if (!service) {
        throw new Error(`service ${order.serviceId} of order ${order.id} not found`);
      }
      if (moveService(service, order, status, now)) {
        moved.push(service);
      }
      if (PLAN_HISTORY_ACTIONS.includes(order.action)) {
        history.push(order);
      }
      const joiner = joining.get(`${order.tenantId}/${order.subscriberId}`);
      if (order.action === OrderAction.Activate && status === ServiceStatus.Active && joiner) {
        activated.set(joiner, activated.get(joiner) ?? service.id);
      }
      const serviceEvent = SERVICE_EVENTS[order.action];
      if (serviceEvent) {
        events.push(this.event(order, serviceEvent, ServiceDto.from(service)));
      }
      events.push(this.event(order, 'provisioning_order.completed', OrderDto.from(order)));
    });
    await this.services.updateMany(tx.manager, moved);
    await this.events.appendMany(tx, events);
    await this.lifecycle.ended(
      tx,
      moved.filter((service) => service.status === ServiceStatus.Terminated),
    );
    await this.lifecycle.planHistoryMoved(tx, history);
    for (const [subscriber, serviceId] of activated) {
      await this.subscribers.followService(
        tx,
        subscriber,
        SubscriberStatus.Active,
        `service ${serviceId} activated`,
      );
    }
  }

  /**
   * subscriber_follows_service: a subscriber not yet a customer (prospect, pending) whose service an activate order
   * brings up becomes active. Those subscribers are locked first, before their services (the lock order). A terminate
   * order's subscriber is locked too: billing settles the ended service's days for it (pending charges), which a bill
   * run batch holding the subscriber must not be computing at the same time. Answers the joining ones, by
   * `tenant/subscriber`.
   */
  private async lockJoining(tx: Tx, completed: ClaimedOrder[]): Promise<Map<string, Subscriber>> {
    const locked = await this.subscribers.lockInStatus(
      tx.manager,
      completed
        .filter(
          ({ order }) => order.action === OrderAction.Activate || order.action === OrderAction.Terminate,
        )
        .map(({ order }) => order.subscriberId),
      Object.values(SubscriberStatus),
    );
    return new Map(
      locked
        .filter((subscriber) =>
          [SubscriberStatus.Prospect, SubscriberStatus.Pending].includes(subscriber.status),
        )
        .map((subscriber) => [`${subscriber.tenantId}/${subscriber.id}`, subscriber]),
    );
  }

  /** A transient failure is tried again after the next delay; a permanent one, or the last, fails the order. */
  private async fail(claimed: ProvisioningOrder, leaseId: string, error: DriverError): Promise<void> {
    const delays = this.config.provisioning.retryDelaysS;
    this.logger.warn({ msg: 'provisioning order attempt failed', order_id: claimed.id, err: error.message });
    await this.transactionRunner.run(SYSTEM_SCOPE, async (tx) => {
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
        updatedAt: this.clock.now(),
        leaseId: null,
        leaseUntil: null,
      });
      await this.orders.update(tx.manager, order);
      await this.events.append(tx, this.event(order, 'provisioning_order.failed', OrderDto.from(order)));
    });
  }

  private event(order: ProvisioningOrder, type: EventType, object: object): NewEvent {
    const subjectId = type.startsWith('service.') ? order.serviceId : order.id;
    return { tenantId: order.tenantId, type, subjectId, object };
  }
}
