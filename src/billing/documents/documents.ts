import { pipeline } from 'node:stream/promises';
import {
  type BillingDocumentBase,
  type CreditNoteDocument,
  DEFAULT_LABELS,
  type DocumentCustomer,
  type DocumentIssuer,
  type DocumentLabels,
  type DocumentLine,
  type DocumentTaxRow,
  type InvoiceDocument,
  type StatementDocument,
  type StatementEntry,
} from './document-model';
import {
  documentInstant,
  formatDocumentDate,
  formatMoney,
  formatPercentage,
  formatQuantity,
} from '../../common/intl-format';
import { COLORS, PdfCanvas, pdfBytes, type TableColumn } from './pdf-canvas';

/**
 * Invoices, credit notes and statements as PDF (issue 29, items 8 and 9): one layout (the issuer and the document's
 * own facts at the top, the customer, a table, totals, notes and payment instructions, a footer with page numbers),
 * drawn from the view models of document-model.ts. Pure: the same model gives the same bytes.
 *
 * `render…Pdf` answer the bytes (for an ETag: pdfEtag); `stream…Pdf` pipe the document into a Writable (an Express
 * response) as pdfkit produces it.
 */

interface Formatting {
  currency: string;
  locale: string;
  time_zone: string;
  labels: DocumentLabels;
}

function formattingOf(
  doc: Pick<BillingDocumentBase, 'currency' | 'locale' | 'time_zone' | 'labels'>,
): Formatting {
  return {
    currency: doc.currency,
    locale: doc.locale,
    time_zone: doc.time_zone,
    labels: { ...DEFAULT_LABELS, ...doc.labels },
  };
}

const money = (f: Formatting, minor: number) => formatMoney(minor, f.currency, f.locale);
const date = (f: Formatting, value: Parameters<typeof formatDocumentDate>[0]) =>
  formatDocumentDate(value, f.locale, f.time_zone);

function nonEmpty(lines: (string | null | undefined)[]): string {
  return lines.filter((line): line is string => Boolean(line && line.trim())).join('\n');
}

/** The issuer (left), the title and the document's facts (right), then the customer. */
function drawHead(
  canvas: PdfCanvas,
  f: Formatting,
  head: { issuer: DocumentIssuer; customer: DocumentCustomer; title: string; facts: [string, string][] },
): void {
  const { issuer, customer, labels } = { ...head, labels: f.labels };
  const top = canvas.y;
  const leftWidth = canvas.width * 0.55;
  let left = top;
  left += canvas.text(issuer.legal_name, canvas.left, left, leftWidth, { font: 'bold', size: 13 }) + 4;
  const issuerLines = nonEmpty([
    ...issuer.address_lines,
    issuer.tax_id ? `${labels.tax_id}: ${issuer.tax_id}` : null,
    issuer.registration_number ? `${labels.registration_number}: ${issuer.registration_number}` : null,
    issuer.contact?.email,
    issuer.contact?.phone,
    issuer.contact?.web,
  ]);
  left += canvas.text(issuerLines, canvas.left, left, leftWidth, { size: 8.5, color: COLORS.muted });

  const rightX = canvas.left + canvas.width * 0.6;
  const rightWidth = canvas.right - rightX;
  let right = top;
  right += canvas.text(head.title, rightX, right, rightWidth, { font: 'bold', size: 20, align: 'right' }) + 8;
  right += canvas.pairs(head.facts, rightX, right, rightWidth, { size: 9 });

  canvas.y = Math.max(left, right) + 20;
  canvas.text(labels.bill_to, canvas.left, canvas.y, leftWidth, {
    font: 'bold',
    size: 8,
    color: COLORS.muted,
  });
  canvas.y += 12;
  canvas.y += canvas.text(customer.name, canvas.left, canvas.y, leftWidth, { font: 'bold', size: 11 }) + 2;
  const customerLines = nonEmpty([
    ...customer.address_lines,
    customer.tax_id ? `${labels.tax_id}: ${customer.tax_id}` : null,
    customer.tax_exempt_reason ? `${labels.tax_exempt}: ${customer.tax_exempt_reason}` : null,
  ]);
  canvas.y += canvas.text(customerLines, canvas.left, canvas.y, leftWidth, { size: 9 }) + 20;
}

function drawLines(canvas: PdfCanvas, f: Formatting, lines: DocumentLine[]): void {
  const { labels } = f;
  const columns: TableColumn<DocumentLine>[] = [
    {
      header: labels.description,
      width: 200,
      cell: (line) => line.description,
      detail: (line) => (line.period ? `${date(f, line.period.start)} – ${date(f, line.period.end)}` : null),
    },
    {
      header: labels.quantity,
      width: 45,
      align: 'right',
      cell: (line) => formatQuantity(line.quantity, f.locale),
    },
    { header: labels.unit_price, width: 75, align: 'right', cell: (line) => money(f, line.unit_amount) },
    {
      header: labels.tax,
      width: 85,
      align: 'right',
      cell: (line) =>
        line.taxes.length === 0
          ? '—'
          : line.taxes.map((tax) => `${tax.name} ${formatPercentage(tax.percentage, f.locale)}`).join('\n'),
    },
    { header: labels.amount, width: 90, align: 'right', cell: (line) => money(f, line.amount) },
  ];
  canvas.table(columns, lines);
  canvas.y += 14;
}

