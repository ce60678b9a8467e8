import {
  CallHandler,
  ExecutionContext,
  Injectable,
  Logger,
  NestInterceptor,
  StreamableFile,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { Observable, tap } from 'rxjs';
import { Page, PrebuiltEnvelope, RenderedPage } from '../envelope/envelope';
import { requestContext } from '../request-context';
import { etagOf, parseEntityTags } from './etag';

const READS = new Set(['GET', 'HEAD']);

/** The record a response carries as `data`, or null for a list, an empty answer or anything that is not one object. */
function recordOf(payload: unknown): object | null {
  if (payload instanceof StreamableFile) {
    return null; // a document carries its own ETag (a hash of its bytes)
  }
  const data = payload instanceof PrebuiltEnvelope ? (payload.body as { data?: unknown }).data : payload;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return null;
  }
  if ('secret' in data) {
    return null; // a representation showing a secret (rotate-secret) is never tagged: a tag is a hash of it
  }
  return data instanceof Page || data instanceof RenderedPage ? null : data;
}

/**
 * Optimistic concurrency, one mechanism for every endpoint (README "Optimistic concurrency"): a read of one record and
 * a write answering the record it targets carry its ETag; Express answers a GET whose If-None-Match names it with 304
 * (its `fresh` check, RFC 9110's weak comparison and `*`). A write's If-Match goes into the request context, where the
 * service compares it under the row lock (assertIfMatch), so check and write are atomic.
 */
@Injectable()
export class EtagInterceptor implements NestInterceptor {
  private readonly logger = new Logger(EtagInterceptor.name);

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const read = READS.has(req.method);
    const ifMatch = req.headers['if-match'];
    const store = requestContext.get();
    if (!read && typeof ifMatch === 'string' && store) {
      store.ifMatch = { tags: parseEntityTags(ifMatch), evaluated: false };
    }
    return next.handle().pipe(
      tap((payload) => {
        if (store?.ifMatch && !store.ifMatch.evaluated) {
          // A write that never compared the tag is a wiring gap (its service lacks assertIfMatch): say so loudly.
          this.logger.warn(`If-Match was not evaluated by ${req.method} ${req.route?.path ?? req.path}`);
        }
        const record = recordOf(payload);
        if (
          record &&
          (read ||
            req.method === 'PATCH' ||
            req.method === 'PUT' ||
            (req.method === 'POST' && this.isTarget(req, record)))
        ) {
          res.setHeader('ETag', etagOf(record));
        } else if (read) {
          // Express would answer `If-None-Match: *` with 304 even untagged: a list is never conditional.
          delete req.headers['if-none-match'];
        }
      }),
    );
  }

  /** A state change (POST .../status) answers its target when the record's id is the path's; DELETE has none left. */
  private isTarget(req: Request, record: object): boolean {
    const id = (record as { id?: unknown }).id;
    return typeof id === 'string' && Object.values(req.params ?? {}).includes(id);
  }
}
