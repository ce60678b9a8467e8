import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  Inject,
  Logger,
  NotFoundException,
  Optional,
} from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { allowedMethods } from '../http/allowed-methods';
import { sendApiError } from '../http/http-pipeline';
import { UNROUTED_LIMITER, type UnroutedLimiter } from '../http/unrouted-limiter';
import { requestContext } from '../request-context';
import { ApiError } from './api-error';
import { ErrorCode, statusOf } from './error-catalog';
import {
  databaseUnavailableError,
  isDatabaseUnavailable,
  isTransactionConflict,
  transactionConflictError,
} from './postgres-errors';

/** Maps every failure, ours or the framework's, to a catalog code in the failure envelope. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  constructor(@Optional() @Inject(UNROUTED_LIMITER) private readonly limiter?: UnroutedLimiter) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    // No guard ran for a path no route serves: the limiter gives its verdict (and headers) here.
    if (this.limiter && this.isUnrouted(exception, response)) {
      this.limiter.limitUnrouted(host.switchToHttp().getRequest<Request>(), response).then(
        () => this.answer(exception, response),
        (refusal: unknown) => this.answer(refusal, response),
      );
      return;
    }
    this.answer(exception, response);
  }

  private isUnrouted(exception: unknown, response: Response): boolean {
    return (
      exception instanceof NotFoundException &&
      !(exception instanceof ApiError) &&
      !response.hasHeader('RateLimit-Policy')
    );
  }

  private answer(exception: unknown, response: Response): void {
    const error = this.toApiError(exception, response.req);
    if (error.code === 'internal_error') {
      this.logger.error({
        msg: 'unhandled error',
        request_id: requestContext.requestId(),
        err: exception instanceof Error ? { message: exception.message, stack: exception.stack } : exception,
      });
    }
    if (error.code === 'service_unavailable' && !(exception instanceof ApiError)) {
      this.logger.warn({
        msg: 'database unavailable',
        request_id: requestContext.requestId(),
        err: exception instanceof Error ? exception.message : String(exception),
      });
    }
    if (!response.headersSent) {
      sendApiError(response, error);
    }
  }

  private toApiError(exception: unknown, request: Request): ApiError {
    if (exception instanceof ApiError) {
      return exception;
    }
    if (exception instanceof ThrottlerException) {
      return new ApiError('rate_limited', 'Rate limit exceeded.');
    }
    // Nest's router throws a bare NotFoundException for paths no controller serves.
    if (exception instanceof NotFoundException) {
      const allow = allowedMethods(request);
      return allow.length > 0
        ? new ApiError(
            'method_not_allowed',
            `This path takes ${allow.join(', ')}, not ${request.method}.`,
            null,
            {
              Allow: allow.join(', '),
            },
          )
        : new ApiError('route_not_found', 'No endpoint matches.');
    }
    if (exception instanceof HttpException) {
      return this.fromHttpStatus(exception.getStatus(), exception.message);
    }
    // A pool exhausted past DATABASE_ACQUIRE_TIMEOUT_MS, a statement past statement_timeout, a server away: a known
    // fault of the moment, answered 503 with Retry-After, never a 500.
    if (isDatabaseUnavailable(exception)) {
      return databaseUnavailableError();
    }
    // A deadlock or serialization failure outside TransactionRunner (which retries them): a race, retried by the client.
    if (isTransactionConflict(exception)) {
      return transactionConflictError();
    }
    // Text Postgres cannot store (a NUL that slipped past validation, a bad escape): the input's fault, not ours.
    const code = (exception as { driverError?: { code?: string } })?.driverError?.code;
    if (code === '22021' || code === '22P05') {
      return new ApiError('validation_failed', 'A value holds a character that cannot be stored.');
    }
    return new ApiError(
      'internal_error',
      'An unexpected error occurred. Quote the request id when reporting it.',
    );
  }

  private fromHttpStatus(status: number, message: string): ApiError {
    const byStatus: Partial<Record<number, ErrorCode>> = {
      400: 'invalid_query', // JsonBodyGuard answers bad bodies with ApiErrors; a framework 400 here is about the URL
      401: 'authentication_required',
      403: 'insufficient_scope',
      404: 'route_not_found',
      413: 'payload_too_large',
      415: 'unsupported_media_type',
      429: 'rate_limited',
      503: 'service_unavailable',
    };
    const code = byStatus[status];
    if (code && statusOf(code) === status) {
      return new ApiError(code, message);
    }
    return new ApiError(
      'internal_error',
      'An unexpected error occurred. Quote the request id when reporting it.',
    );
  }
}
