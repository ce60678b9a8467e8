import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** Whether a tenant's terminated services are credited their unused days (the termination_billing rule). */
export type TerminationCreditPolicy = (manager: EntityManager, tenantId: string) => Promise<boolean>;

/**
 * The termination_billing rule as billing asks it (the bill run's lines, the settlement of an ended service).
 * Automation owns the rule's setting and registers the policy at start, so billing does not import automation; until
 * then every termination is credited.
 */
@Injectable()
export class TerminationCredit {
  private policy: TerminationCreditPolicy = () => Promise.resolve(true);

  /** Registered by automation, which owns the termination_billing rule's setting. */
  use(policy: TerminationCreditPolicy): void {
    this.policy = policy;
  }

  /** Whether the tenant's terminated services are credited their unused days. */
  appliesTo(manager: EntityManager, tenantId: string): Promise<boolean> {
    return this.policy(manager, tenantId);
  }
}
