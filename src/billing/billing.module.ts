import { Module, OnModuleInit } from '@nestjs/common';
import { ProvisioningModule, ServiceLifecycle, ServicesService } from '../provisioning';
import { EventsModule } from '../events';
import { SubscribersModule, SubscribersService } from '../subscribers';
import { ChargesController } from './charges/charges.controller';
import { ChargesRepository } from './charges/charges.repository';
import { ChargesService } from './charges/charges.service';
import { UpcomingInvoiceController, UpcomingInvoiceService } from './runs/upcoming-invoice';
import { CollectionsRepository } from './collections/collections.repository';
import { CollectionsService } from './collections/collections.service';
import { FeesService } from './fees/fees.service';
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
import { AutoApply } from './transactions/auto-apply';
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
    ChargesController,
    UpcomingInvoiceController,
  ],
  providers: [
    BillingProfilesRepository,
    InvoicesRepository,
    TransactionsRepository,
    LedgerRepository,
    InvoicesService,
    TransactionsService,
    AllocatePaymentUseCase,
    AutoApply,
    CollectionsRepository,
    CollectionsService,
    LedgerService,
    BillingProfilesService,
    BillingRunsRepository,
    BillingRunner,
    BillingRunWorker,
    BillingRunsService,
    ChargesRepository,
    ChargesService,
    UpcomingInvoiceService,
    FeesService,
  ],
  exports: [
    InvoicesService,
    TransactionsService,
    LedgerService,
    BillingProfilesService,
    BillingRunner,
    CollectionsService,
    ChargesService,
    FeesService,
  ],
})
export class BillingModule implements OnModuleInit {
  constructor(
    private readonly services: ServicesService,
    private readonly lifecycle: ServiceLifecycle,
    private readonly runner: BillingRunner,
    private readonly profiles: BillingProfilesService,
    private readonly subscribers: SubscribersService,
    private readonly ledger: LedgerService,
  ) {}

  /** A service is billed through its subscriber's profile (or the default): its plan must be in that currency. */
  onModuleInit(): void {
    // A service that ends is settled at once: its prepaid days credited, its unbilled days charged (pending charges).
    this.lifecycle.onEnded((tx, tenantId, serviceIds) => this.runner.settleEnded(tx, tenantId, serviceIds));
    this.services.useBillingCurrency(
      async (manager, tenantId, profileId) =>
        (await this.profiles.profileFor(manager, tenantId, profileId))?.currency ?? null,
    );
    // Archiving a subscriber who still owes money is refused (409 balance_outstanding): what it owes is the ledger's.
    this.subscribers.useOutstandingBalance((manager, tenantId, subscriberId) =>
      this.ledger.owed(manager, tenantId, subscriberId),
    );
  }
}
