import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { json } from 'express';
import type { Logger } from 'pino';
import { errorEnvelope } from '../envelope/envelope';
import { ApiError } from '../errors/api-error';
import { newId } from '../ids';
import { requestContext } from '../request-context';

export const MAX_BODY_BYTES = 1024 * 1024;
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Writes an ApiError as the failure envelope; the exception filter and these middlewares share it. */
export function sendApiError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.getStatus()).json(errorEnvelope(error.code, error.message, error.field));
}

/** Keeps a sane incoming X-Request-ID (else makes one), echoes it, and opens the request's context. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : newId('req');
  res.setHeader('X-Request-ID', requestId);
  requestContext.run({ requestId }, next);
}

/** One JSON log line per request, with its id and outcome; never headers or bodies. */
export function requestLogMiddleware(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const auth = requestContext.get()?.auth;
      logger.info({
        msg: 'request',
        method: req.method,
        path: req.path,
        status: res.statusCode,
        duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
        ip: req.ip,
        tenant_id: auth?.tenantId,
        token_id: auth?.tokenId,
      });
    });
    next();
  };
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** A body must be JSON (415 otherwise), at most 1 MiB (413), and parse (400 invalid_json). */
export function jsonBodyMiddleware(): RequestHandler {
  const parse = json({ limit: MAX_BODY_BYTES, type: () => true, strict: true });
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    const contentType = req.headers['content-type'] ?? '';
    if (!JSON_TYPE.test(contentType)) {
      return sendApiError(
        res,
        new ApiError(
          'unsupported_media_type',
          `Content-Type must be application/json, got "${contentType || 'none'}".`,
        ),
      );
    }
    parse(req, res, (error?: { type?: string }) => {
      if (!error) return next();
      if (error.type === 'entity.too.large') {
        return sendApiError(res, new ApiError('payload_too_large', 'The request body exceeds 1 MiB.'));
      }
      if (error.type === 'charset.unsupported' || error.type === 'encoding.unsupported') {
        return sendApiError(res, new ApiError('unsupported_media_type', 'The body must be UTF-8 JSON.'));
      }
      if (error.type === 'entity.parse.failed') {
        return sendApiError(res, new ApiError('invalid_json', 'The request body is not valid JSON.'));
      }
      return sendApiError(res, new ApiError('invalid_json', 'The request body could not be read.'));
    });
  };
}
