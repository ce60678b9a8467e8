import { Module, OnModuleInit } from '@nestjs/common';
import { ProvisioningModule, ServicesService } from '../provisioning';
import { EventsModule } from '../events';
import { SubscribersModule } from '../subscribers';
import { InvoicesController } from './invoices/invoices.controller';
import { InvoicesRepository } from './invoices/invoices.repository';
import { InvoicesService } from './invoices/invoices.service';
import { BalanceController } from './ledger/balance.controller';
import { LedgerRepository } from './ledger/ledger.repository';
import { LedgerService } from './ledger/ledger.service';
import { BillingProfilesController } from './profiles/billing-profiles.controller';
import { BillingProfilesRepository } from './profiles/billing-profiles.repository';
import { BillingProfilesService } from './profiles/billing-profiles.service';
import { AllocatePaymentUseCase } from './transactions/allocate-payment.usecase';
import { TransactionsController } from './transactions/transactions.controller';
import { TransactionsRepository } from './transactions/transactions.repository';
import { TransactionsService } from './transactions/transactions.service';
import { BillingRunWorker } from './runs/billing-run-worker';
import { BillingRunner } from './runs/billing-runner';
import { BillingRunsController } from './runs/billing-runs.controller';
import { BillingRunsRepository } from './runs/billing-runs.repository';
import { BillingRunsService } from './runs/billing-runs.service';

/** Billing profiles, invoices, transactions, allocations, the subscriber ledger and recurring bill runs. */
@Module({
  imports: [EventsModule, SubscribersModule, ProvisioningModule],
  controllers: [
    BillingProfilesController,
    InvoicesController,
    TransactionsController,
    BalanceController,
    BillingRunsController,
  ],
  providers: [
    BillingProfilesRepository,
    InvoicesRepository,
    TransactionsRepository,
    LedgerRepository,
    InvoicesService,
    TransactionsService,
    AllocatePaymentUseCase,
    LedgerService,
    BillingProfilesService,
    BillingRunsRepository,
    BillingRunner,
    BillingRunWorker,
    BillingRunsService,
  ],
  exports: [InvoicesService, TransactionsService, LedgerService, BillingProfilesService, BillingRunner],
})
export class BillingModule implements OnModuleInit {
  constructor(
    private readonly services: ServicesService,
    private readonly profiles: BillingProfilesService,
  ) {}

  /** A service is billed through its subscriber's profile (or the default): its plan must be in that currency. */
  onModuleInit(): void {
    this.services.useBillingCurrency(
      async (manager, tenantId, profileId) =>
        (await this.profiles.profileFor(manager, tenantId, profileId))?.currency ?? null,
    );
  }
}
