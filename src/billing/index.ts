// The billing domain's public surface: other modules import billing only from here (docs/architecture.md).
export { BillingModule } from './billing.module';
export { BillingProfilesModule } from './profiles/billing-profiles.module';
export { InvoicesService } from './invoices/invoices.service';
export { TransactionsService } from './transactions/transactions.service';
export { LedgerService } from './ledger/ledger.service';
export type { CurrencyBalance, LedgerPosting } from './ledger/ledger.service';
export { BillingProfilesService } from './profiles/billing-profiles.service';
export {
  Invoice,
  InvoiceCounter,
  InvoiceStatus,
  INVOICE_STATUSES,
  PAYABLE_STATUSES,
} from './invoices/invoice.entity';
export {
  Allocation,
  Transaction,
  TransactionKind,
  TransactionSource,
  ALLOCATABLE_KINDS,
  TRANSACTION_KINDS,
  TRANSACTION_SOURCES,
} from './transactions/transaction.entity';
export { LedgerEntry, LedgerEntryType, SubscriberBalance } from './ledger/ledger-entry.entity';
export { BillingProfile } from './profiles/billing-profile.entity';
