import type { DocumentDate } from '../../common/intl-format';

/**
 * The view models the PDF renderer draws (issue 29, item 8): plain data, already decided. The renderer formats and
 * lays them out and computes nothing: every amount is shown as given, in integer minor units of `currency`.
 *
 * Dates (`DocumentDate`): a calendar date 'YYYY-MM-DD' is printed as that date whatever the time zone; an instant (a
 * Date, or an ISO 8601 timestamp with a time) is printed as its date in `time_zone`.
 */

/** 'YYYY-MM-DD' (a calendar date), or an instant: a Date or an ISO 8601 timestamp. */
export type { DocumentDate };

export interface DocumentContact {
  email?: string | null;
  phone?: string | null;
  web?: string | null;
}

/** The tenant issuing the document (GET /tenant/settings). */
export interface DocumentIssuer {
  legal_name: string;
  address_lines: string[];
  tax_id?: string | null;
  registration_number?: string | null;
  contact?: DocumentContact | null;
  /** Bank account and the like; '\n' separates lines. */
  payment_instructions?: string | null;
  /** Printed at the bottom of every page; '\n' separates lines (two at most are kept short enough to fit). */
  footer?: string | null;
}

/** The subscriber billed. */
export interface DocumentCustomer {
  name: string;
  address_lines: string[];
  tax_id?: string | null;
  /** Set when the customer is exempt from tax: printed under the address. */
  tax_exempt_reason?: string | null;
}

export interface DocumentLineTax {
  name: string;
  /** Decimal string, up to 4 decimals: "21.0000". */
  percentage: string;
}

export interface DocumentPeriod {
  start: DocumentDate;
  end: DocumentDate;
}

export interface DocumentLine {
  description: string;
  /** A whole or decimal number (a number or a decimal string such as "1.5"). */
  quantity: number | string;
  unit_amount: number;
  /** The line's net, as invoiced. */
  amount: number;
  taxes: DocumentLineTax[];
  /** The service period the line covers, printed under the description. */
  period?: DocumentPeriod | null;
}

/** One row per rate: what it was applied to and the tax it gave. */
export interface DocumentTaxRow {
  name: string;
  /** Decimal string, up to 4 decimals: "21.0000". */
  percentage: string;
  taxable_amount: number;
  amount: number;
}

/**
 * The words the documents print. English by default (DEFAULT_LABELS); a caller translating them passes the ones it
 * changes. Numbers and dates follow `locale` either way.
 */
export interface DocumentLabels {
  bill_to: string;
  number: string;
  issue_date: string;
  due_date: string;
  original_invoice: string;
  statement_date: string;
  period: string;
  tax_id: string;
  registration_number: string;
  tax_exempt: string;
  description: string;
  quantity: string;
  unit_price: string;
  tax: string;
  amount: string;
  tax_summary: string;
  tax_rate: string;
  taxable_amount: string;
  tax_amount: string;
  subtotal: string;
  total: string;
  amount_paid: string;
  amount_due: string;
  reason: string;
  notes: string;
  payment_instructions: string;
  continued: string;
  page: string;
  date: string;
  kind: string;
  reference: string;
  debit: string;
  credit: string;
  balance: string;
  opening_balance: string;
  closing_balance: string;
}

/** What invoices and credit notes share. */
export interface BillingDocumentBase {
  issuer: DocumentIssuer;
  customer: DocumentCustomer;
  /** 'Invoice', 'Credit note' (or their translation). */
  title: string;
  /** The formatted number, e.g. "INV-2026-000123". */
  number: string;
  issue_date: DocumentDate;
  /** ISO 4217, e.g. "EUR". */
  currency: string;
  /** BCP 47, e.g. "de-DE": numbers, amounts and dates are formatted for it. */
  locale: string;
  /** IANA, e.g. "Europe/Berlin": the zone instants are printed in. */
  time_zone: string;
  lines: DocumentLine[];
  tax_summary: DocumentTaxRow[];
  subtotal: number;
  total: number;
  notes?: string | null;
  labels?: Partial<DocumentLabels>;
}

export interface InvoiceDocument extends BillingDocumentBase {
  due_date: DocumentDate;
  amount_paid: number;
  amount_due: number;
}

export interface CreditNoteDocument extends BillingDocumentBase {
  /** The number of the invoice the credit note corrects. */
  original_invoice_number: string;
  reason?: string | null;
}

export interface StatementEntry {
  date: DocumentDate;
  /** Printed as given: the caller passes the word to show ("Invoice", "Payment", "Credit note", …). */
  kind: string;
  reference: string;
  description: string;
  /** What the entry adds to what the customer owes (0: none). */
  debit: number;
  /** What it takes off (0: none). */
  credit: number;
  /** The running balance after the entry. */
  balance: number;
}

export interface StatementDocument {
  issuer: DocumentIssuer;
  customer: DocumentCustomer;
  /** 'Statement' (or its translation). */
  title: string;
  issue_date: DocumentDate;
  period_from: DocumentDate;
  period_to: DocumentDate;
  currency: string;
  locale: string;
  time_zone: string;
  opening_balance: number;
  entries: StatementEntry[];
  closing_balance: number;
  notes?: string | null;
  labels?: Partial<DocumentLabels>;
}

export const DEFAULT_LABELS: DocumentLabels = {
  bill_to: 'Bill to',
  number: 'Number',
  issue_date: 'Issue date',
  due_date: 'Due date',
  original_invoice: 'Original invoice',
  statement_date: 'Statement date',
  period: 'Period',
  tax_id: 'Tax ID',
  registration_number: 'Registration no.',
  tax_exempt: 'Tax exempt',
  description: 'Description',
  quantity: 'Qty',
  unit_price: 'Unit price',
  tax: 'Tax',
  amount: 'Amount',
  tax_summary: 'Tax summary',
  tax_rate: 'Rate',
  taxable_amount: 'Taxable amount',
  tax_amount: 'Tax',
  subtotal: 'Subtotal',
  total: 'Total',
  amount_paid: 'Amount paid',
  amount_due: 'Amount due',
  reason: 'Reason',
  notes: 'Notes',
  payment_instructions: 'Payment instructions',
  continued: 'continued',
  page: 'Page',
  date: 'Date',
  kind: 'Type',
  reference: 'Reference',
  debit: 'Debit',
  credit: 'Credit',
  balance: 'Balance',
  opening_balance: 'Opening balance',
  closing_balance: 'Closing balance',
};
