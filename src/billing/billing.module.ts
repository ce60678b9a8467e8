import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { SubscribersModule } from '../subscribers/subscribers.module';
import { InvoicesController } from './invoices/invoices.controller';
import { InvoicesService } from './invoices/invoices.service';
import { BalanceController } from './ledger/balance.controller';
import { LedgerService } from './ledger/ledger.service';
import { AllocatePaymentUseCase } from './transactions/allocate-payment.usecase';
import { TransactionsController } from './transactions/transactions.controller';
import { TransactionsService } from './transactions/transactions.service';

/** Invoices, transactions, allocations and the subscriber ledger. Billing profiles live in their own module. */
@Module({
  imports: [EventsModule, SubscribersModule],
  controllers: [InvoicesController, TransactionsController, BalanceController],
  providers: [InvoicesService, TransactionsService, AllocatePaymentUseCase, LedgerService],
  exports: [InvoicesService, TransactionsService, LedgerService],
})
export class BillingModule {}
