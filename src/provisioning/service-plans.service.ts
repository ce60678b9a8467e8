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
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import {
  CreateServicePlanDto,
  PlanNetworkFieldsDto,
  ListServicePlansQueryDto,
  ServicePlanDto,
  UpdateServicePlanDto,
} from './dto/service-plan.dto';
import { ServicePlan } from './provisioning.entity';
import { ServicePlansRepository } from './service-plans.repository';
import { ServiceLifecycle } from './service-lifecycle';

function writeError(error: unknown): ApiError | null {
  return isUniqueViolation(error, 'uq_service_plans_name')
    ? new ApiError('duplicate_service_plan', 'A service plan with this name already exists.', 'name')
    : null;
}

/** Whether two tax_rate_ids lists (null: the profile's) are the same, in order. */
function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  return a === b || (a !== null && b !== null && a.length === b.length && a.every((id, i) => id === b[i]));
}

/** The data cap and burst fields: API name and entity key. */
const NETWORK_FIELDS = [
  ['data_cap_bytes', 'dataCapBytes'],
  ['cap_action', 'capAction'],
  ['throttle_download_kbps', 'throttleDownloadKbps'],
  ['throttle_upload_kbps', 'throttleUploadKbps'],
  ['burst_download_kbps', 'burstDownloadKbps'],
  ['burst_upload_kbps', 'burstUploadKbps'],
  ['burst_threshold_download_kbps', 'burstThresholdDownloadKbps'],
  ['burst_threshold_upload_kbps', 'burstThresholdUploadKbps'],
  ['burst_time_s', 'burstTimeS'],
] as const;

type NetworkFields = Pick<ServicePlan, (typeof NETWORK_FIELDS)[number][1]>;

/** What may not change in place while a live service uses the plan: what the network and the bills see. */
const IN_USE_FIELDS = ['download_kbps', 'upload_kbps', 'price', ...NETWORK_FIELDS.map(([field]) => field)];

/** The network fields a request sets over `current` (absent: unchanged; null: cleared). */
function networkFieldsOf(dto: PlanNetworkFieldsDto, current: NetworkFields | null): NetworkFields {
  const fields = {} as Record<string, unknown>;
  for (const [field, key] of NETWORK_FIELDS) {
    const value = dto[field];
    fields[key] = value === undefined ? (current?.[key] ?? null) : value;
  }
  return fields as unknown as NetworkFields;
}

/**
 * The data cap and burst fields together (docs/network.md): a cap with its action; the throttle rates with
 * `throttle`, below the plan's rates; burst all five or none, a burst rate above the rate, a threshold at most it.
 * 422 validation_failed naming the field otherwise.
 */
export function checkNetworkFields(
  plan: NetworkFields & Pick<ServicePlan, 'downloadKbps' | 'uploadKbps'>,
): void {
  const fail = (field: string, message: string) => {
    throw new ApiError('validation_failed', message, field);
  };
  if ((plan.dataCapBytes === null) !== (plan.capAction === null)) {
    fail(
      plan.dataCapBytes === null ? 'data_cap_bytes' : 'cap_action',
      'data_cap_bytes and cap_action come together: set both, or neither.',
    );
  }
  const throttle = plan.capAction === 'throttle';
  for (const [field, key, rate, rateField] of [
    ['throttle_download_kbps', 'throttleDownloadKbps', plan.downloadKbps, 'download_kbps'],
    ['throttle_upload_kbps', 'throttleUploadKbps', plan.uploadKbps, 'upload_kbps'],
  ] as const) {
    const value = plan[key];
    if (throttle && value === null) {
      fail(field, `${field} is required with cap_action throttle.`);
    }
    if (!throttle && value !== null) {
      fail(field, `${field} applies to cap_action throttle only.`);
    }
    if (value !== null && value >= rate) {
      fail(field, `${field} must be below ${rateField} (${rate}).`);
    }
  }
  const burst = NETWORK_FIELDS.filter(([field]) => field.startsWith('burst_'));
  const set = burst.filter(([, key]) => plan[key] !== null);
  if (set.length > 0 && set.length < burst.length) {
    const missing = burst.find(([, key]) => plan[key] === null)!;
    fail(missing[0], 'The burst fields come together: set all five, or none.');
  }
  if (set.length === 0) {
    return;
  }
  if (plan.burstDownloadKbps! <= plan.downloadKbps) {
    fail('burst_download_kbps', `burst_download_kbps must be above download_kbps (${plan.downloadKbps}).`);
  }
  if (plan.burstUploadKbps! <= plan.uploadKbps) {
    fail('burst_upload_kbps', `burst_upload_kbps must be above upload_kbps (${plan.uploadKbps}).`);
  }
  if (plan.burstThresholdDownloadKbps! > plan.downloadKbps) {
    fail(
      'burst_threshold_download_kbps',
      `burst_threshold_download_kbps must be at most download_kbps (${plan.downloadKbps}).`,
    );
  }
  if (plan.burstThresholdUploadKbps! > plan.uploadKbps) {
    fail(
      'burst_threshold_upload_kbps',
      `burst_threshold_upload_kbps must be at most upload_kbps (${plan.uploadKbps}).`,
    );
  }
}

/**
 * Checks a plan's tax_rate_ids against the tenant's tax rates, in the caller's transaction, throwing the error to
 * answer: 422 invalid_reference at `tax_rate_ids.N` for an id that is no active rate of the tenant, 422
 * validation_failed when the list mixes inclusive and exclusive rates. Supplied by billing, which owns tax_rates
 * and imports provisioning (ServicePlansService.useTaxRates): provisioning never imports billing.
 */
