import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import { TicketCommentsRepository } from './ticket-comments.repository';
import { TicketSettingsRepository } from './ticket-settings.repository';
import { TicketsRepository } from './tickets.repository';

/**
 * Deletes a test tenant's tickets, their comments and history, its counter and settings (its test clock is deleted,
 * docs/test-clocks.md).
 */
@Injectable()
export class TicketsPurge {
  constructor(
    private readonly tickets: TicketsRepository,
    private readonly comments: TicketCommentsRepository,
    private readonly settings: TicketSettingsRepository,
  ) {}

  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    await this.comments.purgeTenant(tx.manager, tenantId);
    await this.tickets.purgeTenant(tx.manager, tenantId);
    await this.settings.purgeTenant(tx.manager, tenantId);
  }
}
