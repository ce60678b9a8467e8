import type { CsvColumn } from '../common/csv/csv-write';
import type { InvoiceDto, LedgerEntryDto, TransactionDto } from '../billing';
import type { SubscriberDto } from '../subscribers';

/** The columns of each export, in order: the list item's fields, flattened (docs/exports.md lists them). */
const column = <T>(header: string, value: CsvColumn<T>['value']): CsvColumn<T> => ({ header, value });
/** A field of the item under its own name. */
const field = <T>(name: keyof T & string): CsvColumn<T> => column(name, (row) => row[name] as never);

export const SUBSCRIBER_COLUMNS: readonly CsvColumn<SubscriberDto>[] = [
  field('id'),
  field('external_id'),
  field('full_name'),
  field('status'),
  field('suspension_reason'),
  field('email'),
  field('phone'),
  column('address_line1', (s) => s.address?.line1),
  column('address_city', (s) => s.address?.city),
  column('address_state', (s) => s.address?.state),
  column('address_postal_code', (s) => s.address?.postal_code),
  field('billing_profile_id'),
  field('tax_exempt'),
  field('tax_exempt_reason'),
  field('tax_id'),
  // Its JSON text: keys are the tenant's own, so no fixed columns fit them.
  column('metadata', (s) => (Object.keys(s.metadata ?? {}).length === 0 ? null : s.metadata)),
  field('created_at'),
  field('updated_at'),
];

export const INVOICE_COLUMNS: readonly CsvColumn<InvoiceDto>[] = [
  field('id'),
  field('number'),
  field('subscriber_id'),
  field('status'),
  field('currency'),
  field('subtotal'),
  field('tax_amount'),
  field('total'),
  field('amount_paid'),
  field('amount_due'),
  field('amount_written_off'),
  field('due_date'),
  field('overdue'),
  field('created_at'),
  field('finalized_at'),
  field('paid_at'),
  field('voided_at'),
  field('void_reason'),
  field('written_off_at'),
  field('write_off_reason'),
];

export const TRANSACTION_COLUMNS: readonly CsvColumn<TransactionDto>[] = [
  field('id'),
  field('subscriber_id'),
  field('kind'),
  field('source'),
  field('currency'),
  field('amount'),
  field('allocated_amount'),
  field('unallocated_amount'),
  field('refunded_amount'),
  field('external_id'),
  field('reference'),
  field('method'),
  field('refund_of'),
  field('auto_apply'),
  field('occurred_at'),
  field('created_at'),
];

/** A ledger entry with the subscriber the export was asked for (the list's items leave it out: it is in the path). */
export type LedgerExportRow = LedgerEntryDto & { subscriber_id: string };

export const LEDGER_COLUMNS: readonly CsvColumn<LedgerExportRow>[] = [
  field('id'),
  field('subscriber_id'),
  field('created_at'),
  field('type'),
  field('currency'),
  field('amount'),
  field('balance_after'),
  field('source_id'),
];
