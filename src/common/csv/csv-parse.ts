/**
 * An RFC 4180 CSV parser fed text in chunks (a stream of any size, a record split anywhere): quoted fields, quoted
 * newlines, doubled quotes, CRLF, LF or CR line ends, a leading UTF-8 BOM. Blank lines are skipped. A file that is
 * not CSV (a quote left open, text after a closing quote, a bare quote in an unquoted field) or that goes past the
 * limits (columns per record, characters per field: a "CSV bomb") stops with a CsvError naming the record.
 */

export interface CsvLimits {
  maxColumns: number;
  maxFieldLength: number;
}

export class CsvError extends Error {
  constructor(
    message: string,
    /** The 1-based record (the header is record 1) where the problem is. */
    readonly record: number,
  ) {
    super(message);
  }
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

type State = 'fieldStart' | 'unquoted' | 'quoted' | 'quoteInQuoted';

export class CsvParser {
  private state: State = 'fieldStart';
  private field = '';
  private record: string[] = [];
  private records = 0;
  private started = false;
  /** A CR ended the last record: an LF right after it belongs to the same line end. */
  private afterCr = false;
  /** The record has a quoted field: `""` alone on a line is a record of one empty field, not a blank line. */
  private quotedRecord = false;

  constructor(private readonly limits: CsvLimits) {}

  /** The records completed by `text` (more may be pending until the next chunk or `end`). */
  push(text: string): string[][] {
    let input = text;
    if (!this.started && input.length > 0) {
      this.started = true;
      if (input.charCodeAt(0) === 0xfeff) {
        input = input.slice(1);
      }
    }
    const out: string[][] = [];
    let i = 0;
    while (i < input.length) {
      if (this.afterCr) {
        this.afterCr = false;
        if (input.charCodeAt(i) === LF) {
          i++;
          continue;
        }
      }
      i = this.step(input, i, out);
    }
    return out;
  }

  /** One step of the state machine from `i`: answers where the next one starts. */
  private step(input: string, i: number, out: string[][]): number {
    const c = input.charCodeAt(i);
    switch (this.state) {
      case 'fieldStart':
        if (c === QUOTE) {
          this.state = 'quoted';
          this.quotedRecord = true;
        } else if (c === COMMA || c === CR || c === LF) {
          this.separator(c, out);
        } else {
          this.state = 'unquoted';
          return i;
        }
        return i + 1;
      case 'unquoted':
        return this.unquoted(input, i, out);
      case 'quoted': {
        const j = input.indexOf('"', i);
        this.append(input, i, j === -1 ? input.length : j);
        if (j === -1) {
          return input.length;
        }
        this.state = 'quoteInQuoted';
        return j + 1;
      }
      case 'quoteInQuoted':
        if (c === QUOTE) {
          this.append('"', 0, 1);
          this.state = 'quoted';
        } else if (c === COMMA || c === CR || c === LF) {
          this.state = 'fieldStart';
          this.separator(c, out);
        } else {
          throw new CsvError(
            `Record ${this.records + 1}: text after a closing quote (a quote inside a quoted field is written twice).`,
            this.records + 1,
          );
        }
        return i + 1;
    }
  }

  /** An unquoted field's run of characters up to its comma or line end. */
  private unquoted(input: string, i: number, out: string[][]): number {
    let j = i;
    while (j < input.length) {
      const d = input.charCodeAt(j);
      if (d === COMMA || d === CR || d === LF || d === QUOTE) {
        break;
      }
      j++;
    }
    this.append(input, i, j);
    if (j === input.length) {
      return j;
    }
    const d = input.charCodeAt(j);
    if (d === QUOTE) {
      throw new CsvError(
        `Record ${this.records + 1}: a quote inside an unquoted field (quote the whole field and double the quotes in it).`,
        this.records + 1,
      );
    }
    this.state = 'fieldStart';
    this.separator(d, out);
    return j + 1;
  }

  /** A comma ends the field; a CR or LF ends the record too. */
  private separator(c: number, out: string[][]): void {
    if (c === COMMA) {
      this.endField();
      return;
    }
    this.endRecord(out);
    this.afterCr = c === CR;
  }

  /** The last record, when the text does not end with a line end; a quote still open is an error. */
  end(): string[][] {
    if (this.state === 'quoted') {
      throw new CsvError(
        `Record ${this.records + 1}: a quoted field is never closed (the file ends inside it).`,
        this.records + 1,
      );
    }
    const out: string[][] = [];
    if (this.state !== 'fieldStart' || this.field.length > 0 || this.record.length > 0 || this.quotedRecord) {
      this.endRecord(out);
    }
    this.state = 'fieldStart';
    return out;
  }

  private append(text: string, from: number, to: number): void {
    if (to === from) {
      return;
    }
    if (this.field.length + (to - from) > this.limits.maxFieldLength) {
      throw new CsvError(
        `Record ${this.records + 1}: a field is longer than ${this.limits.maxFieldLength} characters.`,
        this.records + 1,
      );
    }
    this.field += text.slice(from, to);
  }

  private endField(): void {
    if (this.record.length + 1 >= this.limits.maxColumns) {
      throw new CsvError(
        `Record ${this.records + 1}: more than ${this.limits.maxColumns} columns.`,
        this.records + 1,
      );
    }
    this.record.push(this.field);
    this.field = '';
  }

  private endRecord(out: string[][]): void {
    this.record.push(this.field);
    this.field = '';
    const record = this.record;
    const quoted = this.quotedRecord;
    this.record = [];
    this.quotedRecord = false;
    // A blank line is no record (a trailing newline, an empty line between records).
    if (record.length === 1 && record[0] === '' && !quoted) {
      return;
    }
    this.records++;
    out.push(record);
  }
}

/** The whole of `text` parsed at once (tests, small inputs). */
export function parseCsv(text: string, limits: CsvLimits): string[][] {
  const parser = new CsvParser(limits);
  return [...parser.push(text), ...parser.end()];
}
