import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Every method a route of the API answers (HEAD with each GET). */
export const CORS_ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';

/** The request headers the API reads; a browser sends no other one cross-origin without asking. */
export const CORS_ALLOW_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Request-ID',
  'X-Tenant-ID',
  'Idempotency-Key',
  'X-Idempotency-Key',
  'If-Match',
  'If-None-Match',
].join(', ');

/** The response headers a browser script may read besides the CORS-safelisted ones (Content-Type, Cache-Control…). */
export const CORS_EXPOSE_HEADERS = [
  'X-Request-ID',
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Idempotent-Replayed',
  'Original-Request-ID',
  'WWW-Authenticate',
  'ETag',
  'Location',
  'Allow',
].join(', ');

/** Two hours: Chromium's ceiling for caching a preflight (Firefox allows a day). */
export const CORS_MAX_AGE_S = 7200;

/**
 * CORS for the origins CORS_ORIGINS lists, and for no other. A preflight (OPTIONS with Access-Control-Request-Method)
 * is answered here, 204, before authentication and the rate limiter: it carries no token and does nothing. Any
 * other request goes on, with the headers that let a listed origin's script read the answer.
 */
export function corsMiddleware(origins: readonly string[]): RequestHandler {
  const allowed = new Set(origins);
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    const listed = origin !== undefined && allowed.has(origin);
    if (allowed.size > 0) {
      res.setHeader('Vary', 'Origin'); // the answer depends on Origin: a shared cache must not give one to another
    }
    if (listed) {
      res.setHeader('Access-Control-Allow-Origin', origin);
    }
    if (req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method']) {
      if (listed) {
        res.setHeader('Access-Control-Allow-Methods', CORS_ALLOW_METHODS);
        res.setHeader('Access-Control-Allow-Headers', CORS_ALLOW_HEADERS);
        res.setHeader('Access-Control-Max-Age', String(CORS_MAX_AGE_S));
      }
      res.status(204).end();
      return;
    }
    if (listed) {
      res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
    }
    next();
  };
}
