import { HttpException } from '@nestjs/common';
import { ErrorCode, statusOf } from './error-catalog';

/** The one exception type domain code throws: a catalog code, a message, and the offending field if any. */
export class ApiError extends HttpException {
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
