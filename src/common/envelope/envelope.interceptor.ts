import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { Observable, map } from 'rxjs';
import { RenderedPage, renderedEnvelope, successEnvelope } from './envelope';

/** Wraps every handler's return value in the SPEC 2.5 success envelope. */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((payload) => {
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
