import { Injectable } from '@nestjs/common';
import { assertIfMatch } from '../common/http/etag';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { isUniqueViolation } from '../common/errors/postgres-errors';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import type { AuthContext } from '../common/request-context';
import { SqlParams } from '../database/sql-params';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { EventsService } from '../events';
import { TenantsService } from '../gateway';
import { SubscribersService, SubscriberStatus } from '../subscribers';
import { OrderDto, ServiceActionDto, ServiceWithOrderDto } from './dto/order.dto';
import { normalizeMac } from './dto/service-fields';
import { CreateServiceDto, ListServicesQueryDto, ServiceDto, UpdateServiceDto } from './dto/service.dto';
import { orderInProgress, ProvisioningOrdersService } from './provisioning-orders.service';
import { Service } from './provisioning.entity';
import { ServicePlansRepository } from './service-plans.repository';
import { CapState, OrderAction, ServiceStatus, statusAfter } from './service-status';
import { ServicesRepository } from './services.repository';
import { IpAssignments } from './ipam/ip-assignments';

/** The database's uniqueness verdicts as the API's answers (null: not one of them). */
export function writeError(error: unknown): ApiError | null {
  if (isUniqueViolation(error, 'uq_services_pppoe_username')) {
    return new ApiError(
      'duplicate_service_username',
      'A service that is not terminated already has this PPPoE username.',
      'pppoe_username',
    );
  }
  if (isUniqueViolation(error, 'uq_services_static_ipv4')) {
    return new ApiError(
      'duplicate_ip_address',
      'A service that is not terminated already has this static IPv4 address.',
      'static_ipv4',
    );
  }
  return null;
}

/**
 * The currency a subscriber is billed in, or null when it has no billing profile to say (none and no tenant
 * default). Supplied by billing (ServicesService.useBillingCurrency), which owns the profiles and imports
 * provisioning: provisioning never imports billing.
 */
export type BillingCurrencyLookup = (
  manager: EntityManager,
  tenantId: string,
  billingProfileId: string | null,
) => Promise<string | null>;

/** The fields the network sees: a change to one is carried there by a modify order. */
const NETWORK_FIELDS = [
  'pppoe_password',
  'static_ipv4',
  'ip_pool_id',
  'ipv6_pool_id',
  'delegated_ipv6_prefix',
];

const NOT_SERVICEABLE: readonly SubscriberStatus[] = [SubscriberStatus.Cancelled, SubscriberStatus.Archived];

