import request from 'supertest';
import type { Response } from 'supertest';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer, randomClientIp, unknownTokenSecret } from '../support/factories';
import {
  startTestApp,
  type TestApp,
  createTenant,
  issueToken,
  type CreatedTenant,
  appSuite,
} from '../support/test-app';

/**
 * Counters may live in a Redis shared with other suites and earlier runs, so every budget this suite spends is its
 * own: fresh tokens, and random client addresses sent through X-Forwarded-For.
 */
describe('Rate limits and the abuse threshold', () => {
  let t: TestApp;
  let tenant: CreatedTenant;

  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  function rateLimitOf(res: Response) {
    const match = /^"default";r=(\d+);t=(\d+)$/.exec(String(res.headers['ratelimit']));
    return {
      remaining: match ? Number(match[1]) : null,
      reset: match ? Number(match[2]) : null,
      xRemaining: Number(res.headers['x-ratelimit-remaining']),
      xReset: Number(res.headers['x-ratelimit-reset']),
    };
  }

  describe('budget of 3 requests per 60 s', () => {
    let limited: TestApp;
    appSuite((app) => (limited = app), { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '60', TRUST_PROXY: '1' });

    it('should require authentication', async () => {
      const res = await request(limited.http).get('/api/v1/me').set('X-Forwarded-For', randomClientIp());
      expectError(res, 401, 'authentication_required');
      expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
    });

    it('should report the policy and what is left on every answer', async () => {
      const { token } = await issueToken(t, tenant.id, ['events:read']);
      const ip = randomClientIp();
      const answers: Response[] = [];
      for (let i = 0; i < 3; i++) {
        answers.push(
          await request(limited.http).get('/api/v1/me').set(bearer(token)).set('X-Forwarded-For', ip),
        );
      }
      answers.forEach((res, i) => {
        expectSuccess(res);
        expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
        expect(res.headers['x-ratelimit-limit']).toBe('3');
        const limit = rateLimitOf(res);
        expect(limit.remaining).toBe(2 - i);
        expect(limit.xRemaining).toBe(2 - i);
        expect(limit.reset).toBeGreaterThanOrEqual(1);
        expect(limit.reset).toBeLessThanOrEqual(60);
        // X-RateLimit-Reset is the epoch second the window resets at (GitHub's unit), RateLimit's t the seconds to go.
        const resetAt = Math.ceil(Date.now() / 1000) + limit.reset!;
        expect(limit.xReset).toBeGreaterThanOrEqual(resetAt - 2);
        expect(limit.xReset).toBeLessThanOrEqual(resetAt);
      });
    });

    it('should answer the fourth request in the window with 429 rate_limited and Retry-After', async () => {
      const { token } = await issueToken(t, tenant.id, ['events:read']);
      const ip = randomClientIp();
      for (let i = 0; i < 3; i++) {
        await request(limited.http)
          .get('/api/v1/me')
          .set(bearer(token))
          .set('X-Forwarded-For', ip)
          .expect(200);
      }
      const res = await request(limited.http).get('/api/v1/me').set(bearer(token)).set('X-Forwarded-For', ip);
      expectError(res, 429, 'rate_limited');
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(rateLimitOf(res).remaining).toBe(0);
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
    });

    it('should keep a separate budget for each token', async () => {
      const spent = await issueToken(t, tenant.id, ['events:read']);
      const fresh = await issueToken(t, tenant.id, ['events:read']);
      const ip = randomClientIp();
      for (let i = 0; i < 4; i++) {
        await request(limited.http).get('/api/v1/me').set(bearer(spent.token)).set('X-Forwarded-For', ip);
      }
      expectError(
        await request(limited.http).get('/api/v1/me').set(bearer(spent.token)).set('X-Forwarded-For', ip),
        429,
        'rate_limited',
      );
      const res = await request(limited.http)
        .get('/api/v1/me')
        .set(bearer(fresh.token))
        .set('X-Forwarded-For', ip);
      expectSuccess(res);
      expect(rateLimitOf(res).remaining).toBe(2);
    });

    it('should keep a budget per address for callers without a token', async () => {
      const spentIp = randomClientIp();
      for (let i = 0; i < 3; i++) {
        await request(limited.http).get('/api/v1').set('X-Forwarded-For', spentIp).expect(200);
      }
      const blocked = await request(limited.http).get('/api/v1').set('X-Forwarded-For', spentIp);
      expectError(blocked, 429, 'rate_limited');
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);

      const other = await request(limited.http).get('/api/v1').set('X-Forwarded-For', randomClientIp());
      expectSuccess(other);
      expect(rateLimitOf(other).remaining).toBe(2);
    });

    it('should count unauthenticated calls to closed endpoints against the address', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < 3; i++) {
        expectError(
          await request(limited.http).get('/api/v1/me').set('X-Forwarded-For', ip),
          401,
          'authentication_required',
        );
      }
      expectError(await request(limited.http).get('/api/v1').set('X-Forwarded-For', ip), 429, 'rate_limited');
    });

    it('should not spend the budget of a token on calls without one from the same address', async () => {
      const { token } = await issueToken(t, tenant.id, ['events:read']);
      const ip = randomClientIp();
      for (let i = 0; i < 4; i++) {
        await request(limited.http).get('/api/v1').set('X-Forwarded-For', ip);
      }
      const res = await request(limited.http).get('/api/v1/me').set(bearer(token)).set('X-Forwarded-For', ip);
      expectSuccess(res);
      expect(rateLimitOf(res).remaining).toBe(2);
    });

    it('should leave /health/live outside the limit', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < 4; i++) {
        await request(limited.http).get('/api/v1').set('X-Forwarded-For', ip);
      }
      expectError(await request(limited.http).get('/api/v1').set('X-Forwarded-For', ip), 429, 'rate_limited');
      for (let i = 0; i < 5; i++) {
        const res = await request(limited.http).get('/health/live').set('X-Forwarded-For', ip);
        expectSuccess(res);
      }
    });

    it('should state the configured limit in GET /api/v1', async () => {
      const res = await request(limited.http).get('/api/v1').set('X-Forwarded-For', randomClientIp());
      expectSuccess(res);
      expect(res.body.data.rate_limit).toMatchObject({ requests: 3, window_seconds: 60, per: 'token' });
    });
  });

  describe('abuse threshold of 3 failed authentications per 60 s', () => {
    let guarded: TestApp;
    appSuite((app) => (guarded = app), {
      ABUSE_AUTH_FAILURES_MAX: '3',
      ABUSE_WINDOW_S: '60',
      ABUSE_BLOCK_S: '30',
      TRUST_PROXY: '1',
    });

    it('should require authentication', async () => {
      const res = await request(guarded.http).get('/api/v1/me').set('X-Forwarded-For', randomClientIp());
      expectError(res, 401, 'authentication_required');
    });

    it('should block an address after 3 invalid tokens, even for a valid token, with Retry-After', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < 3; i++) {
        expectError(
          await request(guarded.http)
            .get('/api/v1/me')
            .set(bearer(unknownTokenSecret()))
            .set('X-Forwarded-For', ip),
          401,
          'invalid_token',
        );
      }
      const res = await request(guarded.http)
        .get('/api/v1/me')
        .set(bearer(guarded.adminToken))
        .set('X-Forwarded-For', ip);
      expectError(res, 429, 'abuse_blocked');
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(30);
    });

    it('should not block another address', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < 3; i++) {
        await request(guarded.http)
          .get('/api/v1/me')
          .set(bearer(unknownTokenSecret()))
          .set('X-Forwarded-For', ip);
      }
      expectError(
        await request(guarded.http)
          .get('/api/v1/me')
          .set(bearer(guarded.adminToken))
          .set('X-Forwarded-For', ip),
        429,
        'abuse_blocked',
      );
      const res = await request(guarded.http)
        .get('/api/v1/me')
        .set(bearer(guarded.adminToken))
        .set('X-Forwarded-For', randomClientIp());
      expectSuccess(res);
    });

    it('should not block an address below the threshold', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < 2; i++) {
        await request(guarded.http)
          .get('/api/v1/me')
          .set(bearer(unknownTokenSecret()))
          .set('X-Forwarded-For', ip);
      }
      expectSuccess(
        await request(guarded.http)
          .get('/api/v1/me')
          .set(bearer(guarded.adminToken))
          .set('X-Forwarded-For', ip),
      );
    });

    it('should state the abuse threshold in GET /api/v1', async () => {
      const res = await request(guarded.http).get('/api/v1').set('X-Forwarded-For', randomClientIp());
      expectSuccess(res);
      expect(res.body.data.rate_limit.abuse_threshold).toEqual({
        failed_authentications: 3,
        window_seconds: 60,
        block_seconds: 30,
      });
    });
  });
});
