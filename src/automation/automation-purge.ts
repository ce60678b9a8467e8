import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import { AutomationRepository } from './automation.repository';

/** Deletes a test tenant's rule settings and effects (its test clock is deleted, docs/test-clocks.md). */
@Injectable()
export class AutomationPurge {
  constructor(private readonly automation: AutomationRepository) {}

  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    await this.automation.purgeTenant(tx.manager, tenantId);
  }
}
