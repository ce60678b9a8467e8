import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { inflateSync } from 'node:zlib';
import type { DocumentLine, InvoiceDocument } from './document-model';
import { renderCreditNotePdf, renderInvoicePdf, renderStatementPdf, streamInvoicePdf } from './documents';
import { formatDocumentDate, formatMoney, formatPercentage } from '../../common/intl-format';
import { pdfEtag } from './pdf-canvas';
import { sampleCreditNote, sampleInvoice, sampleStatement } from './sample-documents';

/**
 * The PDFs read back with pdf-parse (pdf.js): its text, page by page. pdf.js loads its worker with a dynamic import,
 * which Jest's CommonJS sandbox refuses, so the reading runs in a plain Node process (ESM) fed the PDF on stdin.
 */
const ROOT = resolve(__dirname, '../../..');
const EXTRACT = `
import { PDFParse } from 'pdf-parse';
import { readFileSync } from 'node:fs';
const parser = new PDFParse({ data: new Uint8Array(readFileSync(0)) });
const result = await parser.getText();
await parser.destroy();
process.stdout.write(JSON.stringify({ pages: result.pages.map((page) => page.text) }));
`;

function readBack(pdf: Buffer): string[] {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', EXTRACT], {
    cwd: ROOT,
    input: pdf,
    maxBuffer: 64 * 1024 * 1024,
  });
  return (JSON.parse(out.toString('utf8')) as { pages: string[] }).pages;
}

/** Whitespace (line breaks where a cell wraps, no-break spaces in amounts) compared as one space. */
const flat = (text: string) => text.replace(/\s+/g, ' ').trim();

function expectText(haystack: string, needles: string[]): void {
  const text = flat(haystack);
  const missing = needles.filter((needle) => !text.includes(flat(needle)));
  expect(missing).toEqual([]);
}

/** Every Flate-compressed stream of a PDF, inflated (as latin1 text). */
function inflatedStreams(pdf: Buffer): string[] {
  const raw = pdf.toString('latin1');
  const streams: string[] = [];
  for (const match of raw.matchAll(/\/FlateDecode[^]*?stream\n/g)) {
    const start = (match.index ?? 0) + match[0].length;
    const end = raw.indexOf('\nendstream', start);
    streams.push(inflateSync(pdf.subarray(start, end)).toString('latin1'));
  }
  return streams;
}

function count(haystack: string, needle: string): number {
  return flat(haystack).split(flat(needle)).length - 1;
}

const eur = (minor: number) => formatMoney(minor, 'EUR', 'de-DE');

