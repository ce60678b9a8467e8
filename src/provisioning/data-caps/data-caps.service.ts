import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { Clock } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import type { AuthContext } from '../../common/request-context';
import { SYSTEM_SCOPE } from '../../common/request-context';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService, type EventType } from '../../events';
import { ProvisioningOrdersService } from '../provisioning-orders.service';
import type { Service, ServicePlan } from '../provisioning.entity';
import { RadiusRepository } from '../radius.repository';
import { ServicePlansRepository } from '../service-plans.repository';
import { OrderAction, ServiceStatus } from '../service-status';
import { ServicesRepository } from '../services.repository';
import { ServiceTopUp, ServiceUsagePeriod } from './data-cap.entity';
import { decide, periodOn } from './data-cap-rules';
import { DataCapsRepository, type CapCandidate } from './data-caps.repository';
import { DataCapDto, TopUpDto, type CreateTopUpDto } from './dto/data-cap.dto';

/**
 * Each subscriber's billing day (1–28) from its billing profile (its own, else the tenant's default); absent: none, so
 * the calendar month. Supplied by billing (DataCapsService.useBillingDays), which imports provisioning.
 */
export type BillingDaysLookup = (
  manager: EntityManager,
  tenantId: string,
  subscriberIds: string[],
) => Promise<Map<string, number>>;

/**
 * Records a top-up's price as a pending charge of the subscriber, in the caller's transaction (the subscriber locked
 * first, as billing records charges), 422 currency_mismatch when the subscriber is billed in another currency;
 * answers the charge's id. Supplied by billing (DataCapsService.useTopUpCharges).
 */
export type TopUpCharge = (
  tx: Tx,
  charge: {
    tenantId: string;
    subscriberId: string;
    serviceId: string;
    topUpId: string;
    description: string;
    amount: number;
    currency: string;
  },
) => Promise<string>;

/** The events a decision emits. */
const ORDER_EVENTS: Partial<Record<OrderAction, EventType>> = {
  [OrderAction.CapThrottle]: 'service.cap_reached',
  [OrderAction.CapBlock]: 'service.cap_reached',
  [OrderAction.CapRestore]: 'service.cap_restored',
};

/**
 * Data caps (docs/network.md, "Data caps"): each capped service's usage this billing period from RADIUS accounting,
 * the 80 % warning and the cap reached (a cap_throttle or cap_block order), the restore at the next period or after a
 * top-up (cap_restore), and the top-ups themselves, charged through billing.
 */
