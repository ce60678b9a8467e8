import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import type { Service } from './provisioning.entity';

/** Called in the transaction that terminates services (their subscribers locked first), per tenant. */
export type ServicesEndedHook = (tx: Tx, tenantId: string, serviceIds: string[]) => Promise<void>;

/**
 * What other modules do when a service ends, in the same transaction: billing settles its prepaid and unbilled days
 * (registered by BillingModule; provisioning never imports billing).
 */
@Injectable()
export class ServiceLifecycle {
  private readonly endedHooks: ServicesEndedHook[] = [];

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
