import { applyDecorators } from '@nestjs/common';
import { ApiProduces, ApiResponse } from '@nestjs/swagger';

/** A GET answering a CSV export (csvAnswer): 200 text/csv, an attachment, streamed. */
export function ApiCsv(columns: readonly string[]): MethodDecorator {
  return applyDecorators(
    ApiProduces('text/csv'),
    ApiResponse({
      status: 200,
      description: `The CSV (RFC 4180, UTF-8, CRLF), a header record then one record per row: ${columns.join(', ')}. Streamed: a transfer that ends early (the connection closed before the last chunk) is incomplete, never a whole file.`,
      headers: {
        'Content-Disposition': {
          description: 'attachment; filename="<export>-YYYYMMDD.csv" (the day in UTC).',
          schema: { type: 'string', maxLength: 64 },
        },
      },
      // maxLength: a bound for clients that size buffers (a million subscribers is a few hundred MiB), not a limit enforced.
      content: { 'text/csv': { schema: { type: 'string', maxLength: 4294967296 } } },
    }),
  );
}
