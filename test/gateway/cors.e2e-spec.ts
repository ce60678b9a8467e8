import request from 'supertest';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer, randomClientIp } from '../support/factories';
import { type TestApp, appSuite } from '../support/test-app';

const PORTAL = 'https://portal.example.com';
const ADMIN_UI = 'http://localhost:5173';
const STRANGER = 'https://evil.example.net';
const EXPOSED = [
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
];

function corsHeadersOf(headers: Record<string, string>): string[] {
  return Object.keys(headers).filter((name) => name.startsWith('access-control-'));
}

function preflight(t: TestApp, path: string, origin: string, ip = randomClientIp()) {
  return request(t.http)
    .options(path)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', 'POST')
    .set('Access-Control-Request-Headers', 'authorization, content-type, x-idempotency-key')
    .set('X-Forwarded-For', ip);
}

/** CORS (issue 27 item 21): the origins CORS_ORIGINS lists may call the API from a browser, and no other. */
describe('CORS', () => {
  let t: TestApp;

  // A budget of 3 per window, and each test its own client address: a preflight counted would show at once.
  appSuite((app) => (t = app), {
    CORS_ORIGINS: `${PORTAL}, ${ADMIN_UI}`,
    RATE_LIMIT_MAX: '3',
    TRUST_PROXY: '1',
  });

  describe('a preflight (OPTIONS with Access-Control-Request-Method)', () => {
    it('should answer 204 with what a listed origin may send, without a token', async () => {
      for (const origin of [PORTAL, ADMIN_UI]) {
        const res = await preflight(t, '/api/v1/subscribers', origin);
        expect(res.status).toBe(204);
        expect(res.text).toBe('');
        expect(res.headers['access-control-allow-origin']).toBe(origin);
        expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
        expect(res.headers['access-control-allow-headers']?.split(', ')).toEqual(
          expect.arrayContaining([
            'Authorization',
            'Content-Type',
            'X-Idempotency-Key',
            'X-Tenant-ID',
            'If-Match',
          ]),
        );
        expect(res.headers['access-control-max-age']).toBe('7200');
        expect(res.headers.vary).toMatch(/\bOrigin\b/);
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      }
    });

    it('should give an origin that is not listed no CORS header', async () => {
      for (const origin of [STRANGER, `${PORTAL}:8443`, 'http://portal.example.com', 'null']) {
        const res = await preflight(t, '/api/v1/subscribers', origin);
        expect(res.status).toBe(204);
        expect(corsHeadersOf(res.headers)).toEqual([]);
      }
    });

    it('should not count against the rate limit', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < 10; i++) {
        const res = await preflight(t, '/api/v1/me', PORTAL, ip);
        expect(res.status).toBe(204);
        expect(res.headers['ratelimit']).toBeUndefined();
      }
      const after = await request(t.http).get('/api/v1').set('X-Forwarded-For', ip);
      expectSuccess(after);
      expect(after.headers['x-ratelimit-remaining']).toBe('2');
    });
  });

  describe('an actual request', () => {
    it('should let a listed origin read the answer and the headers it needs, failures included', async () => {
      const ok = await request(t.http)
        .get('/api/v1')
        .set('Origin', PORTAL)
        .set('X-Forwarded-For', randomClientIp());
      expectSuccess(ok);
      expect(ok.headers['access-control-allow-origin']).toBe(PORTAL);
      expect(ok.headers.vary).toMatch(/\bOrigin\b/);
      expect(ok.headers['access-control-expose-headers']?.split(', ')).toEqual(
        expect.arrayContaining(EXPOSED),
      );

      const refused = await request(t.http)
        .get('/api/v1/me')
        .set('Origin', ADMIN_UI)
        .set(bearer('isk_unknown'))
        .set('X-Forwarded-For', randomClientIp());
      expectError(refused, 401, 'invalid_token');
      expect(refused.headers['access-control-allow-origin']).toBe(ADMIN_UI);
      expect(refused.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
    });

    it('should give an origin that is not listed, or a request without Origin, no CORS header', async () => {
      for (const origin of [STRANGER, undefined]) {
        const call = request(t.http).get('/api/v1').set('X-Forwarded-For', randomClientIp());
        const res = await (origin ? call.set('Origin', origin) : call);
        expectSuccess(res);
        expect(corsHeadersOf(res.headers)).toEqual([]);
        expect(res.headers.vary).toMatch(/\bOrigin\b/); // a shared cache must not hand this answer to a listed origin
      }
    });
  });

  describe('without CORS_ORIGINS', () => {
    let closed: TestApp;

    appSuite((app) => (closed = app));

    it('should give no origin a CORS header', async () => {
      const res = await preflight(closed, '/api/v1/subscribers', PORTAL);
      expect(res.status).toBe(204);
      expect(corsHeadersOf(res.headers)).toEqual([]);
      const actual = await request(closed.http).get('/api/v1').set('Origin', PORTAL);
      expectSuccess(actual);
      expect(corsHeadersOf(actual.headers)).toEqual([]);
      expect(actual.headers.vary).toBeUndefined();
    });
  });
});
