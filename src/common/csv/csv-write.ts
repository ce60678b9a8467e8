/**
 * CSV as RFC 4180 writes it: records end with CRLF, a field holding `"`, `,`, CR or LF is quoted with its quotes
 * doubled. A cell's JavaScript type decides how it is written (docs/exports.md):
 * - null or undefined: an empty field;
 * - a number (money in integer minor units, counts) or a bigint: its digits, a negative one keeping its `-`;
 * - a boolean: `true` or `false`;
 * - a Date: ISO 8601 in UTC (`toISOString()`);
 * - a string, or an object (written as its JSON text): text. A text cell starting with `=`, `+`, `-`, `@`, a tab or
 *   CR is neutralised against formula injection (OWASP "CSV injection"): prefixed with `'` and quoted, so a
 *   spreadsheet shows it as text instead of evaluating it.
 */
export type CsvValue = string | number | bigint | boolean | Date | object | null | undefined;

/** The characters a spreadsheet reads as the start of a formula (or that hide one: tab, CR). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** What makes a field need quotes (RFC 4180, 2.6). */
const NEEDS_QUOTES = /[",\r\n]/;

export const CSV_LINE_END = '\r\n';

function quoted(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/** A text field: neutralised when it could start a formula, quoted when it must be. */
export function textField(text: string): string {
  if (FORMULA_START.test(text)) {
    return quoted(`'${text}`);
  }
  return NEEDS_QUOTES.test(text) ? quoted(text) : text;
}

/** One cell as a field, by its type (see the top of this file). */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) {
    return '';
  }
  if (typeof value === 'number') {
    // Money and counts are integers; NaN or Infinity would not read back as a number anywhere.
    if (!Number.isFinite(value)) {
      throw new RangeError(`A CSV number cell must be finite, got ${value}.`);
    }
    return String(value);
  }
  if (typeof value === 'bigint' || typeof value === 'boolean') {
    return String(value);
  }
  if (value instanceof Date) {
    return value.toISOString();
  }
  return textField(typeof value === 'string' ? value : JSON.stringify(value));
}

/** One record: its fields, comma-separated, ending with CRLF. */
export function csvRecord(values: readonly CsvValue[]): string {
  return values.map(csvField).join(',') + CSV_LINE_END;
}

/** A column of an export: its header and how one row gives its cell. */
export interface CsvColumn<T> {
  header: string;
  value: (row: T) => CsvValue;
}

/** The header record of `columns`. */
export function csvHeader<T>(columns: readonly CsvColumn<T>[]): string {
  return csvRecord(columns.map((column) => column.header));
}

/** The records of `rows`, one per row, as one string (a page of an export is written in one chunk). */
export function csvRecords<T>(columns: readonly CsvColumn<T>[], rows: readonly T[]): string {
  let text = '';
  for (const row of rows) {
    text += csvRecord(columns.map((column) => column.value(row)));
  }
  return text;
}