function drawTaxSummary(canvas: PdfCanvas, f: Formatting, rows: DocumentTaxRow[]): void {
  if (rows.length === 0) {
    return;
  }
  const { labels } = f;
  canvas.ensure(60);
  canvas.text(labels.tax_summary, canvas.left, canvas.y, canvas.width, { font: 'bold', size: 9 });
  canvas.y += 14;
  canvas.table<DocumentTaxRow>(
    [
      { header: labels.tax, width: 215, cell: (row) => row.name },
      {
        header: labels.tax_rate,
        width: 70,
        align: 'right',
        cell: (row) => formatPercentage(row.percentage, f.locale),
      },
      {
        header: labels.taxable_amount,
        width: 110,
        align: 'right',
        cell: (row) => money(f, row.taxable_amount),
      },
      { header: labels.tax_amount, width: 100, align: 'right', cell: (row) => money(f, row.amount) },
    ],
    rows,
  );
  canvas.y += 14;
}

/** The totals, right-aligned; the last pair in bold. */
function drawTotals(canvas: PdfCanvas, pairs: [string, string][], bold: [string, string][]): void {
  const width = 240;
  const x = canvas.right - width;
  const height = (pairs.length + bold.length) * 15 + 10;
  canvas.ensure(height);
  canvas.y += canvas.pairs(pairs, x, canvas.y, width, { size: 9.5 });
  canvas.rule(canvas.y + 1, x, canvas.right, COLORS.text);
  canvas.y += 5;
  canvas.y += canvas.pairs(bold, x, canvas.y, width, { font: 'bold', size: 11 });
  canvas.y += 16;
}

/** A heading and its text (notes, payment instructions), kept together on one page when they fit. */
function drawSection(canvas: PdfCanvas, heading: string, body: string | null | undefined): void {
  if (!body || !body.trim()) {
    return;
  }
  const height = canvas.measure(body, canvas.width, { size: 9 }) + 14;
  canvas.ensure(height);
  canvas.text(heading, canvas.left, canvas.y, canvas.width, { font: 'bold', size: 9 });
  canvas.y += 13;
  canvas.block(body, { size: 9 }, 12);
}

function canvasFor(
  title: string,
  reference: string,
  issuer: DocumentIssuer,
  customer: DocumentCustomer,
  f: Formatting,
  issued: Parameters<typeof documentInstant>[0],
): PdfCanvas {
  const name = `${title} ${reference}`.trim();
  return new PdfCanvas(
    {
      title: name,
      subject: `${name} — ${customer.name}`,
      author: issuer.legal_name,
      created: documentInstant(issued),
      lang: f.locale,
    },
    `${name} · ${customer.name} (${f.labels.continued})`,
  );
}

/** The invoice as a pdfkit document, ended: read it (pdfBytes) or pipe it. */
export function buildInvoicePdf(doc: InvoiceDocument): PDFKit.PDFDocument {
  const f = formattingOf(doc);
  const { labels } = f;
  const canvas = canvasFor(doc.title, doc.number, doc.issuer, doc.customer, f, doc.issue_date);
  drawHead(canvas, f, {
    issuer: doc.issuer,
    customer: doc.customer,
    title: doc.title,
    facts: [
      [labels.number, doc.number],
      [labels.issue_date, date(f, doc.issue_date)],
      [labels.due_date, date(f, doc.due_date)],
    ],
  });
  drawLines(canvas, f, doc.lines);
  drawTaxSummary(canvas, f, doc.tax_summary);
  drawTotals(
    canvas,
    [
      [labels.subtotal, money(f, doc.subtotal)],
      [labels.total, money(f, doc.total)],
      [labels.amount_paid, money(f, doc.amount_paid)],
    ],
    [[labels.amount_due, money(f, doc.amount_due)]],
  );
  drawSection(canvas, labels.notes, doc.notes);
  drawSection(canvas, labels.payment_instructions, doc.issuer.payment_instructions);
  return canvas.finish(doc.issuer.footer, labels.page);
}

