import { Module, OnModuleInit } from '@nestjs/common';
import { TenancyModule } from '../gateway';
import {
  DataCapsService,
  ProvisioningModule,
  ServiceLifecycle,
  ServicePlansService,
  ServicesService,
} from '../provisioning';
import { EventsModule } from '../events';
import { SubscribersModule, SubscribersService } from '../subscribers';
import { ChargesController } from './charges/charges.controller';
import { ChargesRepository } from './charges/charges.repository';
import { ChargesService } from './charges/charges.service';
import { UpcomingInvoiceController, UpcomingInvoiceService } from './runs/upcoming-invoice';
import { AmountsOwedRepository } from './collections/amounts-owed.repository';
import { CollectionsRepository } from './collections/collections.repository';
import { CollectionsService } from './collections/collections.service';
import { FeesService } from './fees/fees.service';
import { InvoicesController } from './invoices/invoices.controller';
import { InvoicesRepository } from './invoices/invoices.repository';
import { InvoicesService } from './invoices/invoices.service';
import { InvoiceIssuer } from './invoices/invoice-issuer';
import { BalanceController } from './ledger/balance.controller';
import { NumberingRepository } from './numbering/numbering.repository';
import { NumberingService } from './numbering/numbering.service';
import { LedgerRepository } from './ledger/ledger.repository';
import { LedgerService } from './ledger/ledger.service';
import { BillingProfilesController } from './profiles/billing-profiles.controller';
import { BillingProfilesRepository } from './profiles/billing-profiles.repository';
import { BillingProfilesService } from './profiles/billing-profiles.service';
import { AllocatePaymentUseCase } from './transactions/allocate-payment.usecase';
import { AutoApply } from './transactions/auto-apply';
import { TransactionsController } from './transactions/transactions.controller';
import { TransactionsRepository } from './transactions/transactions.repository';
import { OpeningBalanceImportsService } from './transactions/opening-balance-imports.service';
import { TransactionsService } from './transactions/transactions.service';
import { BillingRunWorker } from './runs/billing-run-worker';
import { BatchBiller } from './runs/batch-biller';
import { BillComputation } from './runs/bill-computation';
import { ServiceSettlement } from './runs/service-settlement';
import { TerminationCredit } from './runs/termination-credit';
import { BillingRunsController } from './runs/billing-runs.controller';
import { BillingRunsRepository } from './runs/billing-runs.repository';
import { BillingPeriodsRepository } from './runs/billing-periods.repository';
import { ServiceBillingRepository } from './runs/service-billing.repository';
import { BillingRunsService } from './runs/billing-runs.service';
import { TaxRatesController } from './taxes/tax-rates.controller';
import { TaxRatesRepository } from './taxes/tax-rates.repository';
import { TaxRatesService } from './taxes/tax-rates.service';
import { InvoiceTaxes } from './taxes/invoice-taxes';
import { CreditNotesRepository } from './credit-notes/credit-notes.repository';
import { CreditNotesService } from './credit-notes/credit-notes.service';
import { CreditNotesController } from './credit-notes/credit-notes.controller';
import { BillingDocuments } from './documents/billing-documents';
import { StatementsService } from './statements/statements.service';
import { StatementsController } from './statements/statements.controller';
import { TaxReportController, TaxReportService } from './taxes/tax-report';
import { TaxContextRepository } from './taxes/tax-context.repository';
import { TaxReportRepository } from './taxes/tax-report.repository';
import { StatementsRepository } from './statements/statements.repository';
import { ReportsController } from './reports/reports.controller';
import { ReportsService } from './reports/reports.service';
import { MrrRepository } from './reports/mrr.repository';
import { RevenueRepository } from './reports/revenue.repository';
import { AgingRepository } from './reports/aging.repository';
import { BillingPurge } from './billing-purge';

