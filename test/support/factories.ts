import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';

export function bearer(token: string): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}

/**
 * A client address no other test (nor an earlier run sharing the same Redis) has used: a random IPv6 address in the
 * documentation range, for apps started with TRUST_PROXY and reached through X-Forwarded-For.
 */
export function randomClientIp(): string {
  const groups = Array.from({ length: 6 }, () =>
    randomBytes(2)
      .toString('hex')
      .replace(/^0+(?=.)/, ''),
  );
  return `2001:db8:${groups.join(':')}`;
}

/** A token secret nobody issued. */
export function unknownTokenSecret(): string {
  return `isk_${randomBytes(32).toString('base64url')}`;
}

/**
 * `method path` with `token` and `text` as its body, sent as it is with Content-Type application/json: for bodies
 * that do not parse or that supertest would change (it re-serialises an object, and 1e309 is no JS number).
 */
export function sendJsonText(
  to: Server | string,
  method: 'get' | 'post' | 'patch' | 'put',
  path: string,
  token: string,
  text: string,
) {
  return request(to)[method](path).set(bearer(token)).set('Content-Type', 'application/json').send(text);
}
