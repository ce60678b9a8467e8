import { StreamableFile } from '@nestjs/common';
import { Readable } from 'node:stream';
import { csvHeader, csvRecords, type CsvColumn } from '../common/csv/csv-write';

/** Rows per query of an export: the list's keyset page, made larger (one round trip per 1,000 rows). */
export const EXPORT_PAGE_SIZE = 1000;

/** One page of an export's rows, and the cursor of the next (null: it was the last). */
export interface ExportPage<T> {
  items: readonly T[];
  next: string | null;
}

/** Reads the page after `cursor` (undefined: the first), in the list's order, with the export's filters. */
export type ExportPages<T> = (cursor: string | undefined) => Promise<ExportPage<T>>;

/** The chunks of the CSV: the header with the first page, then one chunk per page, read only as the client takes them. */
async function* chunks<T>(
  columns: readonly CsvColumn<T>[],
  pages: ExportPages<T>,
  first: ExportPage<T>,
): AsyncGenerator<string> {
  let page = first;
  yield csvHeader(columns) + csvRecords(columns, page.items);
  while (page.next !== null) {
    page = await pages(page.next);
    yield csvRecords(columns, page.items);
  }
}

/**
 * An export as the answer of a GET: `text/csv`, an attachment named `<name>-YYYYMMDD.csv`. The first page is read
 * before answering, so what fails there (a filter the database refuses, an unknown subscriber) is still a JSON error;
 * the next pages are read one at a time as the client takes the previous one (the stream holds one chunk: pipe's
 * backpressure), so memory stays flat whatever the row count, and a client that goes away stops the reads (the
 * adapter destroys the stream, which ends the generator). A page that fails after the first byte destroys the
 * connection (StreamableFile's handler): the client sees an incomplete transfer, never a short file that looks whole.
 */
export async function csvAnswer<T>(
  name: string,
  day: string,
  columns: readonly CsvColumn<T>[],
  pages: ExportPages<T>,
): Promise<StreamableFile> {
  const first = await pages(undefined);
  const stream = Readable.from(chunks(columns, pages, first), { objectMode: true, highWaterMark: 1 });
  return new StreamableFile(stream, {
    type: 'text/csv; charset=utf-8',
    disposition: `attachment; filename="${name}-${day.replace(/-/g, '')}.csv"`,
  });
}
