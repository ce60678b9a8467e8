import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Request } from 'express';

const STREAMED_BODY = 'isp:streamed-body';

/**
 * For an operation that reads its own body as a stream (an import's upload, up to 50 MB): JsonBodyGuard leaves the
 * body unread, and the handler takes the request through @UploadedRequest().
 */
export const StreamedBody = () => SetMetadata(STREAMED_BODY, true);

/** An OpenAPI media type object: its schema and its examples. */
export type RequestContent = Record<
  string,
  { schema: object; examples: Record<string, { summary: string; value: unknown }> }
>;

/**
 * The request body's media types, each with its own schema and example (a CSV text, a multipart form), which
 * @ApiBody cannot say: response-conventions.ts writes them into the operation's requestBody.
 */
export function ApiRequestContent(content: RequestContent): MethodDecorator {
  return applyDecorators(ApiExtension('x-request-content', content));
}

export function isStreamedBody(handler: object): boolean {
  return Reflect.getMetadata(STREAMED_BODY, handler) === true;
}

/** The request whose body a @StreamedBody() handler reads (a custom parameter: no validation pipe, no body check). */
export const UploadedRequest = createParamDecorator((_data: unknown, context: ExecutionContext): Request =>
  context.switchToHttp().getRequest<Request>(),
);
