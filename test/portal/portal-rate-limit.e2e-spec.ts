import request, { type Response } from 'supertest';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer, randomClientIp } from '../support/factories';
import { portalSession } from '../support/portal-factory';
import { createSubscriber, uniqueEmail } from '../support/subscriber-factory';
import {
  appSuite,
  createTenantWithToken,
  issueToken,
  startTestApp,
  type TenantWithToken,
  type TestApp,
} from '../support/test-app';

/**
 * A portal session's rate limit (docs/portal.md, "Rate limit"): its subscriber's own budget of RATE_LIMIT_MAX per
 * RATE_LIMIT_WINDOW_S, shared by all its sessions whatever address they call from, apart from the address's budget
 * (callers without a token, other subscribers behind the same NAT) and from the tenant's API tokens. Counters may live
 * in a Redis shared with other suites, so every address here is a fresh random one.
 */
describe('Portal: rate limits per subscriber', () => {
  let t: TestApp;
  let op: TenantWithToken;

  /** A portal session token of the subscriber, signed in on the unlimited app. */
  const sessionOf = async (subscriberId: string): Promise<string> =>
    (await portalSession(t, op.token, subscriberId)).token;

  const subscriber = async () => (await createSubscriber(t, op.token, { email: uniqueEmail() })).id;

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1' });
    op = await createTenantWithToken(t, ['subscribers:*']);
  });
  afterAll(() => t.close());

  describe('budget of 3 requests per 60 s', () => {
    let limited: TestApp;
    appSuite((app) => (limited = app), { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '60', TRUST_PROXY: '1' });

    const call = (token: string | null, ip: string, path = '/api/v1/portal/session'): Promise<Response> => {
      const req = request(limited.http).get(path).set('X-Forwarded-For', ip);
      return token ? req.set(bearer(token)) : req;
    };

    it("should count a session in its subscriber's budget, not its address's nor another subscriber's", async () => {
      const [ada, bob] = [await subscriber(), await subscriber()];
      const [adaToken, bobToken] = [await sessionOf(ada), await sessionOf(bob)];
      const ip = randomClientIp();
      for (const left of [2, 1, 0]) {
        const res = await call(adaToken, ip);
        expectSuccess(res);
        expect(res.headers['ratelimit']).toBe(`"default";r=${left};t=60`);
      }
      const limitedAnswer = await call(adaToken, ip);
      expectError(limitedAnswer, 429, 'rate_limited');
      expect(Number(limitedAnswer.headers['retry-after'])).toBeGreaterThan(0);

      // Behind the same address: another subscriber's session, and a caller without a token, have budgets of their own.
      expectSuccess(await call(bobToken, ip));
      expectError(await call(null, ip), 401, 'authentication_required');
      // An operator's API token draws on its own (a fresh one: with Redis, op.token's count is shared with `t`).
      const operator = await issueToken(t, op.slug, ['subscribers:read']);
      expectSuccess(
        await request(limited.http)
          .get(`/api/v1/subscribers/${ada}`)
          .set(bearer(operator.token))
          .set('X-Forwarded-For', ip),
      );
    });

    it('should share one budget among all the sessions of a subscriber, from any address', async () => {
      const ada = await subscriber();
      const first = await sessionOf(ada);
      for (let i = 0; i < 3; i++) {
        expectSuccess(await call(first, randomClientIp()));
      }
      const second = await sessionOf(ada);
      expectError(await call(second, randomClientIp()), 429, 'rate_limited');
      expectError(await call(first, randomClientIp()), 429, 'rate_limited');
    });
  });

  describe('abuse block after 2 failed authentications', () => {
    let strict: TestApp;
    appSuite((app) => (strict = app), { ABUSE_AUTH_FAILURES_MAX: '2', TRUST_PROXY: '1' });

    it('should not count a live portal session on a path no route serves as a failed authentication', async () => {
      const token = await sessionOf(await subscriber());
      const ip = randomClientIp();
      const get = (path: string, secret: string) =>
        request(strict.http).get(path).set(bearer(secret)).set('X-Forwarded-For', ip);
      for (let i = 0; i < 3; i++) {
        expectError(await get('/api/v1/no-such-route', token), 404, 'route_not_found');
      }
      expectSuccess(await get('/api/v1/portal/session', token));

      // An unknown portal token still counts, as any unknown token does.
      const other = randomClientIp();
      const guess = () =>
        request(strict.http)
          .get('/api/v1/no-such-route')
          .set(bearer('ipt_guess'))
          .set('X-Forwarded-For', other);
      await guess();
      await guess();
      expectError(
        await request(strict.http)
          .get('/api/v1/portal/session')
          .set(bearer(token))
          .set('X-Forwarded-For', other),
        429,
        'abuse_blocked',
      );
    });
  });
});
