import { Module } from '@nestjs/common';
import { AutomationModule } from '../automation';
import { BillingModule } from '../billing';
import { EventsModule } from '../events';
import { TenancyModule } from '../gateway';
import { ImportsModule } from '../imports';
import { NotificationsModule } from '../notifications';
import { PortalModule } from '../portal';
import { ProvisioningModule } from '../provisioning';
import { SubscribersModule } from '../subscribers';
import { TicketsModule } from '../tickets';
import { WebhooksModule } from '../webhooks';
import { TestClockAdvancer } from './test-clock-advancer';
import { TestClocksApi } from './test-clocks.api';
import { TestClocksController } from './test-clocks.controller';
import { TestTenantPurge } from './test-tenant-purge';

/**
 * Test clocks (docs/test-clocks.md): a test tenant's time, moved forward by advances that do what falls due; deleted
 * with every record of its tenant, each module purging its own tables.
 */
@Module({
  imports: [
    EventsModule,
    TenancyModule,
    BillingModule,
    AutomationModule,
    SubscribersModule,
    TicketsModule,
    ProvisioningModule,
    WebhooksModule,
    NotificationsModule,
    ImportsModule,
    PortalModule,
  ],
  controllers: [TestClocksController],
  providers: [TestClocksApi, TestClockAdvancer, TestTenantPurge],
})
export class TestClocksModule {}
