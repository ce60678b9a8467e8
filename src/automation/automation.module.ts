import { Module, OnModuleInit } from '@nestjs/common';
import { BillingModule, TerminationCredit } from '../billing';
import { EventsModule } from '../events';
import { TenancyModule } from '../gateway';
import { ProvisioningModule } from '../provisioning';
import { SubscribersModule } from '../subscribers';
import { TicketsModule } from '../tickets';
import { AutomationController } from './automation.controller';
import { AutomationRepository } from './automation.repository';
import { AutomationPurge } from './automation-purge';
import { AutomationService } from './automation.service';
import { AutomationWorker } from './automation-worker';
import { DunningSweeps } from './dunning-sweeps';
import { FeeRules } from './fee-rules';
import { TenantDunningDay } from './tenant-dunning-day';

/** The rules that tie billing, the network and support together (docs/automation.md). */
@Module({
  imports: [EventsModule, SubscribersModule, BillingModule, ProvisioningModule, TicketsModule, TenancyModule],
  controllers: [AutomationController],
  providers: [
    AutomationRepository,
    AutomationPurge,
    AutomationService,
    AutomationWorker,
    FeeRules,
    DunningSweeps,
    TenantDunningDay,
  ],
  exports: [TenantDunningDay, AutomationPurge],
})
export class AutomationModule implements OnModuleInit {
  constructor(
    private readonly terminationCredit: TerminationCredit,
    private readonly automation: AutomationService,
  ) {}

  /** termination_billing is applied by bill runs: they ask this module whether it is on for the tenant. */
  onModuleInit(): void {
    this.terminationCredit.use((manager, tenantId) =>
      this.automation.isEnabled(manager, tenantId, 'termination_billing'),
    );
  }
}