export type TaxRatesCheck = (
  manager: EntityManager,
  tenantId: string,
  ids: readonly string[],
) => Promise<void>;

@Injectable()
export class ServicePlansService {
  private taxRates: TaxRatesCheck | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly plans: ServicePlansRepository,
    private readonly clock: Clock,
    private readonly lifecycle: ServiceLifecycle,
  ) {}

  /** Registers billing's check of a plan's tax_rate_ids (see TaxRatesCheck). */
  useTaxRates(check: TaxRatesCheck): void {
    this.taxRates = check;
  }

  async create(auth: AuthContext, dto: CreateServicePlanDto): Promise<ServicePlanDto> {
    const now = this.clock.now();
    const plan = Object.assign(new ServicePlan(), {
      tenantId: auth.tenantId,
      id: newId('plan', now),
      name: dto.name,
      downloadKbps: dto.download_kbps,
      uploadKbps: dto.upload_kbps,
      price: dto.price,
      currency: dto.currency,
      billingPeriod: dto.billing_period,
      active: dto.active,
      createdAt: now,
      updatedAt: now,
      taxRateIds: dto.tax_rate_ids ?? null,
      ...networkFieldsOf(dto, null),
    });
    checkNetworkFields(plan);
    try {
      return await this.transactionRunner.run(auth, async (tx) => {
        await this.assertTaxRates(tx.manager, auth.tenantId, plan.taxRateIds);
        await this.plans.insert(tx.manager, plan);
        const answer = ServicePlanDto.from(plan);
        await this.events.append(tx, {
          tenantId: auth.tenantId,
          type: 'service_plan.created',
          subjectId: plan.id,
          object: answer,
        });
        return answer;
      });
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }

  /** The plans a subscriber's services are on: what the portal shows by a service's plan_id (docs/portal.md). */
  plansOfSubscriber(tenantId: string, subscriberId: string): Promise<ServicePlan[]> {
    return this.plans.plansOfSubscriber(this.dataSource.manager, tenantId, subscriberId);
  }

  async get(tenantId: string, id: string): Promise<ServicePlan> {
    const plan = await this.plans.findById(this.dataSource.manager, tenantId, id);
    if (!plan) {
      throw ApiError.notFound('service plan', id);
    }
    return plan;
  }

  list(tenantId: string, query: ListServicePlansQueryDto): Promise<Page<ServicePlan>> {
    const active = query.active === undefined ? undefined : query.active === 'true';
    return this.plans.page(this.dataSource.manager, tenantId, active, query);
  }

  async update(auth: AuthContext, id: string, dto: UpdateServicePlanDto): Promise<ServicePlanDto> {
    try {
      return await this.transactionRunner.run(auth, async (tx) => {
        const plan = await this.plans.lockForUpdate(tx.manager, auth.tenantId, id);
        await assertIfMatch(() => ServicePlanDto.from(plan));
        const next = {
          name: dto.name ?? plan.name,
          downloadKbps: dto.download_kbps ?? plan.downloadKbps,
          uploadKbps: dto.upload_kbps ?? plan.uploadKbps,
          price: dto.price ?? plan.price,
          active: dto.active ?? plan.active,
          taxRateIds: dto.tax_rate_ids === undefined ? plan.taxRateIds : dto.tax_rate_ids,
          ...networkFieldsOf(dto, plan),
        };
        checkNetworkFields(next);
        const changed: string[] = (
          [
            ['name', 'name'],
            ['download_kbps', 'downloadKbps'],
            ['upload_kbps', 'uploadKbps'],
            ['price', 'price'],
            ['active', 'active'],
            ...NETWORK_FIELDS,
          ] as const
        )
          .filter(([, key]) => next[key] !== plan[key])
          .map(([field]) => field);
        // A list sent unchanged is not checked again (a rate of it may have been archived since).
        if (!sameList(next.taxRateIds, plan.taxRateIds)) {
          await this.assertTaxRates(tx.manager, auth.tenantId, next.taxRateIds);
          changed.push('tax_rate_ids');
        }
        const frozen = changed.find((field) => IN_USE_FIELDS.includes(field));
        if (frozen && (await this.plans.inUse(tx.manager, auth.tenantId, id))) {
          throw new ApiError(
            'plan_in_use',
            `A live service uses this plan, so its ${frozen} cannot change in place: create a new plan and ` +
              'change_plan the services to it.',
            frozen,
          );
        }
        if (changed.length === 0) {
          return ServicePlanDto.from(plan);
        }
        Object.assign(plan, next, { updatedAt: this.clock.now() });
        await this.plans.update(tx.manager, plan);
        if (changed.includes('price')) {
          // The MRR of every past service on the plan is its price now (docs/reports.md, "MRR").
          await this.lifecycle.planRepriced(tx, auth.tenantId, plan.id);
        }
        const answer = ServicePlanDto.from(plan);
        await this.events.append(tx, {
          tenantId: auth.tenantId,
          type: 'service_plan.updated',
          subjectId: plan.id,
          object: answer,
          details: { changed_fields: changed },
        });
        return answer;
      });
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }

  /** A plan's tax_rate_ids (null: the profile's), checked by billing (TaxRatesCheck) in the caller's transaction. */
  private async assertTaxRates(
    manager: EntityManager,
    tenantId: string,
    ids: readonly string[] | null,
  ): Promise<void> {
    if (!ids || ids.length === 0) {
      return;
    }
    if (!this.taxRates) {
      throw new Error(
        'No tax rate check: BillingModule hands ServicePlansService one at start-up (useTaxRates)',
      );
    }
    await this.taxRates(manager, tenantId, ids);
  }
}
