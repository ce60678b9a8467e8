import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import type { Response } from 'supertest';
import type { Test } from 'supertest';

/**
 * PDFs read back with pdf-parse (pdf.js), as src/billing/documents/pdf-render.spec.ts does: pdf.js loads its worker
 * with a dynamic import, which Jest's CommonJS sandbox refuses, so the reading runs in a plain Node process (ESM) fed
 * the PDF on stdin, and answers the text of each page.
 */
const ROOT = resolve(__dirname, '../..');
const EXTRACT = `
import { PDFParse } from 'pdf-parse';
import { readFileSync } from 'node:fs';
const parser = new PDFParse({ data: new Uint8Array(readFileSync(0)) });
const result = await parser.getText();
await parser.destroy();
process.stdout.write(JSON.stringify({ pages: result.pages.map((page) => page.text) }));
`;

/** The text of each page of `pdf`. */
export function pdfPages(pdf: Buffer): string[] {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', EXTRACT], {
    cwd: ROOT,
    input: pdf,
    maxBuffer: 64 * 1024 * 1024,
  });
  return (JSON.parse(out.toString('utf8')) as { pages: string[] }).pages;
}

/** Whitespace (line breaks where a cell wraps, no-break spaces in amounts) compared as one space. */
export const flat = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** Text where a cell wrapped a word after its hyphen ("psp-\nstatement-0002") reads as the word again. */
export const joinHyphenated = (text: string): string => text.replace(/-\s+/g, '-');

/** The needles not found in `text` (whitespace-insensitive); expect it to be []. */
export function missingFrom(text: string, needles: string[]): string[] {
  const haystack = flat(text);
  return needles.filter((needle) => !haystack.includes(flat(needle)));
}

/**
 * A supertest request that keeps a binary answer (a PDF) whole as a Buffer in `res.body`; a JSON answer (an error)
 * is parsed as usual.
 */
export function binary(test: Test): Test {
  return test.buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
    res.on('end', () => {
      const body = Buffer.concat(chunks);
      const type = String(res.headers['content-type'] ?? '');
      if (/^application\/json/.test(type) && body.length > 0) {
        try {
          done(null, JSON.parse(body.toString('utf8')));
        } catch (error) {
          done(error as Error, body);
        }
        return;
      }
      done(null, body);
    });
  });
}

/** The PDF of a 200 answer, checked to be one. */
export function pdfOf(res: Response): Buffer {
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/pdf/);
  const body = res.body as Buffer;
  expect(Buffer.isBuffer(body)).toBe(true);
  expect(body.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  return body;
}
