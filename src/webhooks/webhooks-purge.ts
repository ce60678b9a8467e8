import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhooksRepository } from './webhooks.repository';

/** Deletes a test tenant's webhooks, their deliveries and attempts (its test clock is deleted, docs/test-clocks.md). */
@Injectable()
export class WebhooksPurge {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
  ) {}

  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    await this.deliveries.purgeTenant(tx.manager, tenantId);
    await this.webhooks.purgeTenant(tx.manager, tenantId);
  }
}
