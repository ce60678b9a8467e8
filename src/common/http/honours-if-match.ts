import { applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

/**
 * Marks a write whose service compares If-Match under the row lock (assertIfMatch, etag.ts): the document declares
 * the If-Match parameter and 412 `precondition_failed` on it, and on no other write (response-conventions.ts), so a
 * client is never told a precondition is checked where it is ignored. EtagInterceptor warns when a write that was
 * sent If-Match never evaluated it.
 */
export function HonoursIfMatch(): MethodDecorator {
  return applyDecorators(ApiExtension('x-if-match', true));
}
