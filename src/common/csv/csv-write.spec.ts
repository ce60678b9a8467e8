import fc from 'fast-check';
import { parseCsv } from '../../../test/support/csv-read';
import { csvField, csvHeader, csvRecord, csvRecords, textField, type CsvValue } from './csv-write';

/** What a cell reads back as: the rule of csv-write.ts, written out independently. */
function expected(value: CsvValue): string {
  if (value === null || value === undefined) {
    return '';
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  if (value instanceof Date) {
    return value.toISOString();
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return ['=', '+', '-', '@', '\t', '\r'].includes(text.charAt(0)) ? `'${text}` : text;
}

describe('csv-write', () => {
  it('should write plain cells bare and end a record with CRLF', () => {
    expect(csvRecord(['Ada Lovelace', 4999, true, null, undefined])).toBe('Ada Lovelace,4999,true,,\r\n');
  });

  it('should quote a field holding a quote, a comma, CR or LF, doubling its quotes', () => {
    expect(textField('say "hi"')).toBe('"say ""hi"""');
    expect(textField('Lovelace, Ada')).toBe('"Lovelace, Ada"');
    expect(textField('two\nlines')).toBe('"two\nlines"');
    expect(textField('cr\rin')).toBe('"cr\rin"');
  });

  it.each(['=', '+', '-', '@', '\t', '\r'])('should neutralise a text cell starting with %j', (start) => {
    expect(textField(`${start}1+1`)).toBe(`"'${start}1+1"`);
  });

  it("should neutralise the classic payload: =cmd|' /C calc'!A0", () => {
    expect(csvField("=cmd|' /C calc'!A0")).toBe(`"'=cmd|' /C calc'!A0"`);
  });

  it('should keep a negative number a number, and neutralise the same digits as text', () => {
    expect(csvField(-4999)).toBe('-4999');
    expect(csvField(BigInt(-5))).toBe('-5');
    expect(csvField('-4999')).toBe(`"'-4999"`);
  });

  it('should write a date as ISO 8601 in UTC and an object as its JSON text', () => {
    expect(csvField(new Date('2026-11-21T10:00:00.000Z'))).toBe('2026-11-21T10:00:00.000Z');
    expect(csvField({ plan: 'fiber', n: 1 })).toBe('"{""plan"":""fiber"",""n"":1}"');
  });

  it('should refuse a number that would not read back (NaN, Infinity)', () => {
    expect(() => csvField(Number.NaN)).toThrow(RangeError);
    expect(() => csvField(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it('should write a header and one record per row', () => {
    const columns = [
      { header: 'id', value: (row: { id: string; amount: number }) => row.id },
      { header: 'amount', value: (row: { id: string; amount: number }) => row.amount },
    ];
    const text =
      csvHeader(columns) +
      csvRecords(columns, [
        { id: 'a', amount: -1 },
        { id: 'b', amount: 2 },
      ]);
    expect(text).toBe('id,amount\r\na,-1\r\nb,2\r\n');
  });

  it('should give back every cell when its output is parsed (property)', () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.string({
        unit: fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', '"', ',', 'a', ' ', "'", 'é'),
      }),
    );
    const cell: fc.Arbitrary<CsvValue> = fc.oneof(
      text,
      fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
      fc.boolean(),
      fc.constant(null),
      fc.date({ noInvalidDate: true, min: new Date('0001-01-01'), max: new Date('9999-12-31') }),
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
    );
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 1, maxLength: 6 }), { maxLength: 5 }), (rows) => {
        const output = rows.map((row) => csvRecord(row)).join('');
        expect(parseCsv(output)).toEqual(rows.map((row) => row.map(expected)));
      }),
      { numRuns: 500 },
    );
  });

  it('should never let a parsed text cell start a formula (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const [[cell]] = parseCsv(csvRecord([value]));
        expect(cell).not.toMatch(/^[=+\-@\t\r]/);
      }),
      { numRuns: 500 },
    );
  });
});
