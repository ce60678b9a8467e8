import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import { SubscribersRepository } from './subscribers.repository';

/**
 * Deletes a test tenant's subscribers (its test clock is deleted, docs/test-clocks.md), once the rows of other
 * modules that name them are gone.
 */
@Injectable()
export class SubscribersPurge {
  constructor(private readonly subscribers: SubscribersRepository) {}

  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    await this.subscribers.purgeTenant(tx.manager, tenantId);
  }
}
