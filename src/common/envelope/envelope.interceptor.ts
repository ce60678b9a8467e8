import { CallHandler, ExecutionContext, Injectable, NestInterceptor, StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { Observable, map } from 'rxjs';
import { RenderedPage, renderedEnvelope, successEnvelope } from './envelope';

/** Wraps every handler's return value in the success envelope, `{success: true, data, meta}` (envelope.ts). */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((payload) => {
        if (payload instanceof StreamableFile) {
          return payload; // a document (application/pdf), not JSON: sent as it is
        }
        if (payload instanceof RenderedPage) {
          // Already JSON text: sent as it is (Express sends a string with the type it finds set).
          context.switchToHttp().getResponse<Response>().type('json');
          return renderedEnvelope(payload);
        }
        return successEnvelope(payload);
      }),
    );
  }
}
