import { StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { parseEntityTags } from '../../common/http/etag';
import type { RenderedDocument } from './billing-documents';

/**
 * A rendered PDF as the answer of a GET (the handler passes its If-None-Match header, never the whole request, so
 * the undeclared-input guard still checks its query and body): `application/pdf`, inline with its file name, its strong ETag, and 304 with no
 * body when If-None-Match names that tag (RFC 9110: weak comparison for GET). The envelope and ETag interceptors pass
 * a StreamableFile through untouched.
 */
export function pdfAnswer(
  ifNoneMatch: string | undefined,
  res: Response,
  document: RenderedDocument,
): StreamableFile {
  res.setHeader('ETag', document.etag);
  res.setHeader('Cache-Control', 'private, no-cache');
  if (typeof ifNoneMatch === 'string') {
    const tags = parseEntityTags(ifNoneMatch);
    const bare = (tag: string) => tag.replace(/^W\//, '');
    if (tags === '*' || tags.some((tag) => bare(tag) === bare(document.etag))) {
      res.status(304);
      return new StreamableFile(Buffer.alloc(0));
    }
  }
  return new StreamableFile(document.pdf, {
    type: 'application/pdf',
    disposition: `inline; filename="${document.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
    length: document.pdf.length,
  });
}