/** Billing profiles, invoices, transactions, allocations, the subscriber ledger and recurring bill runs. */
@Module({
  imports: [EventsModule, SubscribersModule, ProvisioningModule, TenancyModule],
  controllers: [
    BillingProfilesController,
    InvoicesController,
    TransactionsController,
    BalanceController,
    BillingRunsController,
    ChargesController,
    UpcomingInvoiceController,
    TaxRatesController,
    CreditNotesController,
    StatementsController,
    TaxReportController,
    ReportsController,
  ],
  providers: [
    BillingProfilesRepository,
    InvoicesRepository,
    TransactionsRepository,
    LedgerRepository,
    InvoicesService,
    InvoiceIssuer,
    TransactionsService,
    OpeningBalanceImportsService,
    AllocatePaymentUseCase,
    AutoApply,
    CollectionsRepository,
    AmountsOwedRepository,
    CollectionsService,
    LedgerService,
    BillingProfilesService,
    BillingRunsRepository,
    BillingPeriodsRepository,
    ServiceBillingRepository,
    BatchBiller,
    BillComputation,
    ServiceSettlement,
    TerminationCredit,
    BillingRunWorker,
    BillingRunsService,
    ChargesRepository,
    ChargesService,
    UpcomingInvoiceService,
    FeesService,
    TaxRatesRepository,
    TaxRatesService,
    InvoiceTaxes,
    TaxContextRepository,
    CreditNotesRepository,
    CreditNotesService,
    BillingDocuments,
    StatementsService,
    TaxReportService,
    TaxReportRepository,
    StatementsRepository,
    NumberingRepository,
    NumberingService,
    ReportsService,
    MrrRepository,
    RevenueRepository,
    AgingRepository,
    BillingPurge,
  ],
  exports: [
    BillingDocuments,
    InvoicesService,
    CreditNotesService,
    TransactionsService,
    OpeningBalanceImportsService,
    LedgerService,
    BillingProfilesService,
    TerminationCredit,
    CollectionsService,
    ChargesService,
    FeesService,
    NumberingService,
    BillingRunsService,
    BillingPurge,
  ],
})
export class BillingModule implements OnModuleInit {
  constructor(
    private readonly services: ServicesService,
    private readonly lifecycle: ServiceLifecycle,
    private readonly settlement: ServiceSettlement,
    private readonly profiles: BillingProfilesService,
    private readonly subscribers: SubscribersService,
    private readonly ledger: LedgerService,
    private readonly plans: ServicePlansService,
    private readonly taxRates: TaxRatesService,
    private readonly mrr: MrrRepository,
    private readonly dataCaps: DataCapsService,
    private readonly profilesRepository: BillingProfilesRepository,
    private readonly charges: ChargesService,
  ) {}

  /** A service is billed through its subscriber's profile (or the default): its plan must be in that currency. */
  onModuleInit(): void {
    // A service that ends is settled at once: its prepaid days credited, its unbilled days charged (pending charges).
    this.lifecycle.onEnded((tx, tenantId, serviceIds) =>
      this.settlement.settleEnded(tx, tenantId, serviceIds),
    );
    // The reports' MRR steps follow the plan history and the plans' prices in the same transaction (docs/reports.md).
    this.lifecycle.onPlanHistory((tx, tenantId, subscriberIds) =>
      this.mrr.refresh(tx.manager, tenantId, subscriberIds),
    );
    this.lifecycle.onPlanRepriced(async (tx, tenantId, planId) =>
      this.mrr.refresh(tx.manager, tenantId, await this.mrr.subscribersOnPlan(tx.manager, tenantId, planId)),
    );
    this.services.useBillingCurrency(
      async (manager, tenantId, profileId) =>
        (await this.profiles.profileFor(manager, tenantId, profileId))?.currency ?? null,
    );
    // A plan's tax_rate_ids name billing's tax rates: checked as a profile's and a charge's are.
    this.plans.useTaxRates((manager, tenantId, ids) =>
      this.taxRates.assertApplicable(manager, tenantId, ids),
    );
    // Data caps count per billing period (the profile's billing day) and charge top-ups as pending charges.
    this.dataCaps.useBillingDays(
      async (manager, tenantId, subscriberIds) =>
        new Map(
          [...(await this.profilesRepository.effectiveFor(manager, tenantId, subscriberIds))].map(
            ([id, profile]) => [id, profile.billingDay],
          ),
        ),
    );
    this.dataCaps.useTopUpCharges((tx, charge) => this.charges.recordTopUp(tx, charge));
    // Archiving a subscriber who still owes money is refused (409 balance_outstanding): what it owes is the ledger's.
    this.subscribers.useOutstandingBalance((manager, tenantId, subscriberId) =>
      this.ledger.owed(manager, tenantId, subscriberId),
    );
  }
}