describe('renderInvoicePdf', () => {
  let pdf: Buffer;
  let pages: string[];

  beforeAll(async () => {
    pdf = await renderInvoicePdf(sampleInvoice());
    pages = readBack(pdf);
  });

  it('is a one-page PDF', () => {
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pages).toHaveLength(1);
  });

  it('carries the number, the dates, the issuer and the customer', () => {
    const invoice = sampleInvoice();
    expectText(pages[0], [
      'Invoice',
      'INV-2026-000123',
      '01.02.2026',
      '15.02.2026',
      'Nordlicht Glasfaser GmbH',
      'Hafenstraße 12',
      'Tax ID: DE123456789',
      'HRB 123456, Amtsgericht Hamburg',
      'billing@nordlicht.example',
      'Zoë Ñúñez',
      'Große Bergstraße 7',
      invoice.issuer.footer as string,
      '1/1',
    ]);
  });

  it('carries every line: description, period, quantity, unit price, taxes and amount', () => {
    const { lines, locale, time_zone } = sampleInvoice();
    for (const line of lines) {
      const row = [
        String(line.quantity),
        eur(line.unit_amount),
        ...line.taxes.map((tax) => `${tax.name} ${formatPercentage(tax.percentage, locale)}`),
        eur(line.amount),
      ].join(' ');
      expectText(pages[0], [line.description, row]);
      if (line.period) {
        expectText(pages[0], [
          `${formatDocumentDate(line.period.start, locale, time_zone)} – ${formatDocumentDate(line.period.end, locale, time_zone)}`,
        ]);
      }
    }
  });

  it('carries the tax rows, the totals and what is due, formatted for de-DE', () => {
    expectText(pages[0], [
      'VAT 19 % 84,24 € 16,01 €',
      'VAT reduced 7 % 8,50 € 0,60 €',
      'Subtotal 92,74 €',
      'Total 109,35 €',
      'Amount paid 25,00 €',
      'Amount due 84,35 €',
    ]);
  });

  it('carries the notes and the payment instructions', () => {
    expectText(pages[0], [
      'Payment instructions',
      'IBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX',
      'Thank you for choosing Nordlicht.',
    ]);
  });

  it('embeds its fonts from the npm package and uses no standard font', () => {
    const raw = pdf.toString('latin1');
    expect(raw).toMatch(/\/BaseFont \/[A-Z]{6}\+DejaVuSans\b/);
    expect(raw).toMatch(/\/BaseFont \/[A-Z]{6}\+DejaVuSans-Bold\b/);
    expect(raw).toContain('/FontFile2');
    expect(raw).not.toMatch(/\/BaseFont \/(Helvetica|Times|Courier)/);
  });

  it('gives the same bytes for the same invoice, dated by the invoice, not the clock', async () => {
    const again = await renderInvoicePdf(sampleInvoice());
    expect(again.equals(pdf)).toBe(true);
    expect(pdfEtag(again)).toBe(pdfEtag(pdf));
    // CreationDate and ModDate (indirect objects of the info dictionary): the issue date, and no other date.
    expect(pdf.toString('latin1').match(/\(D:\d{14}Z\)/g)).toEqual([
      '(D:20260201000000Z)',
      '(D:20260201000000Z)',
    ]);

    const later = await renderInvoicePdf({ ...sampleInvoice(), issue_date: '2026-02-02' });
    expect(later.equals(pdf)).toBe(false);
    expect(pdfEtag(later)).not.toBe(pdfEtag(pdf));
  });

  it('gives the bytes a fresh process gives, whatever was rendered before (the parsed fonts are shared)', async () => {
    // Composite glyphs (ύ, ό: their components υ and ο enter the glyph cache when a subset is written), ligatures
    // (fi, ffi, and the ﬁ character itself), Cyrillic.
    // The name in bold (the customer) and in the regular font (a line), after a document with ύ and ό in both.
    const name = 'Γιώργος Παπαδόπουλος';
    const greek: InvoiceDocument = {
      ...sampleInvoice(),
      customer: { name, address_lines: ['Οδός Ερμού 15, Αθήνα'] },
      lines: [{ ...sampleInvoice().lines[0], description: `Fiber 500 for ${name}` }],
    };
    await renderInvoicePdf({
      ...sampleInvoice(),
      customer: {
        name: 'Иван Петров, Ερμού',
        address_lines: ['Οδός Ερμού 15, Αθήνα', 'ﬁle ﬃx traffic office'],
      },
    });
    const warm = await renderInvoicePdf(greek);
    let fresh: Promise<Buffer> = Promise.resolve(Buffer.alloc(0));
    jest.isolateModules(() => {
      // A new module registry: fontkit and the fonts parsed anew, as in a process that rendered nothing yet.
      const isolated = jest.requireActual<typeof import('./documents')>('./documents');
      fresh = isolated.renderInvoicePdf(greek);
    });
    expect((await fresh).equals(warm)).toBe(true);
    expectText(readBack(warm)[0], [name, `Fiber 500 for ${name}`, 'Οδός Ερμού 15, Αθήνα']);
  });

  it('prints ligatures as text that reads back as its letters', async () => {
    const description = 'Traffic office profile, flat fee (ﬁxed)';
    const pdf = await renderInvoicePdf({
      ...sampleInvoice(),
      lines: [{ ...sampleInvoice().lines[0], description }],
    });
    expectText(readBack(pdf)[0], ['Traffic office profile, flat fee (fixed)']);
    // pdf.js reads ligatures as letters anyway: the ToUnicode maps themselves say "fi" and "ffi", not "ﬁ" and "ﬃ".
    const toUnicode = inflatedStreams(pdf).filter((stream) => stream.includes('begincmap'));
    expect(toUnicode.join('\n')).toMatch(/<0066 0069>/i);
    expect(toUnicode.join('\n')).toMatch(/<0066 0066 0069>/i);
    expect(toUnicode.join('\n')).not.toMatch(/<fb0[13]>/i);
  });

  it('rejects a model it cannot draw, before writing anything', async () => {
    await expect(renderInvoicePdf({ ...sampleInvoice(), due_date: 'soon' })).rejects.toThrow(RangeError);
    const out = new PassThrough();
    const written: Buffer[] = [];
    out.on('data', (chunk: Buffer) => written.push(chunk));
    await expect(streamInvoicePdf({ ...sampleInvoice(), currency: 'euro' }, out)).rejects.toThrow(RangeError);
    expect(written).toEqual([]);
  });

  it('streams the same bytes into a Writable', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(chunk));
    await streamInvoicePdf(sampleInvoice(), out);
    expect(Buffer.concat(chunks).equals(pdf)).toBe(true);
  });
});

describe('names in any script the issue names', () => {
  it.each([
    ['Latin with accents', 'Zoë Ñúñez', 'Ærøskøbing Straße 4, Łódź'],
    ['Cyrillic', 'Иван Петров', 'ул. Тверская, д. 7, Москва'],
    ['Greek', 'Γιώργος Παπαδόπουλος', 'Οδός Ερμού 15, Αθήνα'],
  ])('%s: %s', async (_script, name, address) => {
    const invoice: InvoiceDocument = {
      ...sampleInvoice(),
      customer: { name, address_lines: [address], tax_id: 'EL123456789' },
      lines: [{ ...sampleInvoice().lines[0], description: `${name} — ${address}` }],
    };
    const pdf = await renderInvoicePdf(invoice);
    const [page] = readBack(pdf);
    expectText(page, [name, address, `${name} — ${address}`, 'INV-2026-000123', 'Total 109,35 €']);
  });
});

