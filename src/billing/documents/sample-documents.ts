import type {
  CreditNoteDocument,
  DocumentIssuer,
  InvoiceDocument,
  StatementDocument,
} from './document-model';

/**
 * Realistic documents for the picture in the docs (scripts/render-sample-invoice.ts), the bench's invoice PDFs per
 * second (bench/documents-pdf.ts) and the tests: EUR, de-DE, VAT at 19 % and 7 %, taxes rounded half-up per line.
 */

export const SAMPLE_ISSUER: DocumentIssuer = {
  legal_name: 'Nordlicht Glasfaser GmbH',
  address_lines: ['Hafenstraße 12', '20457 Hamburg', 'Deutschland'],
  tax_id: 'DE123456789',
  registration_number: 'HRB 123456, Amtsgericht Hamburg',
  contact: { email: 'billing@nordlicht.example', phone: '+49 40 1234567', web: 'https://nordlicht.example' },
  payment_instructions:
    'Bank transfer to Nordlicht Glasfaser GmbH\nIBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX\nPlease quote the invoice number as the reference.',
  footer: 'Nordlicht Glasfaser GmbH · Managing director: Jürgen Weiß · Registered in Hamburg, HRB 123456',
};

const VAT_19 = { name: 'VAT', percentage: '19.0000' };
const VAT_7 = { name: 'VAT reduced', percentage: '7.0000' };

/** Five lines at two rates: 92.74 € net, 16.01 € + 0.60 € tax, 109.35 € total, 25.00 € paid, 84.35 € due. */
export function sampleInvoice(): InvoiceDocument {
  return {
    issuer: SAMPLE_ISSUER,
    customer: {
      name: 'Zoë Ñúñez',
      address_lines: ['Große Bergstraße 7', '22767 Hamburg', 'Deutschland'],
      tax_id: null,
    },
    title: 'Invoice',
    number: 'INV-2026-000123',
    issue_date: '2026-02-01',
    due_date: '2026-02-15',
    currency: 'EUR',
    locale: 'de-DE',
    time_zone: 'Europe/Berlin',
    lines: [
      {
        description: 'Fiber 500 — monthly fee',
        quantity: 1,
        unit_amount: 4999,
        amount: 4999,
        taxes: [VAT_19],
        period: { start: '2026-02-01', end: '2026-02-28' },
      },
      {
        description: 'Router rental (FRITZ!Box 5590 Fiber)',
        quantity: 1,
        unit_amount: 490,
        amount: 490,
        taxes: [VAT_19],
        period: { start: '2026-02-01', end: '2026-02-28' },
      },
      {
        description: 'Static IPv4 address',
        quantity: 2,
        unit_amount: 500,
        amount: 1000,
        taxes: [VAT_19],
        period: { start: '2026-02-01', end: '2026-02-28' },
      },
      {
        description: 'Fiber 500 — prorated, 20 to 31 January',
        quantity: 1,
        unit_amount: 1935,
        amount: 1935,
        taxes: [VAT_19],
        period: { start: '2026-01-20', end: '2026-01-31' },
      },
      {
        description: 'Printed customer magazine, yearly subscription',
        quantity: 1,
        unit_amount: 850,
        amount: 850,
        taxes: [VAT_7],
      },
    ],
    tax_summary: [
      { ...VAT_19, taxable_amount: 8424, amount: 1601 },
      { ...VAT_7, taxable_amount: 850, amount: 60 },
    ],
    subtotal: 9274,
    total: 10935,
    amount_paid: 2500,
    amount_due: 8435,
    notes: 'Thank you for choosing Nordlicht. Questions about this invoice: billing@nordlicht.example.',
  };
}

/** Credits the router rental of the sample invoice. */
export function sampleCreditNote(): CreditNoteDocument {
  const invoice = sampleInvoice();
  return {
    issuer: invoice.issuer,
    customer: invoice.customer,
    title: 'Credit note',
    number: 'CN-2026-000007',
    issue_date: '2026-02-10',
    original_invoice_number: invoice.number,
    currency: 'EUR',
    locale: 'de-DE',
    time_zone: 'Europe/Berlin',
    lines: [invoice.lines[1]],
    tax_summary: [{ ...VAT_19, taxable_amount: 490, amount: 93 }],
    subtotal: 490,
    total: 583,
    reason: 'Router returned on 3 February: the rental is not charged.',
  };
}

/** February: the sample invoice, a payment, the credit note. */
export function sampleStatement(): StatementDocument {
  return {
    issuer: SAMPLE_ISSUER,
    customer: sampleInvoice().customer,
    title: 'Statement',
    issue_date: '2026-03-01',
    period_from: '2026-02-01',
    period_to: '2026-02-28',
    currency: 'EUR',
    locale: 'de-DE',
    time_zone: 'Europe/Berlin',
    opening_balance: 0,
    entries: [
      {
        date: '2026-02-01',
        kind: 'Invoice',
        reference: 'INV-2026-000123',
        description: 'February',
        debit: 10935,
        credit: 0,
        balance: 10935,
      },
      {
        date: '2026-02-03',
        kind: 'Payment',
        reference: 'SEPA 2026-02-03',
        description: 'Direct debit',
        debit: 0,
        credit: 2500,
        balance: 8435,
      },
      {
        date: '2026-02-10',
        kind: 'Credit note',
        reference: 'CN-2026-000007',
        description: 'Router returned',
        debit: 0,
        credit: 583,
        balance: 7852,
      },
    ],
    closing_balance: 7852,
  };
}