@Injectable()
export class ServicesService {
  private billingCurrency: BillingCurrencyLookup | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly services: ServicesRepository,
    private readonly plans: ServicePlansRepository,
    private readonly orders: ProvisioningOrdersService,
    private readonly subscribers: SubscribersService,
    private readonly tenants: TenantsService,
    private readonly clock: Clock,
    private readonly addressing: IpAssignments,
  ) {}

  /** Registers how a subscriber's billing currency is found, so a plan in another currency is refused. */
  useBillingCurrency(lookup: BillingCurrencyLookup): void {
    this.billingCurrency = lookup;
  }

  /** 422 currency_mismatch when the plan's currency is not the one the subscriber is billed in. */
  private async assertCurrency(
    tx: Tx,
    tenantId: string,
    billingProfileId: string | null,
    plan: { id: string; currency: string },
  ): Promise<void> {
    const currency = await this.billingCurrency?.(tx.manager, tenantId, billingProfileId);
    if (currency && currency !== plan.currency) {
      throw new ApiError(
        'currency_mismatch',
        `Plan ${plan.id} is priced in ${plan.currency}; the subscriber is billed in ${currency}.`,
        'plan_id',
      );
    }
  }

  /**
   * The service (pending) and its activate order, one transaction; answered 202: the network is reached later. The
   * subscriber is locked first (docs/decisions.md "One lock order"): a prospect becomes pending with its first service
   * (subscriber_follows_service, docs/automation.md).
   */
  async create(auth: AuthContext, subscriberId: string, dto: CreateServiceDto): Promise<ServiceWithOrderDto> {
    const slug = await this.tenantSlug(auth.tenantId);
    try {
      return await this.transactionRunner.run(auth, (tx) =>
        this.createIn(tx, auth.tenantId, slug, subscriberId, dto, null),
      );
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }

  /** What `radius_username` starts with: the tenant's slug (its id when it has none), read through `manager`. */
  async tenantSlug(tenantId: string, manager?: EntityManager): Promise<string> {
    return (await this.tenants.findByIdOrSlug(tenantId, manager))?.slug ?? tenantId;
  }

  /**
   * create() in the caller's transaction (an import's batch): the service, its service.created event, its activate
   * order, and the prospect's move to pending. A uniqueness violation is the caller's to map (serviceWriteError).
   */
  async createIn(
    tx: Tx,
    tenantId: string,
    slug: string,
    subscriberId: string,
    dto: CreateServiceDto,
    externalId: string | null,
  ): Promise<ServiceWithOrderDto> {
    const subscriber = await this.subscribers.lockIn(tx.manager, tenantId, subscriberId);
    if (NOT_SERVICEABLE.includes(subscriber.status)) {
      throw new ApiError(
        'subscriber_not_serviceable',
        `Subscriber ${subscriberId} is ${subscriber.status} and takes no new services.`,
        'subscriber_id',
      );
    }
    const plan = await this.activePlan(tx, tenantId, dto.plan_id);
    await this.assertCurrency(tx, tenantId, subscriber.billingProfileId, plan);
    const now = this.clock.now();
    const service = Object.assign(new Service(), {
      tenantId,
      id: newId('svc', now),
      subscriberId,
      planId: plan.id,
      status: ServiceStatus.Pending,
      externalId,
      pppoeUsername: dto.pppoe_username,
      radiusUsername: `${slug}/${dto.pppoe_username}`,
      pppoePassword: dto.pppoe_password,
      staticIpv4: null,
      ipPoolId: null,
      ipv6PoolId: null,
      delegatedIpv6Prefix: null,
      cpeMac: dto.cpe_mac ? normalizeMac(dto.cpe_mac) : null,
      installationAddress: dto.installation_address ?? null,
      activatedAt: null,
      terminatedAt: null,
      createdAt: now,
      updatedAt: now,
      capState: CapState.Normal,
    });
    // Its addresses from the pools (or static_ipv4 as given, outside every pool), before it is written.
    await this.addressing.assign(tx, service, dto);
    const answer = ServiceDto.from(service);
    // One statement: the service, its activate order and both their events (with what they queue).
    const params = new SqlParams();
    const serviceRow = this.services.insertCte(params, service);
    const { order, cte, event } = this.orders.openInStatement(params, service, OrderAction.Activate, {
      planId: plan.id,
    });
    await this.events.appendManyWith(
      tx,
      [{ tenantId, type: 'service.created', subjectId: service.id, object: answer }, event],
      params,
      [serviceRow, cte],
    );
    this.orders.opened(tx);
    if (subscriber.status === SubscriberStatus.Prospect) {
      await this.subscribers.followService(
        tx,
        subscriber,
        SubscriberStatus.Pending,
        `service ${service.id} created`,
      );
    }
    return { service: answer, order: OrderDto.from(order) };
  }

  async get(tenantId: string, id: string): Promise<Service> {
    const service = await this.services.findById(this.dataSource.manager, tenantId, id);
    if (!service) {
      throw ApiError.notFound('service', id);
    }
    return service;
  }

  list(tenantId: string, query: ListServicesQueryDto): Promise<Page<Service>> {
    return this.services.page(this.dataSource.manager, tenantId, this.filterOf(query), query);
  }

  async listForSubscriber(
    tenantId: string,
    subscriberId: string,
    query: ListServicesQueryDto,
  ): Promise<Page<Service>> {
    await this.subscribers.getById(tenantId, subscriberId);
    const filter = { ...this.filterOf(query), subscriberId };
    return this.services.page(this.dataSource.manager, tenantId, filter, query);
  }

  /**
   * Saves the fields; what the network sees (the password, the static address) is carried there by a modify order,
   * so such a change waits for the service's open order (409 order_in_progress). Locks the service row first, then
   * looks at its orders, as act() and the worker do (docs/decisions.md "One lock order").
   */
  async update(auth: AuthContext, id: string, dto: UpdateServiceDto): Promise<ServiceDto> {
    try {
      return await this.transactionRunner.run(auth, async (tx) => {
        const service = await this.services.lockForUpdate(tx.manager, auth.tenantId, id);
        await assertIfMatch(() => ServiceDto.from(service));
        return (await this.updateIn(tx, service, dto)).service;
      });
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }

  /**
   * update() of a service the caller's transaction has locked (lockForUpdate, or lockByExternalIds): the fields
   * changed, its service.updated event and the modify order what the network sees needs. Answers the service and
   * the fields changed (none: nothing written).
   */
  async updateIn(
    tx: Tx,
    service: Service,
    dto: UpdateServiceDto,
  ): Promise<{ service: ServiceDto; changed: string[] }> {
    if (service.status === ServiceStatus.Terminated) {
      throw new ApiError(
        'invalid_state_transition',
        `Service ${service.id} is terminated and read-only.`,
        'status',
      );
    }
    const changed: string[] = [];
    const set = <K extends keyof Service>(field: string, key: K, value: Service[K] | undefined) => {
      if (value !== undefined && service[key] !== value) {
        service[key] = value;
        changed.push(field);
      }
    };
    set('pppoe_password', 'pppoePassword', dto.pppoe_password);
    changed.push(...(await this.addressing.assign(tx, service, dto)));
    set(
      'cpe_mac',
      'cpeMac',
      dto.cpe_mac === undefined || dto.cpe_mac === null ? dto.cpe_mac : normalizeMac(dto.cpe_mac),
    );
    set('installation_address', 'installationAddress', dto.installation_address);
    if (changed.length === 0) {
      return { service: ServiceDto.from(service), changed };
    }
    const networkChanges = changed.filter((field) => NETWORK_FIELDS.includes(field));
    // Lock order (docs/decisions.md "One lock order"): the service row, then its orders. Checked before any write,
    // so a change the open order would have to wait for is refused at once rather than queued behind the worker.
    if (networkChanges.length > 0 && (await this.orders.hasOpen(tx, service))) {
      throw orderInProgress(service.id);
    }
    service.updatedAt = this.clock.now();
    await this.services.update(tx.manager, service);
    const answer = ServiceDto.from(service);
    await this.events.append(tx, {
      tenantId: service.tenantId,
      type: 'service.updated',
      subjectId: service.id,
      object: answer,
      details: { changed_fields: changed },
    });
    if (networkChanges.length > 0) {
      await this.orders.open(tx, service, OrderAction.Modify, {
        planId: service.planId,
        changes: networkChanges,
      });
    }
    return { service: answer, changed };
  }

  /** An action becomes an order; the service moves when the order completes. */
  act(auth: AuthContext, id: string, dto: ServiceActionDto): Promise<OrderDto> {
    const changingPlan = dto.action === OrderAction.ChangePlan;
    if (changingPlan && (dto.plan_id === undefined || dto.plan_id === null)) {
      throw new ApiError('missing_field', 'plan_id is required to change_plan.', 'plan_id');
    }
    if (!changingPlan && dto.plan_id !== undefined && dto.plan_id !== null) {
      throw new ApiError('validation_failed', 'plan_id applies to change_plan only.', 'plan_id');
    }
    return this.transactionRunner.run(auth, async (tx) => {
      const service = await this.services.lockForUpdate(tx.manager, auth.tenantId, id);
      await assertIfMatch(() => ServiceDto.from(service));
      statusAfter(dto.action, service.status);
      let planId = service.planId;
      if (changingPlan) {
        const plan = await this.activePlan(tx, auth.tenantId, dto.plan_id as string);
        planId = plan.id;
        if (planId === service.planId) {
          throw new ApiError('validation_failed', 'The service is already on this plan.', 'plan_id');
        }
        const subscriber = await this.subscribers.findIn(tx.manager, auth.tenantId, service.subscriberId);
        await this.assertCurrency(tx, auth.tenantId, subscriber?.billingProfileId ?? null, plan);
      }
      if (await this.orders.hasOpen(tx, service)) {
        throw orderInProgress(service.id);
      }
      const order = await this.orders.open(tx, service, dto.action, { planId, reason: dto.reason ?? null });
      return OrderDto.from(order);
    });
  }

  /**
   * Orders that bring a subscriber's services in line with its status, in the caller's transaction (automation's
   * service_follows_subscriber): suspended → suspend the active ones; cancelled → terminate all but terminated ones;
   * active after a suspension (`resume`) → resume the suspended ones. A service with an open order is left to the
   * reconciliation that follows that order's end. Answers the orders opened.
   */
  async followSubscriber(
    tx: Tx,
    tenantId: string,
    subscriberId: string,
    status: SubscriberStatus,
    resume: boolean,
    /** An order that just failed: its action is not ordered again for its service (no retry loop). */
    failed?: { serviceId: string; action: OrderAction },
  ): Promise<OrderDto[]> {
    const opened: OrderDto[] = [];
    for (const service of await this.services.lockForSubscriber(tx.manager, tenantId, subscriberId)) {
      const action =
        status === SubscriberStatus.Suspended && service.status === ServiceStatus.Active
          ? OrderAction.Suspend
          : status === SubscriberStatus.Cancelled && service.status !== ServiceStatus.Terminated
            ? OrderAction.Terminate
            : resume && status === SubscriberStatus.Active && service.status === ServiceStatus.Suspended
              ? OrderAction.Resume
              : null;
      const justFailed = failed?.serviceId === service.id && failed.action === action;
      if (action === null || justFailed || (await this.orders.hasOpen(tx, service))) {
        continue;
      }
      const order = await this.orders.open(tx, service, action, {
        planId: service.planId,
        reason: `subscriber ${status}`,
      });
      opened.push(OrderDto.from(order));
    }
    return opened;
  }

  /** The tenant's plan, which must take new services: 422 on plan_id otherwise. */
  private async activePlan(tx: Tx, tenantId: string, planId: string) {
    const plan = await this.plans.findById(tx.manager, tenantId, planId);
    if (!plan) {
      throw new ApiError('invalid_reference', `No service plan ${planId} exists.`, 'plan_id');
    }
    if (!plan.active) {
      throw new ApiError(
        'validation_failed',
        `Service plan ${planId} is inactive and takes no new services.`,
        'plan_id',
      );
    }
    return plan;
  }

  private filterOf(query: ListServicesQueryDto) {
    return {
      subscriberId: query.subscriber_id,
      statuses: query.status,
      planId: query.plan_id,
      pppoeUsername: query.pppoe_username,
    };
  }
}
