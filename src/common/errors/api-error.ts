import { HttpException } from '@nestjs/common';
import { ErrorCode, statusOf } from './error-catalog';

/** One failure of a request that failed several checks (error.details[]): the same three things as error. */
export interface ErrorDetail {
  code: ErrorCode;
  message: string;
  field: string | null;
}

/** The one exception type domain code throws: a catalog code, a message, and the offending field if any. */
export class ApiError extends HttpException {
  /** Every failure of the request, this one first (the validation pipe sets it; sendApiError fills it in). */
  details?: ErrorDetail[];

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message, statusOf(code));
  }

  static notFound(resource: string, id: string): ApiError {
    return new ApiError('not_found', `No ${resource} with id ${id} exists.`);
  }
}
