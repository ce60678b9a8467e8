import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { json } from 'express';
import { ApiError } from '../errors/api-error';
import { inexactNumber, type InexactNumber } from './json-numbers';
import { isStreamedBody } from './streamed-body';

export const MAX_BODY_BYTES = 1024 * 1024;
/** Deeper than any body the API accepts (a few levels), shallow enough for every recursive walk of the body. */
export const MAX_JSON_DEPTH = 64;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

class TooDeep extends Error {}

/** A number the body holds that parsing would change, found on the raw text before parsing (JSON.parse loses it). */
const INEXACT = Symbol('inexactNumber');
type ScannedRequest = Request & { [INEXACT]?: InexactNumber | null };

/**
 * Whether the JSON text nests arrays/objects deeper than `max`: one pass over the bytes, brackets inside strings
 * skipped, no recursion. Exact for UTF-8, where a byte below 0x80 is always that ASCII character.
 */
export function jsonDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === 0x5c) {
        i++;
      } // a backslash escapes the next character
      else if (byte === 0x22) {
        inString = false;
      }
    } else if (byte === 0x22) {
      inString = true;
    } else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > max) {
        return true;
      }
    } else if (byte === 0x5d || byte === 0x7d) {
      depth--;
    }
  }
  return false;
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

const parse = json({
  limit: MAX_BODY_BYTES,
  type: () => true,
  strict: true,
  verify: (req, _res, bytes) => {
    if (jsonDeeperThan(bytes, MAX_JSON_DEPTH)) {
      throw new TooDeep();
    }
    // Kept, not thrown: a body that is not JSON at all is invalid_json (400) before any of its numbers is a 422.
    (req as ScannedRequest)[INEXACT] = inexactNumber(bytes.toString('utf8'));
  },
});

/** A body must be UTF-8 JSON (415 otherwise), at most 1 MiB (413), nest at most 64 deep and parse (400). */
function readJsonBody(req: Request, res: Response): Promise<void> {
  const contentType = req.headers['content-type'] ?? '';
  if (!JSON_TYPE.test(contentType)) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type must be application/json, got "${contentType || 'none'}".`,
    );
  }
  const charset = CHARSET.exec(contentType)?.[1].toLowerCase();
  if (charset !== undefined && charset !== 'utf-8') {
    throw new ApiError('unsupported_media_type', 'The body must be UTF-8 JSON.');
  }
  return new Promise((resolve, reject) => {
    parse(req, res, (error?: { type?: string }) => {
      const inexact = (req as ScannedRequest)[INEXACT];
      if (!error && inexact) {
        return reject(new ApiError('validation_failed', inexact.message, inexact.path || null));
      }
      if (!error) {
        return resolve();
      }
      if (error instanceof TooDeep) {
        return reject(
          new ApiError('invalid_json', `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`),
        );
      }
      if (error.type === 'entity.too.large') {
        return reject(new ApiError('payload_too_large', 'The request body exceeds 1 MiB.'));
      }
      if (error.type === 'charset.unsupported' || error.type === 'encoding.unsupported') {
        return reject(new ApiError('unsupported_media_type', 'The body must be UTF-8 JSON.'));
      }
      if (error.type === 'entity.parse.failed') {
        return reject(new ApiError('invalid_json', 'The request body is not valid JSON.'));
      }
      reject(new ApiError('invalid_json', 'The request body could not be read.'));
    });
  });
}

/**
 * The last global guard: the body is read only once the caller is past the abuse block, the rate limit and
 * authentication, so an unauthenticated or throttled request costs no parsing. Pipes and interceptors run after
 * guards, so @Body() and the idempotency fingerprint see the parsed body.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    if (!hasBody(req) || isStreamedBody(context.getHandler())) {
      return true;
    }
    return readJsonBody(req, http.getResponse<Response>()).then(() => true);
  }
}
