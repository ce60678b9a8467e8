import { StreamableFile } from '@nestjs/common';
import { Readable } from 'node:stream';
import { csvHeader, csvRecords, type CsvColumn } from '../common/csv/csv-write';

/** Rows per query of an export: the list's keyset page, made larger (one round trip per 1,000 rows). */
export const EXPORT_PAGE_SIZE = 1000;

/**
 * One page of an export's rows, and the cursor of the next (null: it was the last): its rows as items, written here,
 * or as CSV text the database already wrote (`chunks`, each a few records, the same bytes csv-write gives).
 */
export type ExportPage<T> = { next: string | null } & (
  { items: readonly T[] } | { chunks: readonly string[] }
);

/** Reads the page after `cursor` (undefined: the first), in the list's order, with the export's filters. */
export type ExportPages<T> = (cursor: string | undefined) => Promise<ExportPage<T>>;

/** The CSV text of a page: its database chunks as they are, or its items' records as one chunk. */
function pageTexts<T>(columns: readonly CsvColumn<T>[], page: ExportPage<T>): readonly string[] {
  return 'chunks' in page ? page.chunks : [csvRecords(columns, page.items)];
}

/**
 * The chunks of the CSV: the header, then each page's, read only as the client takes them. A page is let go before
 * the next is read (`held` emptied, `page` cleared across the await): a page kept while the next query runs and the
 * socket drains would outlive the young generation's collections and be promoted (docs/performance.md).
 */
async function* chunks<T>(
  columns: readonly CsvColumn<T>[],
  pages: ExportPages<T>,
  held: { first: ExportPage<T> | null },
): AsyncGenerator<string> {
  let page: ExportPage<T> | null = held.first;
  held.first = null;
  yield csvHeader(columns);
  while (page !== null) {
    const next = page.next;
    for (const text of pageTexts(columns, page)) {
      yield text;
    }
    page = null;
    if (next !== null) {
      page = await pages(next);
    }
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
  const held = { first: await pages(undefined) };
  const stream = Readable.from(chunks(columns, pages, held), { objectMode: true, highWaterMark: 1 });
  return new StreamableFile(stream, {
    type: 'text/csv; charset=utf-8',
    disposition: `attachment; filename="${name}-${day.replace(/-/g, '')}.csv"`,
  });
}
