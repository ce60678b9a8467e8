import { Injectable } from '@nestjs/common';
import { AutomationPurge } from '../automation';
import { BillingPurge } from '../billing';
import type { Tx } from '../database/transaction-runner';
import { EventsService } from '../events';
import { ImportsPurge } from '../imports';
import { NotificationsPurge } from '../notifications';
import { PortalPurge } from '../portal';
import { ProvisioningPurge } from '../provisioning';
import { SubscribersPurge } from '../subscribers';
import { TicketsPurge } from '../tickets';
import { WebhooksPurge } from '../webhooks';

/**
 * A deleted test clock's tenant, every module's rows of it (docs/test-clocks.md): each module deletes its own tables
 * (one owner per table), called here in the order the foreign keys allow, in the deletion's one transaction; the
 * gateway deletes its own rows (tokens, idempotency keys, settings, the clock, the tenant) after these.
 */
@Injectable()
export class TestTenantPurge {
  constructor(
    private readonly webhooks: WebhooksPurge,
    private readonly notifications: NotificationsPurge,
    private readonly portal: PortalPurge,
    private readonly imports: ImportsPurge,
    private readonly automation: AutomationPurge,
    private readonly tickets: TicketsPurge,
    private readonly billing: BillingPurge,
    private readonly provisioning: ProvisioningPurge,
    private readonly subscribers: SubscribersPurge,
    private readonly events: EventsService,
  ) {}

  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    // Deliveries and notifications name events; notifications, tickets, billing and services name subscribers.
    await this.webhooks.purgeTenant(tx, tenantId);
    await this.notifications.purgeTenant(tx, tenantId);
    await this.portal.purgeTenant(tx, tenantId);
    await this.imports.purgeTenant(tx, tenantId);
    await this.automation.purgeTenant(tx, tenantId);
    await this.tickets.purgeTenant(tx, tenantId);
    await this.billing.purgeTenant(tx, tenantId);
    await this.provisioning.purgeTenant(tx, tenantId);
    await this.subscribers.purgeTenant(tx, tenantId);
    // Subscribers name their billing profile.
    await this.billing.purgeProfiles(tx, tenantId);
    await this.events.purgeTenant(tx, tenantId);
  }
}
