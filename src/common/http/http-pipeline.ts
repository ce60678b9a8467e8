import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { errorEnvelope } from '../envelope/envelope';
import { ApiError, type ErrorDetail } from '../errors/api-error';
import { newId } from '../ids';
import { requestContext } from '../request-context';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Writes an ApiError as the failure envelope (the exception filter's one way of answering a failure). */
export function sendApiError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) {
    res.setHeader(name, value);
  }
  res.status(error.getStatus()).json(errorEnvelope(error.code, error.message, error.field, detailsOf(error)));
}

/** Codes that refuse a value of the request: their answer always lists the failures in error.details. */
const VALIDATION_CODES = new Set<string>([
  'missing_field',
  'unknown_field',
  'validation_failed',
  'invalid_query',
]);

/** Every failure of a validation answer (at least its own), or undefined for any other answer. */
function detailsOf(error: ApiError): ErrorDetail[] | undefined {
  if (!VALIDATION_CODES.has(error.code)) {
    return undefined;
  }
  return error.details ?? [{ code: error.code, message: error.message, field: error.field }];
}

/**
 * Keeps a sane incoming X-Request-ID (else makes one, dated by the app's `clock`), echoes it, and opens the request's
 * context.
 */
export function requestIdMiddleware(clock: Clock): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.headers['x-request-id'];
    const requestId =
      typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : newId('req', clock.now());
    res.setHeader('X-Request-ID', requestId);
    requestContext.run({ requestId }, next);
  };
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
        // An upload answered before its end may have lost its socket by now (the client hung up): no address then.
        ip: req.socket ? req.ip : undefined,
        tenant_id: auth?.tenantId,
        token_id: auth?.tokenId,
      });
    });
    next();
  };
}