describe('other currencies and locales', () => {
  it('prints JPY without decimals in ja-JP and KWD with three in en-KW', async () => {
    const base = sampleInvoice();
    const jpy = await renderInvoicePdf({
      ...base,
      currency: 'JPY',
      locale: 'ja-JP',
      time_zone: 'Asia/Tokyo',
    });
    // ja-JP's fullwidth yen (U+FFE5) is not in DejaVu Sans: it prints as "¥".
    expectText(readBack(jpy)[0], ['Total ¥10,935', 'Amount due ¥8,435', '2026/02/01']);
    const kwd = await renderInvoicePdf({
      ...base,
      currency: 'KWD',
      locale: 'en-KW',
      time_zone: 'Asia/Kuwait',
    });
    expectText(readBack(kwd)[0], ['Total KWD 10.935', 'Amount due KWD 8.435']);
  });
});

describe('a 200-line invoice', () => {
  const LINES = 200;
  const description = (n: number) =>
    `Line ${String(n).padStart(3, '0')}: Static IPv4 address, Αθήνα / Москва`;
  let pages: string[];

  beforeAll(async () => {
    const lines: DocumentLine[] = Array.from({ length: LINES }, (_, i) => ({
      description: description(i + 1),
      quantity: 1,
      unit_amount: 100 + i,
      amount: 100 + i,
      taxes: [{ name: 'VAT', percentage: '19.0000' }],
      period: { start: '2026-02-01', end: '2026-02-28' },
    }));
    pages = readBack(await renderInvoicePdf({ ...sampleInvoice(), lines }));
  });

  it('spans pages, each numbered n/N, with the number on each and the table header on each the lines run onto', () => {
    expect(pages.length).toBeGreaterThan(2);
    pages.forEach((page, i) => {
      expectText(page, [`${i + 1}/${pages.length}`]);
      if (i > 0) {
        expectText(page, ['Invoice INV-2026-000123 · Zoë Ñúñez (continued)']);
      }
      if (page.includes('Line ')) {
        expectText(page, ['Description Qty Unit price Tax Amount']);
      }
    });
    // Every page but the last (which may hold the totals alone) carries lines.
    expect(pages.slice(0, -1).every((page) => page.includes('Line '))).toBe(true);
  });

  it('carries every line exactly once, in order, and the totals after the last', () => {
    const all = pages.join('\n');
    for (let n = 1; n <= LINES; n++) {
      expect(count(all, description(n))).toBe(1);
    }
    const order = Array.from({ length: LINES }, (_, i) => flat(all).indexOf(flat(description(i + 1))));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(flat(all).indexOf('Amount due 84,35 €')).toBeGreaterThan(order[LINES - 1]);
  });
});

describe('renderCreditNotePdf and renderStatementPdf', () => {
  it('prints the credit note: its number, the invoice it corrects, the reason and the total', async () => {
    const pages = readBack(await renderCreditNotePdf(sampleCreditNote()));
    expectText(pages[0], [
      'Credit note',
      'CN-2026-000007',
      'Original invoice INV-2026-000123',
      'Router rental (FRITZ!Box 5590 Fiber)',
      'VAT 19 % 4,90 € 0,93 €',
      'Total 5,83 €',
      'Router returned on 3 February',
      'Zoë Ñúñez',
    ]);
  });

  it('prints the statement: opening balance, every entry with its running balance, closing balance', async () => {
    const statement = sampleStatement();
    const pages = readBack(await renderStatementPdf(statement));
    expectText(pages[0], [
      'Statement',
      'Period 01.02.2026 – 28.02.2026',
      `01.02.2026 Opening balance ${eur(0)}`,
      ...statement.entries.map(
        (entry) =>
          `${formatDocumentDate(entry.date, 'de-DE', 'UTC')} ${entry.kind} ${entry.reference} ${entry.description} ` +
          `${eur(entry.debit || entry.credit)} ${eur(entry.balance)}`,
      ),
      `28.02.2026 Closing balance ${eur(statement.closing_balance)}`,
    ]);
  });
});

describe('pdfEtag', () => {
  it('is a strong, quoted tag of the bytes', () => {
    const tag = pdfEtag(Buffer.from('%PDF-1.7 a'));
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(pdfEtag(Buffer.from('%PDF-1.7 a'))).toBe(tag);
    expect(pdfEtag(Buffer.from('%PDF-1.7 b'))).not.toBe(tag);
  });
});
