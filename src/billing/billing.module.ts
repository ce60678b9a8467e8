import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { SubscribersModule } from '../subscribers';
import { InvoicesController } from './invoices/invoices.controller';
import { InvoicesRepository } from './invoices/invoices.repository';
import { InvoicesService } from './invoices/invoices.service';
import { BalanceController } from './ledger/balance.controller';
import { LedgerRepository } from './ledger/ledger.repository';
import { LedgerService } from './ledger/ledger.service';
import { AllocatePaymentUseCase } from './transactions/allocate-payment.usecase';
import { TransactionsController } from './transactions/transactions.controller';
import { TransactionsRepository } from './transactions/transactions.repository';
import { TransactionsService } from './transactions/transactions.service';

/** Invoices, transactions, allocations and the subscriber ledger. Billing profiles live in their own module. */
@Module({
  imports: [EventsModule, SubscribersModule],
  controllers: [InvoicesController, TransactionsController, BalanceController],
  providers: [
    InvoicesRepository,
    TransactionsRepository,
    LedgerRepository,
    InvoicesService,
    TransactionsService,
    AllocatePaymentUseCase,
    LedgerService,
  ],
  exports: [InvoicesService, TransactionsService, LedgerService],
})
export class BillingModule {}