/** The credit note as a pdfkit document, ended. */
export function buildCreditNotePdf(doc: CreditNoteDocument): PDFKit.PDFDocument {
  const f = formattingOf(doc);
  const { labels } = f;
  const canvas = canvasFor(doc.title, doc.number, doc.issuer, doc.customer, f, doc.issue_date);
  drawHead(canvas, f, {
    issuer: doc.issuer,
    customer: doc.customer,
    title: doc.title,
    facts: [
      [labels.number, doc.number],
      [labels.issue_date, date(f, doc.issue_date)],
      [labels.original_invoice, doc.original_invoice_number],
    ],
  });
  drawLines(canvas, f, doc.lines);
  drawTaxSummary(canvas, f, doc.tax_summary);
  drawTotals(canvas, [[labels.subtotal, money(f, doc.subtotal)]], [[labels.total, money(f, doc.total)]]);
  drawSection(canvas, labels.reason, doc.reason);
  drawSection(canvas, labels.notes, doc.notes);
  return canvas.finish(doc.issuer.footer, labels.page);
}

interface StatementRow extends Omit<StatementEntry, 'debit' | 'credit'> {
  debit: number | null;
  credit: number | null;
  emphasis: boolean;
}

/** The statement as a pdfkit document, ended: opening balance, every entry with its running balance, closing. */
export function buildStatementPdf(doc: StatementDocument): PDFKit.PDFDocument {
  const f = formattingOf(doc);
  const { labels } = f;
  const period = `${date(f, doc.period_from)} – ${date(f, doc.period_to)}`;
  const canvas = canvasFor(doc.title, period, doc.issuer, doc.customer, f, doc.issue_date);
  drawHead(canvas, f, {
    issuer: doc.issuer,
    customer: doc.customer,
    title: doc.title,
    facts: [
      [labels.statement_date, date(f, doc.issue_date)],
      [labels.period, period],
    ],
  });
  const balanceRow = (at: StatementEntry['date'], description: string, balance: number): StatementRow => ({
    date: at,
    kind: '',
    reference: '',
    description,
    debit: null,
    credit: null,
    balance,
    emphasis: true,
  });
  const rows: StatementRow[] = [
    balanceRow(doc.period_from, labels.opening_balance, doc.opening_balance),
    ...doc.entries.map((entry) => ({ ...entry, emphasis: false })),
    balanceRow(doc.period_to, labels.closing_balance, doc.closing_balance),
  ];
  const amount = (value: number | null) => (value === null || value === 0 ? '' : money(f, value));
  canvas.table<StatementRow>(
    [
      { header: labels.date, width: 62, cell: (row) => date(f, row.date) },
      { header: labels.kind, width: 58, cell: (row) => row.kind },
      { header: labels.reference, width: 78, cell: (row) => row.reference },
      { header: labels.description, width: 105, cell: (row) => row.description },
      { header: labels.debit, width: 64, align: 'right', cell: (row) => amount(row.debit) },
      { header: labels.credit, width: 64, align: 'right', cell: (row) => amount(row.credit) },
      { header: labels.balance, width: 64, align: 'right', cell: (row) => money(f, row.balance) },
    ],
    rows,
    { size: 7.5, emphasis: (row) => row.emphasis },
  );
  canvas.y += 14;
  drawTotals(
    canvas,
    [[labels.opening_balance, money(f, doc.opening_balance)]],
    [[labels.closing_balance, money(f, doc.closing_balance)]],
  );
  drawSection(canvas, labels.notes, doc.notes);
  drawSection(canvas, labels.payment_instructions, doc.issuer.payment_instructions);
  return canvas.finish(doc.issuer.footer, labels.page);
}

/**
 * The invoice's PDF bytes: the same bytes for the same model. A model the renderer cannot draw (a date or a currency
 * code that does not parse) rejects with a RangeError.
 */
export async function renderInvoicePdf(doc: InvoiceDocument): Promise<Buffer> {
  return await pdfBytes(buildInvoicePdf(doc));
}

export async function renderCreditNotePdf(doc: CreditNoteDocument): Promise<Buffer> {
  return await pdfBytes(buildCreditNotePdf(doc));
}

export async function renderStatementPdf(doc: StatementDocument): Promise<Buffer> {
  return await pdfBytes(buildStatementPdf(doc));
}

/**
 * Pipes the invoice's PDF into `out` (e.g. an Express response, Content-Type set by the caller) as pdfkit produces
 * it; resolves once written. The whole document is drawn before the first byte is written, so a model the renderer
 * cannot draw rejects before anything was sent. For an ETag, render the bytes (renderInvoicePdf, pdfEtag) instead.
 */
export async function streamInvoicePdf(doc: InvoiceDocument, out: NodeJS.WritableStream): Promise<void> {
  await pipeline(buildInvoicePdf(doc), out);
}

export async function streamCreditNotePdf(
  doc: CreditNoteDocument,
  out: NodeJS.WritableStream,
): Promise<void> {
  await pipeline(buildCreditNotePdf(doc), out);
}

export async function streamStatementPdf(doc: StatementDocument, out: NodeJS.WritableStream): Promise<void> {
  await pipeline(buildStatementPdf(doc), out);
}
