/**
 * `documents.pdf` (issue 29): invoice PDFs per second, rendered in the bench's own process by the app's renderer
 * (src/billing/documents) from the sample invoice (one A4 page: five lines, two VAT rates, DejaVu Sans and Bold
 * embedded), against a one-page pdfkit document with no content (`new PDFDocument({ size: 'A4' })` then `end()`, its
 * defaults untouched), measured in the same run. Reported as that ratio, with no target yet (issue 29: "no target
 * yet, report it"). Runs with --quick too; `--only documents.pdf` runs it alone (with the baselines every run has).
 *
 * Each side is rendered one document after another (awaiting its bytes) for `seconds`, in two halves interleaved
 * (empty, invoice, empty, invoice) so that a change of load on the machine falls on both; one second of each first,
 * unrecorded (the JIT, the fonts parsed once per process).
 */
import PDFDocument from 'pdfkit';
import { renderInvoicePdf } from '../src/billing/documents';
import { sampleInvoice } from '../src/billing/documents/sample-documents';
import { log } from './report';

export const DOCUMENTS_PDF_CASE = 'documents.pdf';

export interface DocumentsPdfResult {
  case: typeof DOCUMENTS_PDF_CASE;
  secondsEach: number;
  invoices: number;
  invoicesPerS: number;
  invoiceBytes: number;
  empties: number;
  emptyPerS: number;
  emptyBytes: number;
  /** invoicesPerS / emptyPerS; no target. */
  ratio: number;
}

function emptyPdf(): Promise<Buffer> {
  const pdf = new PDFDocument({ size: 'A4' });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
  pdf.end();
  return done;
}

/** Renders with `render` for `ms` milliseconds; answers the count, the time it took and the last size. */
async function loop(
  render: () => Promise<Buffer>,
  ms: number,
): Promise<{ count: number; seconds: number; bytes: number }> {
  const started = process.hrtime.bigint();
  const end = started + BigInt(Math.round(ms * 1e6));
  let count = 0;
  let bytes = 0;
  while (process.hrtime.bigint() < end) {
    bytes = (await render()).length;
    count++;
  }
  return { count, seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes };
}

export async function benchDocumentsPdf(seconds: number): Promise<DocumentsPdfResult> {
  const invoice = sampleInvoice();
  const renderInvoice = () => renderInvoicePdf(invoice);
  await loop(emptyPdf, 1000);
  await loop(renderInvoice, 1000);
  const half = (seconds * 1000) / 2;
  const runs = { empty: { count: 0, seconds: 0, bytes: 0 }, invoice: { count: 0, seconds: 0, bytes: 0 } };
  for (let round = 0; round < 2; round++) {
    for (const [side, render] of [
      ['empty', emptyPdf],
      ['invoice', renderInvoice],
    ] as const) {
      const run = await loop(render, half);
      runs[side].count += run.count;
      runs[side].seconds += run.seconds;
      runs[side].bytes = run.bytes;
    }
  }
  const invoicesPerS = runs.invoice.count / runs.invoice.seconds;
  const emptyPerS = runs.empty.count / runs.empty.seconds;
  const result: DocumentsPdfResult = {
    case: DOCUMENTS_PDF_CASE,
    secondsEach: seconds,
    invoices: runs.invoice.count,
    invoicesPerS,
    invoiceBytes: runs.invoice.bytes,
    empties: runs.empty.count,
    emptyPerS,
    emptyBytes: runs.empty.bytes,
    ratio: invoicesPerS / emptyPerS,
  };
  log(
    `\n${DOCUMENTS_PDF_CASE}: ${invoicesPerS.toFixed(1)} invoice PDFs/s (one page, ${(runs.invoice.bytes / 1024).toFixed(0)} KB) ` +
      `against ${emptyPerS.toFixed(0)} empty one-page pdfkit documents/s (${runs.empty.bytes} B), in this process: ` +
      `ratio ${result.ratio.toFixed(3)} (no target yet, issue 29)`,
  );
  return result;
}