@Injectable()
export class DataCapsService {
  private billingDays: BillingDaysLookup | null = null;
  private topUpCharge: TopUpCharge | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly caps: DataCapsRepository,
    private readonly services: ServicesRepository,
    private readonly plans: ServicePlansRepository,
    private readonly orders: ProvisioningOrdersService,
    private readonly radius: RadiusRepository,
    private readonly clock: Clock,
  ) {}

  useBillingDays(lookup: BillingDaysLookup): void {
    this.billingDays = lookup;
  }

  useTopUpCharges(charge: TopUpCharge): void {
    this.topUpCharge = charge;
  }

  /** The current period of each subscriber's services (the Clock's today: a test tenant's frozen day). */
  async periods(
    manager: EntityManager,
    tenantId: string,
    subscriberIds: string[],
  ): Promise<Map<string, { start: string; end: string }>> {
    const days =
      (await this.billingDays?.(manager, tenantId, [...new Set(subscriberIds)])) ?? new Map<string, number>();
    const today = this.clock.today();
    return new Map(subscriberIds.map((id) => [id, periodOn(today, days.get(id) ?? 1)]));
  }

  /** GET /services/{id}/data-cap. */
  async state(tenantId: string, serviceId: string): Promise<DataCapDto> {
    const { manager } = this.dataSource;
    const service = await this.services.findById(manager, tenantId, serviceId);
    if (!service) {
      throw ApiError.notFound('service', serviceId);
    }
    const plan = await this.plans.findById(manager, tenantId, service.planId);
    const [dto] = await this.measure(manager, tenantId, [{ service, capBytes: plan?.dataCapBytes ?? null }]);
    return { ...dto, cap_action: plan?.capAction ?? null };
  }

  /**
   * Usage, allowance and period rows of the tenant's services, as DataCapDto (cap_action left null: the caller's),
   * in their order.
   */
  async measure(
    manager: EntityManager,
    tenantId: string,
    services: {
      service: Pick<
        Service,
        'id' | 'subscriberId' | 'radiusUsername' | 'createdAt' | 'terminatedAt' | 'capState'
      >;
      capBytes: number | null;
    }[],
  ): Promise<DataCapDto[]> {
    const periods = await this.periods(
      manager,
      tenantId,
      services.map(({ service }) => service.subscriberId),
    );
    const keys = services.map(({ service }) => ({
      serviceId: service.id,
      periodStart: periods.get(service.subscriberId)!.start,
    }));
    const used = await this.radius.periodUsage(
      services.map(({ service }) => ({
        username: service.radiusUsername,
        // FreeRADIUS records seconds: a session started in the second the service was made is its own.
        from: new Date(Math.floor(service.createdAt.getTime() / 1000) * 1000),
        until: service.terminatedAt,
        ...periods.get(service.subscriberId)!,
      })),
    );
    const topUps = await this.caps.topUpBytes(manager, tenantId, keys);
    const rows = await this.caps.periods(manager, tenantId, keys);
    return services.map(({ service, capBytes }, index) => {
      const period = periods.get(service.subscriberId)!;
      const topUpBytes = topUps.get(service.id) ?? 0;
      const row = rows.get(service.id);
      return {
        service_id: service.id,
        cap_state: service.capState,
        cap_bytes: capBytes,
        cap_action: null,
        period_start: period.start,
        period_end: period.end,
        used_bytes: used[index],
        top_up_bytes: topUpBytes,
        allowance_bytes: capBytes === null ? null : capBytes + topUpBytes,
        warned_at: row?.warnedAt?.toISOString() ?? null,
        reached_at: row?.reachedAt?.toISOString() ?? null,
      };
    });
  }

  /**
   * POST /services/{id}/top-ups: the bytes for the current period and, when it has a price, billing's pending charge,
   * in one transaction (subscriber, then service: the lock order). The cap worker restores a capped service the top-up
   * lifts back under its allowance on its next pass (woken by the caller).
   */
  async topUp(auth: AuthContext, serviceId: string, dto: CreateTopUpDto): Promise<TopUpDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const found = await this.services.findById(tx.manager, tenantId, serviceId);
      if (!found) {
        throw ApiError.notFound('service', serviceId);
      }
      const now = this.clock.now();
      const id = newId('tup', now);
      const plan = await this.cappedPlan(tx.manager, found);
      const description = dto.description ?? `Data top-up ${dto.bytes} bytes`;
      let chargeId: string | null = null;
      if (dto.price > 0) {
        if (!this.topUpCharge) {
          throw new Error('No top-up charge: BillingModule hands DataCapsService one at start-up');
        }
        chargeId = await this.topUpCharge(tx, {
          tenantId,
          subscriberId: found.subscriberId,
          serviceId,
          topUpId: id,
          description,
          amount: dto.price,
          currency: plan.currency,
        });
      }
      const service = await this.services.lockForUpdate(tx.manager, tenantId, serviceId);
      if (service.status === ServiceStatus.Terminated || service.planId !== plan.id) {
        // Moved while this request waited for the subscriber: judged again on what it is now.
        await this.cappedPlan(tx.manager, service);
      }
      const period = (await this.periods(tx.manager, tenantId, [service.subscriberId])).get(
        service.subscriberId,
      )!;
      const topUp = Object.assign(new ServiceTopUp(), {
        tenantId,
        id,
        serviceId,
        subscriberId: service.subscriberId,
        bytes: dto.bytes,
        price: dto.price,
        currency: plan.currency,
        description,
        periodStart: period.start,
        periodEnd: period.end,
        chargeId,
        createdAt: now,
      });
      await this.caps.insertTopUp(tx.manager, topUp);
      const answer = TopUpDto.from(topUp);
      await this.events.append(tx, {
        tenantId,
        type: 'service.cap_topped_up',
        subjectId: serviceId,
        object: answer,
      });
      return answer;
    });
  }

  /** The service's plan, which must have a data cap; the service must not be terminated. */
  private async cappedPlan(manager: EntityManager, service: Service): Promise<ServicePlan> {
    if (service.status === ServiceStatus.Terminated) {
      throw new ApiError(
        'invalid_state_transition',
        `Service ${service.id} is terminated and takes no top-ups.`,
        'service_id',
      );
    }
    const plan = await this.plans.findById(manager, service.tenantId, service.planId);
    if (!plan || plan.dataCapBytes === null) {
      throw new ApiError(
        'no_data_cap',
        `The plan of service ${service.id} has no data cap: a top-up would add nothing.`,
        'service_id',
      );
    }
    return plan;
  }

  /**
   * One pass of the cap worker over a batch of one tenant's candidates (at the tenant's time): measured together, then
   * each service that needs something acted on in a transaction of its own.
   */
  async check(tenantId: string, candidates: CapCandidate[]): Promise<void> {
    const { manager } = this.dataSource;
    const measured = await this.measure(
      manager,
      tenantId,
      candidates.map((candidate) => ({
        service: candidate,
        capBytes: candidate.dataCapBytes,
      })),
    );
    for (const [index, candidate] of candidates.entries()) {
      const dto = measured[index];
      const decision = decide({
        status: candidate.status,
        capState: candidate.capState,
        capBytes: dto.cap_bytes,
        capAction: null,
        usedBytes: dto.used_bytes,
        allowanceBytes: dto.allowance_bytes,
        warned: dto.warned_at !== null,
      });
      if (decision.warn || decision.action !== null) {
        await this.act(tenantId, candidate.id, dto);
      }
    }
  }

  /**
   * A service's warning, cap or restore, decided again under its lock (the measure may be a moment old, the service
   * moved): the period row records the warning and the cap once; an order is opened only when the service has none
   * open (else the next pass tries again), with its event.
   */
  private async act(tenantId: string, serviceId: string, measured: DataCapDto): Promise<void> {
    await this.transactionRunner.run(SYSTEM_SCOPE, async (tx) => {
      const service = await this.services.lockForUpdate(tx.manager, tenantId, serviceId);
      const plan = await this.plans.findById(tx.manager, tenantId, service.planId);
      const capBytes = plan?.dataCapBytes ?? null;
      const now = this.clock.now();
      const period = await this.caps.lockPeriod(
        tx.manager,
        Object.assign(new ServiceUsagePeriod(), {
          tenantId,
          serviceId,
          periodStart: measured.period_start,
          periodEnd: measured.period_end,
          warnedAt: null,
          reachedAt: null,
          createdAt: now,
        }),
      );
      const allowance = capBytes === null ? null : capBytes + measured.top_up_bytes;
      const decision = decide({
        status: service.status,
        capState: service.capState,
        capBytes,
        capAction: plan?.capAction ?? null,
        usedBytes: measured.used_bytes,
        allowanceBytes: allowance,
        warned: period.warnedAt !== null,
      });
      const state = (): DataCapDto => ({
        ...measured,
        cap_state: service.capState,
        cap_bytes: capBytes,
        cap_action: plan?.capAction ?? null,
        allowance_bytes: allowance,
        warned_at: period.warnedAt?.toISOString() ?? null,
        reached_at: period.reachedAt?.toISOString() ?? null,
      });
      if (decision.warn) {
        period.warnedAt = now;
        await this.events.append(tx, {
          tenantId,
          type: 'service.cap_warning',
          subjectId: serviceId,
          object: state(),
        });
      }
      const action = decision.action;
      if (action !== null && !(await this.orders.hasOpen(tx, service))) {
        const reaching = action !== OrderAction.CapRestore;
        const announce = !reaching || period.reachedAt === null;
        // Reached: said once per period; restored by a top-up within it: a second crossing is said again.
        period.reachedAt = reaching ? (period.reachedAt ?? now) : null;
        const order = await this.orders.open(tx, service, action, {
          planId: service.planId,
          reason: reaching
            ? `data cap reached: ${measured.used_bytes} of ${allowance} bytes`
            : capBytes === null
              ? 'the plan has no data cap'
              : `under the data cap: ${measured.used_bytes} of ${allowance} bytes`,
        });
        if (announce) {
          await this.events.append(tx, {
            tenantId,
            type: ORDER_EVENTS[action]!,
            subjectId: serviceId,
            object: state(),
            details: { order_id: order.id },
          });
        }
      }
      await this.caps.updatePeriod(tx.manager, period);
    });
  }
}
