import { applyDecorators } from '@nestjs/common';
import { ApiProduces, ApiResponse } from '@nestjs/swagger';

/** A GET answering a PDF document (pdfAnswer): 200 application/pdf with its ETag, or 304 on If-None-Match. */
export function ApiPdf(): MethodDecorator {
  return applyDecorators(
    ApiProduces('application/pdf'),
    ApiResponse({
      status: 200,
      description: 'The PDF (application/pdf), with ETag.',
      // maxLength: a bound for clients that size buffers (a year's statement is a few hundred KiB), not a limit enforced.
      content: { 'application/pdf': { schema: { type: 'string', format: 'binary', maxLength: 104857600 } } },
    }),
    ApiResponse({ status: 304, description: 'Not modified: If-None-Match names the current ETag.' }),
  );
}
