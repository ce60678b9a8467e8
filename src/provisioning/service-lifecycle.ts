import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import type { Service } from './provisioning.entity';

/** Called in the transaction that terminates services (their subscribers locked first), per tenant. */
export type ServicesEndedHook = (tx: Tx, tenantId: string, serviceIds: string[]) => Promise<void>;

/** Called in the transaction that completes activate, change_plan or terminate orders, per tenant. */
export type PlanHistoryHook = (tx: Tx, tenantId: string, subscriberIds: string[]) => Promise<void>;

/** Called in the transaction that changes a plan's price. */
export type PlanRepricedHook = (tx: Tx, tenantId: string, planId: string) => Promise<void>;

/**
 * What other modules do when a service ends, in the same transaction: billing settles its prepaid and unbilled days
 * (registered by BillingModule; provisioning never imports billing). Likewise when a subscriber's plan history moves
 * (an activate, change_plan or terminate order completes) or a plan's price changes: billing's reports keep the
 * subscribers' MRR steps (docs/reports.md, "How the reports are kept").
 */
@Injectable()
export class ServiceLifecycle {
  private readonly endedHooks: ServicesEndedHook[] = [];
  private readonly historyHooks: PlanHistoryHook[] = [];
  private readonly repricedHooks: PlanRepricedHook[] = [];

  onPlanHistory(hook: PlanHistoryHook): void {
    this.historyHooks.push(hook);
  }

  onPlanRepriced(hook: PlanRepricedHook): void {
    this.repricedHooks.push(hook);
  }

  /** The subscribers (of the services of `orders`) whose plan history moved, per tenant. */
  async planHistoryMoved(
    tx: Tx,
    orders: readonly { tenantId: string; subscriberId: string }[],
  ): Promise<void> {
    const byTenant = new Map<string, string[]>();
    for (const order of orders) {
      byTenant.set(order.tenantId, [...(byTenant.get(order.tenantId) ?? []), order.subscriberId]);
    }
    for (const hook of this.historyHooks) {
      for (const [tenantId, ids] of byTenant) {
        await hook(tx, tenantId, [...new Set(ids)]);
      }
    }
  }

  async planRepriced(tx: Tx, tenantId: string, planId: string): Promise<void> {
    for (const hook of this.repricedHooks) {
      await hook(tx, tenantId, planId);
    }
  }

  onEnded(hook: ServicesEndedHook): void {
    this.endedHooks.push(hook);
  }

  async ended(tx: Tx, services: readonly Service[]): Promise<void> {
    const byTenant = new Map<string, string[]>();
    for (const service of services) {
      byTenant.set(service.tenantId, [...(byTenant.get(service.tenantId) ?? []), service.id]);
    }
    for (const hook of this.endedHooks) {
      for (const [tenantId, ids] of byTenant) {
        await hook(tx, tenantId, ids);
      }
    }
  }
}
