import { ApiError } from '../common/errors/api-error';
import { CsvError, CsvParser } from '../common/csv/csv-parse';
import { ImportFormat, ImportKind } from './import.entity';
import { checkHeader, csvRow, jsonRow, type StoredRow, UPLOAD_LIMITS } from './import-rows';

/**
 * An upload's bytes, chunk by chunk, as the rows to store: strict UTF-8 (a byte sequence that is not is 400
 * invalid_import_file, never replaced by U+FFFD), a leading BOM dropped, then CSV (RFC 4180, its first record the
 * header) or JSON Lines (one object per line, blank lines skipped). Nothing of the file is kept but the current line.
 */
export class RowReader {
  /** ignoreBOM false: a leading UTF-8 BOM is dropped by the decoder. */
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  private readonly csv = new CsvParser({
    maxColumns: UPLOAD_LIMITS.maxColumns,
    maxFieldLength: UPLOAD_LIMITS.maxFieldLength,
  });
  private header: string[] | null = null;
  private pendingLine = '';
  private rows = 0;
  private bytes = 0;

  constructor(
    private readonly kind: ImportKind,
    private readonly format: ImportFormat,
  ) {}

  /** The rows `chunk` completes. */
  push(chunk: Uint8Array): StoredRow[] {
    this.bytes += chunk.length;
    if (this.bytes > UPLOAD_LIMITS.maxBytes) {
      throw tooLarge();
    }
    return this.text(this.decode(chunk, true));
  }

  /** The last rows, once the upload has ended; a CSV without even a header is refused. */
  end(): StoredRow[] {
    const rows = this.text(this.decode(new Uint8Array(0), false));
    if (this.format === ImportFormat.Jsonl) {
      const last = this.pendingLine;
      this.pendingLine = '';
      return [...rows, ...this.lines([last])];
    }
    const records = this.csvRecords(() => this.csv.end());
    if (this.header === null && records.length === 0) {
      throw new ApiError(
        'invalid_import_file',
        'The file is empty: a CSV import starts with a header of its columns.',
      );
    }
    return [...rows, ...this.records(records)];
  }

  get rowCount(): number {
    return this.rows;
  }

  private decode(chunk: Uint8Array, stream: boolean): string {
    try {
      return this.decoder.decode(chunk, { stream });
    } catch {
      throw new ApiError(
        'invalid_import_file',
        'The file is not UTF-8: save it as UTF-8 (a spreadsheet\'s "CSV UTF-8"), other encodings are not read.',
      );
    }
  }

  private text(text: string): StoredRow[] {
    if (text.length === 0) {
      return [];
    }
    if (this.format === ImportFormat.Csv) {
      return this.records(this.csvRecords(() => this.csv.push(text)));
    }
    const parts = (this.pendingLine + text).split('\n');
    this.pendingLine = parts.pop()!;
    if (this.pendingLine.length > UPLOAD_LIMITS.maxLineLength) {
      throw lineTooLong();
    }
    return this.lines(parts);
  }

  private csvRecords(read: () => string[][]): string[][] {
    try {
      return read();
    } catch (error) {
      if (error instanceof CsvError) {
        throw new ApiError('invalid_import_file', `The file is not valid CSV. ${error.message}`);
      }
      throw error;
    }
  }

  private records(records: string[][]): StoredRow[] {
    const rows: StoredRow[] = [];
    for (const record of records) {
      if (this.header === null) {
        this.header = checkHeader(this.kind, record);
        continue;
      }
      rows.push(csvRow(this.kind, this.header, record, ++this.rows));
    }
    return rows;
  }

  private lines(lines: string[]): StoredRow[] {
    const rows: StoredRow[] = [];
    for (const raw of lines) {
      if (raw.length > UPLOAD_LIMITS.maxLineLength) {
        throw lineTooLong();
      }
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim() === '') {
        continue;
      }
      rows.push(jsonRow(line, ++this.rows));
    }
    return rows;
  }
}

export function tooLarge(): ApiError {
  return new ApiError(
    'payload_too_large',
    `The upload exceeds ${UPLOAD_LIMITS.maxBytes / 1_000_000} MB: split the file into several imports.`,
  );
}

function lineTooLong(): ApiError {
  return new ApiError(
    'invalid_import_file',
    `A line is longer than ${UPLOAD_LIMITS.maxLineLength} characters.`,
  );
}
