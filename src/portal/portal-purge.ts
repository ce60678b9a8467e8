import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import { PortalRepository } from './portal.repository';

/** Deletes a test tenant's portal invites and sessions (its test clock is deleted, docs/test-clocks.md). */
@Injectable()
export class PortalPurge {
  constructor(private readonly portal: PortalRepository) {}

  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    await this.portal.purgeTenant(tx.manager, tenantId);
  }
}
