/**
 * docs/images/sample-invoice.png: page 1 of the sample invoice (src/billing/documents/sample-documents.ts: EUR,
 * de-DE, VAT at 19 % and 7 %) rendered by the app's PDF renderer and drawn by poppler's pdftoppm (Debian:
 * poppler-utils), as the picture docs/billing.md shows.
 *
 *   npx ts-node --transpile-only -P tsconfig.json scripts/render-sample-invoice.ts [--pdf out.pdf]
 *
 * The picture must stay ≤ 200 KB (it is committed); the script fails when it is larger.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { renderInvoicePdf } from '../src/billing/documents';
import { sampleInvoice } from '../src/billing/documents/sample-documents';

const ROOT = resolve(__dirname, '..');
const OUT = join(ROOT, 'docs/images/sample-invoice.png');
const DPI = '100';
const MAX_BYTES = 200 * 1024;

async function main(): Promise<void> {
  const pdfArg = process.argv.indexOf('--pdf');
  const dir = mkdtempSync(join(tmpdir(), 'sample-invoice-'));
  try {
    const pdf = join(dir, 'sample-invoice.pdf');
    writeFileSync(pdf, await renderInvoicePdf(sampleInvoice()));
    if (pdfArg > 0 && process.argv[pdfArg + 1]) {
      copyFileSync(pdf, resolve(process.argv[pdfArg + 1]));
    }
    execFileSync('pdftoppm', [
      '-png',
      '-r',
      DPI,
      '-f',
      '1',
      '-l',
      '1',
      '-singlefile',
      pdf,
      join(dir, 'page'),
    ]);
    mkdirSync(join(ROOT, 'docs/images'), { recursive: true });
    copyFileSync(join(dir, 'page.png'), OUT);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const size = statSync(OUT).size;
  process.stdout.write(`${OUT}: ${(size / 1024).toFixed(0)} KB\n`);
  if (size > MAX_BYTES) {
    throw new Error(`${OUT} is ${size} bytes, more than ${MAX_BYTES}: lower DPI`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
