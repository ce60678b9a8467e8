import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { errorEnvelope } from '../envelope/envelope';
import { ApiError } from '../errors/api-error';
import { newId } from '../ids';
import { requestContext } from '../request-context';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Writes an ApiError as the failure envelope (the exception filter's one way of answering a failure). */
export function sendApiError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) {
    res.setHeader(name, value);
  }
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
