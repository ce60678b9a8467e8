import fc from 'fast-check';
import { CsvError, CsvParser, parseCsv } from './csv-parse';

const LIMITS = { maxColumns: 100, maxFieldLength: 10_000 };

/** Writes records as RFC 4180 CSV: every field quoted when it must be (or always), with the given line end. */
function writeCsv(records: string[][], eol: string, quoteAll: boolean): string {
  return records
    .map((record) =>
      record
        .map((field) =>
          quoteAll || /[",\r\n]/.test(field) || field === '' ? `"${field.replace(/"/g, '""')}"` : field,
        )
        .join(','),
    )
    .join(eol);
}

/** Parses `text` fed in pieces cut at `cuts`. */
function parseInChunks(text: string, cuts: number[]): string[][] {
  const parser = new CsvParser(LIMITS);
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[][] = [];
  let from = 0;
  for (const point of [...points, text.length]) {
    out.push(...parser.push(text.slice(from, point)));
    from = point;
  }
  return [...out, ...parser.end()];
}

describe('CsvParser', () => {
  it('reads plain records with LF and CRLF line ends, and a last record without one', () => {
    expect(parseCsv('a,b\n1,2\r\n3,4', LIMITS)).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['3', '4'],
    ]);
  });

  it('reads quoted fields with commas, doubled quotes and newlines', () => {
    expect(parseCsv('name,note\r\n"Lovelace, Ada","said ""hi""\r\nthen left"\r\n', LIMITS)).toEqual([
      ['name', 'note'],
      ['Lovelace, Ada', 'said "hi"\r\nthen left'],
    ]);
  });

  it('drops a leading UTF-8 BOM and skips blank lines', () => {
    expect(parseCsv('\uFEFFa,b\n\n1,2\n\n', LIMITS)).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  it('keeps empty fields, a quoted empty field alone on a line included', () => {
    expect(parseCsv('a,,c\n""\n,\n', LIMITS)).toEqual([['a', '', 'c'], [''], ['', '']]);
  });

  it('treats a bare CR as a line end', () => {
    expect(parseCsv('a\rb\r', LIMITS)).toEqual([['a'], ['b']]);
  });

  it('refuses a quote left open, text after a closing quote and a quote inside an unquoted field', () => {
    expect(() => parseCsv('a\n"open', LIMITS)).toThrow(/never closed/);
    expect(() => parseCsv('"a"b\n', LIMITS)).toThrow(/after a closing quote/);
    expect(() => parseCsv('a\nab"c\n', LIMITS)).toThrow(CsvError);
    try {
      parseCsv('a\nb\nab"c\n', LIMITS);
    } catch (error) {
      expect((error as CsvError).record).toBe(3);
    }
  });

  it('refuses more columns than the limit (a CSV bomb of columns) and fields longer than the limit', () => {
    const limits = { maxColumns: 3, maxFieldLength: 5 };
    expect(parseCsv('a,b,c', limits)).toEqual([['a', 'b', 'c']]);
    expect(() => parseCsv('a,b,c,d', limits)).toThrow(/more than 3 columns/);
    expect(() => parseCsv(','.repeat(1_000_000), limits)).toThrow(/more than 3 columns/);
    expect(parseCsv('abcde', limits)).toEqual([['abcde']]);
    expect(() => parseCsv('abcdef', limits)).toThrow(/longer than 5/);
    expect(() => parseCsv('"abc""def"', limits)).toThrow(/longer than 5/);
  });

  it('reads back any records written as CSV, whatever the chunks and line ends (property)', () => {
    const field = fc.string({
      unit: fc.constantFrom('a', 'b', ',', '"', '\n', '\r', ' ', 'é', '😀'),
      maxLength: 8,
    });
    const record = fc.array(field, { minLength: 1, maxLength: 5 });
    fc.assert(
      fc.property(
        fc.array(record, { minLength: 1, maxLength: 8 }),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        (records, eol, quoteAll, trailingEol, cuts) => {
          const text = writeCsv(records, eol, quoteAll) + (trailingEol ? eol : '');
          expect(parseInChunks(text, cuts)).toEqual(records);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('gives the same records however the text is cut, a BOM and a CRLF split included (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 10 }), (cuts) => {
        const text = '\uFEFFid,"note"\r\n1,"x\r\ny"\r\n2,""""\r\n';
        expect(parseInChunks(text, cuts)).toEqual([
          ['id', 'note'],
          ['1', 'x\r\ny'],
          ['2', '"'],
        ]);
      }),
    );
  });
});
