import {
  currencyExponent,
  documentInstant,
  formatDocumentDate,
  formatMoney,
  formatPercentage,
  formatQuantity,
  minorToDecimal,
} from './intl-format';

/** Intl separates amount and symbol with a no-break space (U+00A0) or a narrow one (U+202F): compare them as spaces. */
const spaces = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

describe('currencyExponent', () => {
  it.each([
    ['EUR', 2],
    ['USD', 2],
    ['JPY', 0],
    ['KWD', 3],
    ['BHD', 3],
  ])('%s has %i decimals', (code, exponent) => {
    expect(currencyExponent(code)).toBe(exponent);
  });

  it('refuses what is not a currency code', () => {
    expect(() => currencyExponent('eur')).toThrow(RangeError);
    expect(() => currencyExponent('EURO')).toThrow(RangeError);
  });
});

describe('minorToDecimal', () => {
  it.each([
    [123456, 2, '1234.56'],
    [5, 2, '0.05'],
    [-5, 2, '-0.05'],
    [0, 2, '0.00'],
    [30125, 3, '30.125'],
    [1234, 0, '1234'],
    [-1234, 0, '-1234'],
    [Number.MAX_SAFE_INTEGER, 2, '90071992547409.91'],
  ])('%i with %i decimals is %s', (minor, exponent, decimal) => {
    expect(minorToDecimal(minor, exponent)).toBe(decimal);
  });

  it('refuses a fraction or an unsafe integer', () => {
    expect(() => minorToDecimal(1.5, 2)).toThrow(RangeError);
    expect(() => minorToDecimal(2 ** 60, 2)).toThrow(RangeError);
  });
});

describe('formatMoney', () => {
  it.each([
    [123456, 'EUR', 'de-DE', '1.234,56 €'],
    [-123456, 'EUR', 'de-DE', '-1.234,56 €'],
    [5, 'EUR', 'de-DE', '0,05 €'],
    [123456, 'EUR', 'en-IE', '€1,234.56'],
    [1234, 'JPY', 'ja-JP', '￥1,234'],
    [-1234, 'JPY', 'ja-JP', '-￥1,234'],
    [30125, 'KWD', 'en-KW', 'KWD 30.125'],
    [-30125, 'KWD', 'en-KW', '-KWD 30.125'],
    [9007199254740991, 'EUR', 'de-DE', '90.071.992.547.409,91 €'],
  ])('%i %s in %s is %s', (minor, currency, locale, expected) => {
    expect(spaces(formatMoney(minor, currency, locale))).toBe(expected);
  });

  it("uses the locale's digits and three decimals for KWD in ar-KW", () => {
    // Arabic-Indic digits and decimal separator; the exact bidi marks around them are ICU's to choose.
    expect(formatMoney(30125, 'KWD', 'ar-KW')).toContain('٣٠٫١٢٥');
    expect(formatMoney(30125, 'KWD', 'ar-KW')).toContain('د.ك.');
    expect(formatMoney(-30125, 'KWD', 'ar-KW')).toMatch(/-.*٣٠٫١٢٥/);
  });

  it('formats bigint amounts too', () => {
    expect(spaces(formatMoney(-123456n, 'EUR', 'de-DE'))).toBe('-1.234,56 €');
  });
});

describe('formatQuantity and formatPercentage', () => {
  it.each([
    [1, 'de-DE', '1'],
    ['1.5', 'de-DE', '1,5'],
    [1234, 'de-DE', '1.234'],
    ['0.1250', 'en-US', '0.125'],
  ])('quantity %s in %s is %s', (quantity, locale, expected) => {
    expect(formatQuantity(quantity, locale)).toBe(expected);
  });

  it.each([
    ['21.0000', 'de-DE', '21 %'],
    ['5.5000', 'de-DE', '5,5 %'],
    ['7', 'en-US', '7%'],
    ['0.2500', 'en-US', '0.25%'],
    ['100.0000', 'en-US', '100%'],
    ['12.3456', 'en-US', '12.3456%'],
  ])('percentage %s in %s is %s', (percentage, locale, expected) => {
    expect(spaces(formatPercentage(percentage, locale))).toBe(expected);
  });

  it('refuses what is not a decimal', () => {
    expect(() => formatPercentage('21%', 'en-US')).toThrow(RangeError);
    expect(() => formatQuantity('1e3', 'en-US')).toThrow(RangeError);
  });
});

describe('formatDocumentDate', () => {
  it('prints a calendar date as that date in any time zone', () => {
    expect(formatDocumentDate('2026-01-01', 'de-DE', 'America/Los_Angeles')).toBe('01.01.2026');
    expect(formatDocumentDate('2026-01-01', 'de-DE', 'Pacific/Kiritimati')).toBe('01.01.2026');
  });

  it('prints an instant as its date in the time zone', () => {
    const instant = '2026-01-31T23:30:00Z';
    expect(formatDocumentDate(instant, 'de-DE', 'UTC')).toBe('31.01.2026');
    expect(formatDocumentDate(instant, 'de-DE', 'Europe/Berlin')).toBe('01.02.2026');
    expect(formatDocumentDate(new Date(instant), 'en-US', 'America/New_York')).toBe('Jan 31, 2026');
  });

  it('follows the locale', () => {
    expect(formatDocumentDate('2026-02-15', 'ja-JP', 'Asia/Tokyo')).toBe('2026/02/15');
    expect(formatDocumentDate('2026-02-15', 'en-GB', 'Europe/London')).toBe('15 Feb 2026');
  });

  it('takes a calendar date as its midnight UTC, and refuses what does not parse', () => {
    expect(documentInstant('2026-02-01').toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(() => documentInstant('2026-02-31x')).toThrow(RangeError);
  });
});

describe('currencyExponent: ISO 4217, not CLDR display digits', () => {
  it.each([
    ['EUR', 2],
    ['JPY', 0],
    ['KWD', 3],
    ['HUF', 2],
    ['IQD', 3],
    ['LBP', 2],
    ['CLF', 4],
  ])('%s has %i decimals of minor unit', (code, exponent) => {
    expect(currencyExponent(code)).toBe(exponent);
  });

  it('should print 12345 fillér as 123,45 Ft, where CLDR would show whole forints', () => {
    expect(formatMoney(12345, 'HUF', 'hu-HU').replace(/\s/g, ' ')).toMatch(/^123,45 Ft$/);
  });
});
