import type { Request } from 'express';

/** The bearer token of the request, or null when none was sent. */
export function bearerToken(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header) {
    return null;
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** The caller's address (behind a proxy only when TRUST_PROXY is set, through Express' trust proxy). */
export function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}
