import {
  DEFAULT_NUMBER_FORMATS,
  formatDocumentNumber,
  numberFormatProblem,
  parseNumberFormat,
  YEARLY_NEEDS_YEAR,
} from './numbering-format';

describe('document number formats', () => {
  describe('formatDocumentNumber', () => {
    it.each<[string, number, string, string]>([
      [DEFAULT_NUMBER_FORMATS.invoice, 42, '2026-03-01', 'INV-2026-000042'],
      [DEFAULT_NUMBER_FORMATS.credit_note, 7, '2026-12-31', 'CN-2026-000007'],
      ['{seq}', 1, '2026-01-01', '1'],
      ['{seq}', 1234567, '2026-01-01', '1234567'],
      ['F{YY}{MM}/{seq:4}', 9, '2031-07-15', 'F3107/0009'],
      ['{YYYY}.{MM}.{seq:1}', 123, '1999-02-28', '1999.02.123'],
      ['{seq:12}', 1, '2026-01-01', '000000000001'],
      // A number longer than its padding is written whole.
      ['A{seq:3}', 123456, '2026-01-01', 'A123456'],
      ['{seq:2}-{YYYY}-{YYYY}', 5, '2026-05-05', '05-2026-2026'],
      ['Rechnung Nr. {seq} – {YYYY}', 3, '2026-05-05', 'Rechnung Nr. 3 – 2026'],
      ['Счёт-{seq:3}', 12, '2026-05-05', 'Счёт-012'],
      ['🧾{seq}', 1, '2026-05-05', '🧾1'],
    ])('should format %s with %d on %s as %s', (format, sequence, issuedOn, expected) => {
      expect(numberFormatProblem(format)).toBeNull();
      expect(formatDocumentNumber(format, sequence, issuedOn)).toBe(expected);
      expect(formatDocumentNumber(parseNumberFormat(format), sequence, issuedOn)).toBe(expected);
    });

    it.each([0, -1, 1.5, Number.NaN, 2 ** 53])('should refuse the sequence %d', (sequence) => {
      expect(() => formatDocumentNumber('{seq}', sequence, '2026-01-01')).toThrow(RangeError);
    });

    it.each(['2026-1-01', '20260101', '', 'soon'])('should refuse the issue date %j', (issuedOn) => {
      expect(() => formatDocumentNumber('{seq}', 1, issuedOn)).toThrow(RangeError);
    });

    it('should refuse an invalid format', () => {
      expect(() => formatDocumentNumber('INV-{YYYY}', 1, '2026-01-01')).toThrow(/exactly one \{seq\}/);
    });
  });

  describe('parseNumberFormat', () => {
    it('should split a format into its literal text and tokens', () => {
      expect(parseNumberFormat('INV-{YYYY}/{MM}-{seq:6}x')).toEqual({
        parts: [
          { kind: 'text', text: 'INV-' },
          { kind: 'year' },
          { kind: 'text', text: '/' },
          { kind: 'month' },
          { kind: 'text', text: '-' },
          { kind: 'seq', width: 6 },
          { kind: 'text', text: 'x' },
        ],
        hasYear: true,
      });
      expect(parseNumberFormat('{YY}{seq}').hasYear).toBe(true);
      expect(parseNumberFormat('{MM}-{seq}').hasYear).toBe(false);
    });
  });

  describe('numberFormatProblem', () => {
    it.each<[string, unknown, RegExp]>([
      ['no seq token', 'INV-{YYYY}', /exactly one \{seq\}/],
      ['two seq tokens', '{seq}-{seq:3}', /exactly one \{seq\}/],
      ['the empty format', '', /exactly one \{seq\}/],
      ['an unknown token', 'INV-{DD}-{seq}', /unknown token \{DD\}/],
      ['a lower-case year', '{yyyy}-{seq}', /unknown token \{yyyy\}/],
      ['a token with spaces', '{ seq }', /unknown token \{ seq \}/],
      ['an empty token', '{}{seq}', /unknown token \{\}/],
      ['{seq:0}', '{seq:0}', /unknown token \{seq:0\}/],
      ['{seq:13}', '{seq:13}', /N must be from 1 to 12/],
      ['{seq:06}', '{seq:06}', /unknown token \{seq:06\}/],
      ['{seq:-1}', '{seq:-1}', /unknown token/],
      ['{seq:}', '{seq:}', /unknown token/],
      ['an unclosed brace', 'INV-{seq', /never closed/],
      ['a stray closing brace', 'INV}-{seq}', /closes no token/],
      ['a nested brace', '{{seq}}', /unknown token \{\{seq\}/],
      ['41 characters', `${'A'.repeat(36)}{seq}`, /at most 40 characters/],
      ['a tab', 'INV\t{seq}', /printable/],
      ['a new line', 'INV\n{seq}', /printable/],
      ['a zero-width space', 'INV\u200b{seq}', /printable/],
      ['a lone surrogate', 'INV\ud800{seq}', /printable/],
      ['a leading space', ' INV-{seq}', /white space/],
      ['a trailing space', 'INV-{seq} ', /white space/],
      ['a number', 42, /must be a string/],
      ['null', null, /must be a string/],
    ])('should refuse %s', (_name, format, message) => {
      expect(numberFormatProblem(format)).toMatch(message);
    });

    it('should count characters, not UTF-16 units, against the 40', () => {
      expect(numberFormatProblem(`${'€'.repeat(35)}{seq}`)).toBeNull();
      expect(numberFormatProblem(`${'🧾'.repeat(35)}{seq}`)).toBeNull();
      expect(numberFormatProblem(`${'🧾'.repeat(36)}{seq}`)).toMatch(/at most 40/);
    });

    it('should ask a series that restarts each year for a year token', () => {
      expect(numberFormatProblem('INV-{seq:6}', true)).toBe(YEARLY_NEEDS_YEAR);
      expect(numberFormatProblem('INV-{MM}-{seq:6}', true)).toBe(YEARLY_NEEDS_YEAR);
      expect(numberFormatProblem('INV-{seq:6}', false)).toBeNull();
      expect(numberFormatProblem('INV-{YY}-{seq:6}', true)).toBeNull();
      expect(numberFormatProblem('INV-{YYYY}-{seq:6}', true)).toBeNull();
      // The grammar speaks first.
      expect(numberFormatProblem('INV-{YYYY}', true)).toMatch(/exactly one \{seq\}/);
    });
  });
});
