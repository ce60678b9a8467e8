import request from 'supertest';
import type { Response } from 'supertest';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer, randomClientIp, unknownTokenSecret } from '../support/factories';
import { SUBSCRIBER_SCOPES, subscriberBody } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TestApp } from '../support/test-app';

/** A JSON body of more than 2 MiB. */
const HUGE_BODY = JSON.stringify(subscriberBody({ full_name: 'x'.repeat(2 * 1024 * 1024) }));

function expectRateLimitHeaders(res: Response, limit: number): void {
  expect(res.headers['ratelimit-policy']).toBe(`"default";q=${limit};w=60`);
  expect(res.headers['ratelimit']).toMatch(/^"default";r=\d+;t=\d+$/);
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
}

/**
 * The gateway's order: request id, then the abuse block, the rate limit and authentication, and only then the body.
 * Every client here has its own address (X-Forwarded-For through TRUST_PROXY=1) and its own token, so budgets and
 * blocks never leak between tests, nor into other suites sharing Redis.
 */
describe('Gateway order: authenticate and count before reading the body', () => {
  let t: TestApp;
  // Tokens are issued through an app with a roomy budget: the admin token's budget may be shared through Redis.
  let setup: TestApp;
  const LIMIT = 5;

  beforeAll(async () => {
    setup = await startTestApp();
    t = await startTestApp({
      TRUST_PROXY: '1',
      RATE_LIMIT_MAX: String(LIMIT),
      RATE_LIMIT_WINDOW_S: '60',
      ABUSE_AUTH_FAILURES_MAX: '3',
    });
  });
  afterAll(async () => {
    await t.close();
    await setup.close();
  });

  async function freshToken(): Promise<string> {
    return (await createTenantWithToken(setup, SUBSCRIBER_SCOPES)).token;
  }

  describe('without a valid token, whatever the body', () => {
    it('should answer 401 to malformed JSON without a token', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set('X-Forwarded-For', randomClientIp())
        .set('Content-Type', 'application/json')
        .send('{"full_name": "half a body",');
      expectError(res, 401, 'authentication_required');
      expectRateLimitHeaders(res, LIMIT);
    });

    it('should answer 401 to a body of the wrong content type without a token', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set('X-Forwarded-For', randomClientIp())
        .set('Content-Type', 'text/plain')
        .send('full_name=plain');
      expectError(res, 401, 'authentication_required');
    });

    it('should answer 401 to a body over the size limit without a token', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set('X-Forwarded-For', randomClientIp())
        .set('Content-Type', 'application/json')
        .send(HUGE_BODY);
      expectError(res, 401, 'authentication_required');
    });

    it('should answer 401 invalid_token to a 2 MiB body with a bad token, and count it toward the abuse block', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < 3; i++) {
        const res = await request(t.http)
          .post('/api/v1/subscribers')
          .set(bearer(unknownTokenSecret()))
          .set('X-Forwarded-For', ip)
          .set('Content-Type', 'application/json')
          .send(HUGE_BODY);
        expectError(res, 401, 'invalid_token');
      }
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(await freshToken()))
        .set('X-Forwarded-For', ip)
        .send(subscriberBody());
      expectError(res, 429, 'abuse_blocked');
    });
  });

  describe('with a valid token, the body is judged and the answer carries the rate-limit headers', () => {
    it('should answer 400 invalid_json to malformed JSON', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(await freshToken()))
        .set('X-Forwarded-For', randomClientIp())
        .set('Content-Type', 'application/json')
        .send('{"full_name": "half a body",');
      expectError(res, 400, 'invalid_json');
      expectRateLimitHeaders(res, LIMIT);
      expect(res.headers['ratelimit']).toMatch(/^"default";r=4;/);
    });

    it('should answer 413 payload_too_large to a body over 1 MiB', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(await freshToken()))
        .set('X-Forwarded-For', randomClientIp())
        .set('Content-Type', 'application/json')
        .send(HUGE_BODY);
      expectError(res, 413, 'payload_too_large');
      expectRateLimitHeaders(res, LIMIT);
    });

    it('should answer 415 unsupported_media_type to a body that is not JSON', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(await freshToken()))
        .set('X-Forwarded-For', randomClientIp())
        .set('Content-Type', 'text/plain')
        .send('full_name=plain');
      expectError(res, 415, 'unsupported_media_type');
      expectRateLimitHeaders(res, LIMIT);
    });

    it('should still create from a good body', async () => {
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(await freshToken()))
        .set('X-Forwarded-For', randomClientIp())
        .send(subscriberBody({ full_name: 'Grace Hopper' }));
      expectSuccess(res, 201);
      expect(res.body.data.full_name).toBe('Grace Hopper');
      expectRateLimitHeaders(res, LIMIT);
    });

    it('should refuse a rate-limited client with 429 before parsing its body', async () => {
      const token = await freshToken();
      const ip = randomClientIp();
      for (let i = 0; i < LIMIT; i++) {
        await request(t.http).get('/api/v1/me').set(bearer(token)).set('X-Forwarded-For', ip).expect(200);
      }
      const res = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(token))
        .set('X-Forwarded-For', ip)
        .set('Content-Type', 'application/json')
        .send('{"this is": not json');
      expectError(res, 429, 'rate_limited');
      expectRateLimitHeaders(res, LIMIT);
    });
  });

  describe('unknown routes', () => {
    it('should answer 404 route_not_found with the rate-limit headers, counted against the address', async () => {
      const ip = randomClientIp();
      const first = await request(t.http).get('/api/v1/no-such-thing').set('X-Forwarded-For', ip);
      const second = await request(t.http).get('/favicon.ico').set('X-Forwarded-For', ip);
      expectError(first, 404, 'route_not_found');
      expectError(second, 404, 'route_not_found');
      expectRateLimitHeaders(first, LIMIT);
      expect(first.headers['ratelimit']).toMatch(/^"default";r=4;/);
      expect(second.headers['ratelimit']).toMatch(/^"default";r=3;/);
    });

    it('should count a 404 with a valid token against that token', async () => {
      const token = await freshToken();
      const ip = randomClientIp();
      const res = await request(t.http)
        .get('/api/v1/no-such-thing')
        .set(bearer(token))
        .set('X-Forwarded-For', ip);
      expectError(res, 404, 'route_not_found');
      expect(res.headers['ratelimit']).toMatch(/^"default";r=4;/);
      const me = await request(t.http)
        .get('/api/v1/me')
        .set(bearer(token))
        .set('X-Forwarded-For', randomClientIp());
      expect(me.headers['ratelimit']).toMatch(/^"default";r=3;/);
    });

    it('should answer 429 rate_limited on an unknown route once the budget is spent', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < LIMIT; i++) {
        await request(t.http).get('/api/v1/no-such-thing').set('X-Forwarded-For', ip).expect(404);
      }
      const res = await request(t.http).get('/api/v1/no-such-thing').set('X-Forwarded-For', ip);
      expectError(res, 429, 'rate_limited');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });

    it('should count a bad token on an unknown route toward the abuse block', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < 3; i++) {
        const res = await request(t.http)
          .get('/api/v1/no-such-thing')
          .set(bearer(unknownTokenSecret()))
          .set('X-Forwarded-For', ip);
        expectError(res, 404, 'route_not_found');
      }
      expectError(
        await request(t.http).get('/api/v1/no-such-thing').set('X-Forwarded-For', ip),
        429,
        'abuse_blocked',
      );
    });

    it('should answer method_not_allowed to a method the path does not serve, before reading its body', async () => {
      const res = await request(t.http)
        .put('/api/v1/subscribers')
        .set('X-Forwarded-For', randomClientIp())
        .set('Content-Type', 'application/json')
        .send('{nope');
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      expectRateLimitHeaders(res, LIMIT);
    });
  });

  describe('public routes', () => {
    it('should serve GET /api/v1 without a token', async () => {
      const res = await request(t.http).get('/api/v1').set('X-Forwarded-For', randomClientIp());
      expectSuccess(res);
      expectRateLimitHeaders(res, LIMIT);
    });

    it('should serve the health probes without a token or a budget', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < LIMIT + 1; i++) {
        await request(t.http).get('/health/live').set('X-Forwarded-For', ip).expect(200);
      }
      await request(t.http).get('/health/ready').set('X-Forwarded-For', ip).expect(200);
    });

    it('should serve the API docs', async () => {
      const res = await request(t.http).get('/docs/openapi.json').set('X-Forwarded-For', randomClientIp());
      expect(res.status).toBe(200);
      expect(res.body.openapi).toMatch(/^3\./);
    });
  });
});
