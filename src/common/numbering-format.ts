/**
 * Document number formats (docs/billing.md, "Document numbers"): literal text and the tokens `{YYYY}`, `{YY}`, `{MM}`
 * (of the issue date) and exactly one `{seq}` or `{seq:N}` (the sequence, zero-padded to N digits, 1 ≤ N ≤ 12; a
 * longer number is written whole). Pure: the tenant settings validate a format with it and billing formats with it.
 */

/** The numbering series of a tenant; each has its own format and counter. */
export const NUMBERING_SERIES = ['invoice', 'credit_note'] as const;
export type NumberingSeries = (typeof NUMBERING_SERIES)[number];

/** The formats a tenant has until it sets its own. */
export const DEFAULT_NUMBER_FORMATS: Readonly<Record<NumberingSeries, string>> = {
  invoice: 'INV-{YYYY}-{seq:6}',
  credit_note: 'CN-{YYYY}-{seq:6}',
};

/** A format's longest length, in characters (Unicode code points). */
export const MAX_NUMBER_FORMAT_LENGTH = 40;
/** `{seq:N}`: the widest zero padding. */
export const MAX_SEQUENCE_WIDTH = 12;
/**
 * A formatted number's longest length: a 40-character format whose tokens expand at most to the sequence's 10 digits
 * (an int) or its 12 of padding; 64 leaves room.
 */
export const MAX_DOCUMENT_NUMBER_LENGTH = 64;

export type NumberFormatPart =
  | { kind: 'text'; text: string }
  | { kind: 'year' }
  | { kind: 'year2' }
  | { kind: 'month' }
  | { kind: 'seq'; width: number };

export interface NumberFormat {
  parts: NumberFormatPart[];
  /** It holds {YYYY} or {YY}: a series restarting each year gives distinct numbers only then. */
  hasYear: boolean;
}

/** Thrown by parseNumberFormat; the message completes "<field> …" (e.g. "must contain exactly one {seq} token"). */
export class NumberFormatError extends Error {}

/** Control, format, private-use, unassigned and surrogate code points, and line or paragraph separators. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}]/u;

const TOKEN = /^(?:(YYYY)|(YY)|(MM)|seq(?::([1-9]\d?))?)$/;

const TOKENS_HELP = '{YYYY}, {YY}, {MM}, {seq} or {seq:N}';

function tokenPart(token: string): NumberFormatPart {
  const match = TOKEN.exec(token);
  if (!match) {
    throw new NumberFormatError(`has an unknown token {${token}}: the tokens are ${TOKENS_HELP}`);
  }
  const [, year, year2, month, width] = match;
  if (year) {
    return { kind: 'year' };
  }
  if (year2) {
    return { kind: 'year2' };
  }
  if (month) {
    return { kind: 'month' };
  }
  const digits = width === undefined ? 0 : Number(width);
  if (digits > MAX_SEQUENCE_WIDTH) {
    throw new NumberFormatError(`has {seq:${width}}: N must be from 1 to ${MAX_SEQUENCE_WIDTH}`);
  }
  return { kind: 'seq', width: digits };
}

/** The parts of a format, or a NumberFormatError saying what is wrong with it. */
export function parseNumberFormat(format: string): NumberFormat {
  if ([...format].length > MAX_NUMBER_FORMAT_LENGTH) {
    throw new NumberFormatError(`must be at most ${MAX_NUMBER_FORMAT_LENGTH} characters`);
  }
  if (UNPRINTABLE.test(format)) {
    throw new NumberFormatError('must hold printable characters only (no control or invisible characters)');
  }
  if (format.trim() !== format) {
    throw new NumberFormatError('must not start or end with white space');
  }
  const parts: NumberFormatPart[] = [];
  let text = '';
  for (let i = 0; i < format.length; i += 1) {
    const char = format[i];
    if (char === '}') {
      throw new NumberFormatError(`has a "}" that closes no token: literal braces are not allowed`);
    }
    if (char !== '{') {
      text += char;
      continue;
    }
    const end = format.indexOf('}', i + 1);
    if (end < 0) {
      throw new NumberFormatError(`has a "{" that is never closed: literal braces are not allowed`);
    }
    if (text) {
      parts.push({ kind: 'text', text });
      text = '';
    }
    parts.push(tokenPart(format.slice(i + 1, end)));
    i = end;
  }
  if (text) {
    parts.push({ kind: 'text', text });
  }
  if (parts.filter((part) => part.kind === 'seq').length !== 1) {
    throw new NumberFormatError('must contain exactly one {seq} or {seq:N} token');
  }
  return { parts, hasYear: parts.some((part) => part.kind === 'year' || part.kind === 'year2') };
}

/**
 * What is wrong with `format` as a series' format (restarting each year or not), completing "<field> …", or null.
 * A series restarting each year needs {YYYY} or {YY}, else the new year's numbers repeat the last year's.
 */
export function numberFormatProblem(format: unknown, restartYearly = false): string | null {
  if (typeof format !== 'string') {
    return 'must be a string';
  }
  try {
    const parsed = parseNumberFormat(format);
    return restartYearly && !parsed.hasYear ? YEARLY_NEEDS_YEAR : null;
  } catch (error) {
    if (error instanceof NumberFormatError) {
      return error.message;
    }
    throw error;
  }
}

/** The message of a yearly restart on a format without a year. */
export const YEARLY_NEEDS_YEAR =
  'must contain {YYYY} or {YY} while the series restarts each year (restart_yearly), else numbers would repeat';

const DATE_ONLY = /^(\d{4})-(\d{2})-\d{2}$/;

/**
 * The document number of `sequence` (an integer ≥ 1) issued on `issuedOn` (YYYY-MM-DD), e.g.
 * formatDocumentNumber('INV-{YYYY}-{seq:6}', 42, '2026-03-01') is 'INV-2026-000042'.
 */
export function formatDocumentNumber(
  format: string | NumberFormat,
  sequence: number,
  issuedOn: string,
): string {
  if (!Number.isSafeInteger(sequence) || sequence < 1) {
    throw new RangeError(`A document sequence is an integer from 1, not ${sequence}`);
  }
  const date = DATE_ONLY.exec(issuedOn);
  if (!date) {
    throw new RangeError(`An issue date is YYYY-MM-DD, not ${issuedOn}`);
  }
  const [, year, month] = date;
  const parsed = typeof format === 'string' ? parseNumberFormat(format) : format;
  return parsed.parts
    .map((part) => {
      switch (part.kind) {
        case 'text':
          return part.text;
        case 'year':
          return year;
        case 'year2':
          return year.slice(2);
        case 'month':
          return month;
        case 'seq':
          return String(sequence).padStart(part.width, '0');
      }
    })
    .join('');
}
