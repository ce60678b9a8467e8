import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ProvisioningOrdersRepository, ServicePlansRepository, servicesTable } from '../../provisioning';
import type { AdvanceCharge, PlanInfo, PlanPeriod } from './plan-days';
import type { ServiceBillingState } from './proration';

/** A service of a due subscriber as the run reads it (services and plans are provisioning's; read here only). */
export interface ServiceRow {
  id: string;
  subscriberId: string;
  planId: string;
  status: string;
  activatedAt: Date | null;
  terminatedAt: Date | null;
  updatedAt: Date;
  /** The service's billing state (service_billing); null until first billed. */
  billedUntil: string | null;
  openCharges: AdvanceCharge[];
}

/**
 * Services with something to bill (`v`, its service_billing row `sb` left-joined; `start`: the earliest day a
 * never-billed service is charged from): active and suspended ones, and ended ones with a charge to true up or days
 * before their termination not billed yet.
 */
export const billableService = (start: string) => `(v.status IN ('active', 'suspended')
  OR jsonb_array_length(sb.open_charges) > 0
  OR (v.status = 'terminated' AND v.activated_at IS NOT NULL
      AND (v.terminated_at AT TIME ZONE 'UTC')::date > COALESCE(sb.billed_until, ${start}::date)))`;

export const SERVICE_BILLING_JOIN = `LEFT JOIN service_billing sb ON sb.tenant_id = v.tenant_id AND sb.service_id = v.id`;

/**
 * The only place service_billing (how far each service is billed, and its advance charges to true up) is written, and
 * the bill run's reads of what it bills: the services with their billing state (provisioning's table joined through
 * its servicesTable), their plans and plan history (read through provisioning's repositories).
 */
@Injectable()
export class ServiceBillingRepository {
  constructor(
    private readonly servicePlans: ServicePlansRepository,
    private readonly orders: ProvisioningOrdersRepository,
  ) {}

  /** The services of these subscribers that bill or billed during the previous period. */
  async services(
    manager: EntityManager,
    tenantId: string,
    subscriberIds: string[],
    previousStart: string,
  ): Promise<ServiceRow[]> {
    const rows: Record<string, unknown>[] = await manager.query(
      `SELECT v.id, v.subscriber_id, v.plan_id, v.status, v.activated_at, v.terminated_at, v.updated_at,
              to_char(sb.billed_until, 'YYYY-MM-DD') AS billed_until, sb.open_charges
         FROM ${servicesTable('v')} ${SERVICE_BILLING_JOIN}
        WHERE v.tenant_id = $1 AND v.subscriber_id = ANY($2::text[]) AND ${billableService('$3')}
        ORDER BY v.created_at, v.id`,
      [tenantId, subscriberIds, previousStart],
    );
    return rows.map(serviceRow);
  }

  /** These services (ended ones, settled at their termination), whatever they have left to bill. */
  async servicesByIds(manager: EntityManager, tenantId: string, serviceIds: string[]): Promise<ServiceRow[]> {
    const rows: Record<string, unknown>[] = await manager.query(
      `SELECT v.id, v.subscriber_id, v.plan_id, v.status, v.activated_at, v.terminated_at, v.updated_at,
              to_char(sb.billed_until, 'YYYY-MM-DD') AS billed_until, sb.open_charges
         FROM ${servicesTable('v')} ${SERVICE_BILLING_JOIN}
        WHERE v.tenant_id = $1 AND v.id = ANY($2::text[])
        ORDER BY v.id`,
      [tenantId, serviceIds],
    );
    return rows.map(serviceRow);
  }

  /** Records how far each service is billed (one statement). */
  async saveStates(
    manager: EntityManager,
    tenantId: string,
    states: (ServiceBillingState & { subscriberId: string })[],
    at: Date,
  ): Promise<void> {
    if (states.length === 0) {
      return;
    }
    await manager.query(
      `INSERT INTO service_billing (tenant_id, service_id, subscriber_id, billed_until, open_charges, updated_at)
       SELECT $1, x.service_id, x.subscriber_id, x.billed_until, x.open_charges, $3
         FROM jsonb_to_recordset($2::jsonb) AS x(service_id text, subscriber_id text, billed_until date, open_charges jsonb)
       ON CONFLICT (tenant_id, service_id) DO UPDATE
         SET billed_until = EXCLUDED.billed_until, open_charges = EXCLUDED.open_charges, updated_at = EXCLUDED.updated_at`,
      [
        tenantId,
        JSON.stringify(
          states.map((state) => ({
            service_id: state.serviceId,
            subscriber_id: state.subscriberId,
            billed_until: state.billedUntil,
            open_charges: state.openCharges,
          })),
        ),
        at,
      ],
    );
  }

  /** The plans set on these services (completed activate and change_plan orders), oldest first. */
  planChanges(
    manager: EntityManager,
    tenantId: string,
    serviceIds: string[],
  ): Promise<{ serviceId: string; planId: string; at: Date }[]> {
    return this.orders.planChanges(manager, tenantId, serviceIds);
  }

  /** These plans as the proration takes them (prices as integers of the minor unit). */
  async plans(manager: EntityManager, tenantId: string, planIds: string[]): Promise<PlanInfo[]> {
    const plans = await this.servicePlans.pricing(manager, tenantId, planIds);
    return plans.map((plan) => ({ ...plan, billingPeriod: plan.billingPeriod as PlanPeriod }));
  }

  /** Deletes every service_billing row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM service_billing WHERE tenant_id = $1', [tenantId]);
  }
}

function serviceRow(row: Record<string, unknown>): ServiceRow {
  return {
    id: row.id as string,
    subscriberId: row.subscriber_id as string,
    planId: row.plan_id as string,
    status: row.status as string,
    activatedAt: row.activated_at as Date | null,
    terminatedAt: row.terminated_at as Date | null,
    updatedAt: row.updated_at as Date,
    billedUntil: (row.billed_until as string | null) ?? null,
    openCharges: (row.open_charges as AdvanceCharge[] | null) ?? [],
  };
}
