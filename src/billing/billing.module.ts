import { Module } from '@nestjs/common';
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

/** Billing profiles, invoices, transactions, allocations and the subscriber ledger. */
@Module({
  imports: [EventsModule, SubscribersModule],
  controllers: [BillingProfilesController, InvoicesController, TransactionsController, BalanceController],
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
  ],
  exports: [InvoicesService, TransactionsService, LedgerService, BillingProfilesService],
})
export class BillingModule {}
