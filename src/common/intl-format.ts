/** A calendar date 'YYYY-MM-DD' (printed as that date in any time zone) or an instant (a Date or an ISO timestamp). */
export type DocumentDate = string | Date;

/**
 * Numbers, money and dates as documents and notifications print them, for its locale (BCP 47) and time zone, with the platform's Intl
 * (full ICU in Node). Money is integer minor units; it is turned into an exact decimal string (never divided as a
 * float) before Intl formats it.
 */

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const exponents = new Map<string, number>();
const formatters = new Map<string, Intl.NumberFormat>();
const dateFormatters = new Map<string, Intl.DateTimeFormat>();

function cached<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let value = cache.get(key);
  if (value === undefined) {
    value = make();
    cache.set(key, value);
  }
  return value;
}

/**
 * ISO 4217's minor units where they are not 2 (the standard's table, active currencies). Amounts in the API are integer
 * minor units of ISO 4217, so the document divides by these, not by Intl's (CLDR's) display digits, which differ for a
 * few (HUF, IQD, LBP…: CLDR shows no decimals, ISO keeps 2 or 3).
 */
const ISO_EXPONENTS: Record<string, number> = {
  ...Object.fromEntries(
    [
      'BIF',
      'CLP',
      'DJF',
      'GNF',
      'ISK',
      'JPY',
      'KMF',
      'KRW',
      'PYG',
      'RWF',
      'UGX',
      'UYI',
      'VND',
      'VUV',
      'XAF',
      'XOF',
      'XPF',
    ].map((code) => [code, 0]),
  ),
  ...Object.fromEntries(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map((code) => [code, 3])),
  CLF: 4,
  UYW: 4,
};

/**
 * The number of decimals of a currency's minor unit by ISO 4217: EUR 2, JPY 0, KWD 3 (2 for a code the table does
 * not list). Throws a RangeError for a code that is not three letters.
 */
export function currencyExponent(code: string): number {
  return cached(exponents, code, () => {
    if (!/^[A-Z]{3}$/.test(code)) {
      throw new RangeError(`Not an ISO 4217 currency code: "${code}"`);
    }
    return ISO_EXPONENTS[code] ?? 2;
  });
}

/** `minor` shifted `exponent` decimals left, as an exact decimal string: (-12345, 2) → "-123.45". */
export function minorToDecimal(minor: number | bigint, exponent: number): string {
  if (typeof minor === 'number' && !Number.isSafeInteger(minor)) {
    throw new RangeError(`Not an amount in minor units: ${minor}`);
  }
  const digits = (minor < 0 ? -BigInt(minor) : BigInt(minor)).toString();
  const sign = minor < 0 ? '-' : '';
  if (exponent === 0) {
    return `${sign}${digits}`;
  }
  const padded = digits.padStart(exponent + 1, '0');
  return `${sign}${padded.slice(0, -exponent)}.${padded.slice(-exponent)}`;
}

/** An amount in minor units of `currency`, formatted for `locale`: (123456, 'EUR', 'de-DE') → "1.234,56 €". */
export function formatMoney(minor: number | bigint, currency: string, locale: string): string {
  const exponent = currencyExponent(currency);
  const formatter = cached(
    formatters,
    `money|${locale}|${currency}`,
    () =>
      new Intl.NumberFormat(locale, {
        style: 'currency',
        currency,
        minimumFractionDigits: exponent,
        maximumFractionDigits: exponent,
      }),
  );
  return formatter.format(minorToDecimal(minor, exponent) as Intl.StringNumericLiteral);
}

function decimalString(value: number | string, what: string): string {
  const text = typeof value === 'number' ? String(value) : value.trim();
  if (!/^-?\d+(\.\d+)?$/.test(text)) {
    throw new RangeError(`Not a decimal ${what}: "${value}"`);
  }
  return text;
}

/** A quantity (whole or decimal), up to 4 decimals, for `locale`: ("1.5", 'de-DE') → "1,5". */
export function formatQuantity(quantity: number | string, locale: string): string {
  const formatter = cached(
    formatters,
    `quantity|${locale}`,
    () => new Intl.NumberFormat(locale, { maximumFractionDigits: 4 }),
  );
  return formatter.format(decimalString(quantity, 'quantity') as Intl.StringNumericLiteral);
}

/** A percentage given as a decimal string of percent, for `locale`: ("21.0000", 'de-DE') → "21 %". */
export function formatPercentage(percentage: string, locale: string): string {
  const text = decimalString(percentage, 'percentage');
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = (negative ? text.slice(1) : text).split('.');
  // Percent to a fraction by moving the decimal point two places left, exactly.
  const padded = whole.padStart(3, '0');
  const ratio = `${negative ? '-' : ''}${padded.slice(0, -2)}.${padded.slice(-2)}${fraction}`;
  const formatter = cached(
    formatters,
    `percent|${locale}`,
    () => new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 4 }),
  );
  return formatter.format(ratio as Intl.StringNumericLiteral);
}

/**
 * A document date for `locale`: a calendar date 'YYYY-MM-DD' as that date, an instant (Date or ISO timestamp) as its
 * date in `timeZone`. ('2026-01-31', 'de-DE') → "31.01.2026".
 */
export function formatDocumentDate(
  value: DocumentDate,
  locale: string,
  timeZone: string,
  dateStyle: 'medium' | 'long' = 'medium',
): string {
  const calendar = typeof value === 'string' ? CALENDAR_DATE.exec(value) : null;
  // A calendar date is its midnight UTC (documentInstant): read back in UTC, it is that day wherever the reader is.
  const zone = calendar ? 'UTC' : timeZone;
  const formatter = cached(
    dateFormatters,
    `${locale}|${zone}|${dateStyle}`,
    () => new Intl.DateTimeFormat(locale, { dateStyle, timeZone: zone }),
  );
  return formatter.format(documentInstant(value));
}

/**
 * The instant a document date stands for: a calendar date is its midnight UTC. Used for the PDF's CreationDate, so
 * that the same document gives the same bytes. Throws a RangeError for a date that does not parse.
 */
export function documentInstant(value: DocumentDate): Date {
  let instant: Date;
  if (value instanceof Date) {
    instant = value;
  } else {
    const calendar = CALENDAR_DATE.exec(value);
    instant = calendar
      ? new Date(Date.UTC(Number(calendar[1]), Number(calendar[2]) - 1, Number(calendar[3])))
      : new Date(value);
  }
  if (Number.isNaN(instant.getTime())) {
    throw new RangeError(`Not a date: "${String(value)}"`);
  }
  return instant;
}
