// The billing domain's public surface: other modules import billing only from here (docs/architecture.md).
// Entities first: a domain whose entity references one of these may be loaded while this file is still loading.
export { Invoice, InvoiceStatus, INVOICE_STATUSES, PAYABLE_STATUSES } from './invoices/invoice.entity';
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
export { InvoicesService } from './invoices/invoices.service';
export { CreditNotesService } from './credit-notes/credit-notes.service';
export { BillingDocuments } from './documents/billing-documents';
export { InvoiceDto } from './invoices/dto/invoice-response.dto';
export { ListInvoicesQueryDto } from './invoices/dto/invoice.dto';
export { TransactionsService } from './transactions/transactions.service';
export { OpeningBalanceImportsService } from './transactions/opening-balance-imports.service';
export type {
  OpeningBalanceImportResult,
  OpeningBalanceImportRow,
} from './transactions/opening-balance-imports.service';
export { ImportOpeningBalanceDto } from './transactions/dto/opening-balance-import.dto';
export { TransactionDto } from './transactions/dto/transaction-response.dto';
export { ListTransactionsQueryDto } from './transactions/dto/transaction.dto';
export { LedgerService } from './ledger/ledger.service';
export { LedgerEntryDto } from './ledger/dto/ledger.dto';
export type { LedgerPosting } from './ledger/ledger.service';
export type { CurrencyBalance } from './ledger/ledger.repository';
export { BillingProfilesService } from './profiles/billing-profiles.service';
export { TerminationCredit, type TerminationCreditPolicy } from './runs/termination-credit';
export { BillingPeriod, BillingRun, BillingRunStatus } from './runs/billing-run.entity';
export { BillingRunsService } from './runs/billing-runs.service';
export { CollectionsService } from './collections/collections.service';
export type { SweepRequest, Swept } from './collections/collections.service';
export type { DueReminder, LateFeeDue, SubjectFilter, SweepKey } from './collections/collections.repository';
export { FeesService } from './fees/fees.service';
export { NumberingService, type DocumentNumber } from './numbering/numbering.service';
export { BillingPurge } from './billing-purge';
export { BillingModule } from './billing.module';
