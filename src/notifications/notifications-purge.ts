import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import { NotificationSettingsRepository } from './notification-settings.repository';
import { NotificationsRepository } from './notifications.repository';

/**
 * Deletes a test tenant's notifications and their attempts, templates and preferences (its test clock is deleted,
 * docs/test-clocks.md).
 */
@Injectable()
export class NotificationsPurge {
  constructor(
    private readonly notifications: NotificationsRepository,
    private readonly settings: NotificationSettingsRepository,
  ) {}

  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    await this.notifications.purgeTenant(tx.manager, tenantId);
    await this.settings.purgeTenant(tx.manager, tenantId);
  }
}
