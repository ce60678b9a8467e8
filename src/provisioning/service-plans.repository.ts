import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../common/pagination';
import { lockForUpdate } from '../database/lock-for-update';
import { ProvisioningOrder, Service, ServicePlan } from './provisioning.entity';
import { OPEN_ORDER_STATUSES, ServiceStatus } from './service-status';

/** What a bill run reads of a plan: its name, price, currency and billing period. */
export interface PlanPricing {
  id: string;
  name: string;
  price: number;
  currency: string;
  billingPeriod: string;
}

/**
 * The service plans table in another module's statement, `service_plans <alias>` after its FROM or JOIN: billing's
 * reports (src/billing/reports), which price every service's plan history in one statement. They read its tenant_id,
 * id, name, price, currency and billing_period. Other reads call this repository (docs/architecture.md, "Owns (tables)").
 */
export function servicePlansTable(alias: string): string {
  return `service_plans ${alias}`;
}

/** The only place the service_plans table is read and written (and servicePlansTable the way others' statements join it). */
@Injectable()
export class ServicePlansRepository {
  async insert(manager: EntityManager, plan: ServicePlan): Promise<void> {
    await manager.insert(ServicePlan, plan);
  }

  /** The plans of `ids` (any tenant's: the caller checks). */
  findByIds(manager: EntityManager, ids: string[]): Promise<ServicePlan[]> {
    return manager.find(ServicePlan, { where: { id: In([...new Set(ids)]) } });
  }

  /** The plans a subscriber's services are on (terminated ones included), by name. */
  plansOfSubscriber(manager: EntityManager, tenantId: string, subscriberId: string): Promise<ServicePlan[]> {
    return manager
      .createQueryBuilder(ServicePlan, 'plan')
      .where('plan.tenantId = :tenantId', { tenantId })
      .andWhere(
        'plan.id IN (SELECT s.plan_id FROM services s WHERE s.tenant_id = :tenantId AND s.subscriber_id = :subscriberId)',
        { subscriberId },
      )
      .orderBy('plan.name')
      .getMany();
  }

  findById(manager: EntityManager, tenantId: string, id: string): Promise<ServicePlan | null> {
    return manager.findOne(ServicePlan, { where: { tenantId, id } });
  }

  /** The tenant's plans named among `names` (a name is unique per tenant: uq_service_plans_name). */
  findByNames(manager: EntityManager, tenantId: string, names: string[]): Promise<ServicePlan[]> {
    return manager.find(ServicePlan, { where: { tenantId, name: In([...new Set(names)]) } });
  }

  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<ServicePlan> {
    return lockForUpdate(manager, ServicePlan, tenantId, id, 'service plan');
  }

  async update(manager: EntityManager, plan: ServicePlan): Promise<void> {
    const changes: Partial<ServicePlan> = { ...plan };
    for (const fixed of ['tenantId', 'id', 'createdAt'] as const) {
      delete changes[fixed];
    }
    await manager.update(ServicePlan, { tenantId: plan.tenantId, id: plan.id }, changes);
  }

  /** The tenant's plans of `planIds` as a bill run prices them. */
  async pricing(manager: EntityManager, tenantId: string, planIds: string[]): Promise<PlanPricing[]> {
    const rows: { id: string; name: string; price: string; currency: string; billing_period: string }[] =
      await manager.query(
        `SELECT id, name, price, currency, billing_period FROM service_plans WHERE tenant_id = $1 AND id = ANY($2::text[])`,
        [tenantId, planIds],
      );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      price: Number(row.price),
      currency: row.currency,
      billingPeriod: row.billing_period,
    }));
  }

  /** The plans' own tax rate lists (null: the billing profile's defaults apply), for billing's tax computation. */
  async taxRateIds(
    manager: EntityManager,
    tenantId: string,
    planIds: readonly string[],
  ): Promise<Map<string, string[] | null>> {
    if (planIds.length === 0) {
      return new Map();
    }
    const rows: { id: string; tax_rate_ids: string[] | null }[] = await manager.query(
      `SELECT id, tax_rate_ids FROM service_plans WHERE tenant_id = $1 AND id = ANY($2::text[])`,
      [tenantId, planIds],
    );
    return new Map(rows.map((row) => [row.id, row.tax_rate_ids]));
  }

  /** Whether a service that is not terminated is on the plan, or an open order moves one to it. */
  async inUse(manager: EntityManager, tenantId: string, planId: string): Promise<boolean> {
    const service = await manager
      .getRepository(Service)
      .createQueryBuilder('service')
      .where('service.tenantId = :tenantId AND service.planId = :planId', { tenantId, planId })
      .andWhere('service.status <> :terminated', { terminated: ServiceStatus.Terminated })
      .getExists();
    if (service) {
      return true;
    }
    return manager
      .getRepository(ProvisioningOrder)
      .createQueryBuilder('o')
      .where('o.tenantId = :tenantId AND o.planId = :planId', { tenantId, planId })
      .andWhere('o.status IN (:...open)', { open: OPEN_ORDER_STATUSES })
      .getExists();
  }

  page(
    manager: EntityManager,
    tenantId: string,
    active: boolean | undefined,
    query: PageQueryDto,
  ): Promise<Page<ServicePlan>> {
    const qb = manager
      .getRepository(ServicePlan)
      .createQueryBuilder('plan')
      .where('plan.tenantId = :tenantId', { tenantId });
    if (active !== undefined) {
      qb.andWhere('plan.active = :active', { active });
    }
    return paginate(qb, query);
  }

  /** Deletes every service_plans row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM service_plans WHERE tenant_id = $1', [tenantId]);
  }
}
