import request from 'supertest';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer, randomClientIp } from '../support/factories';
import { startTestApp, type TestApp, createTenant, issueToken } from '../support/test-app';

// `npm test` needs no server, so this suite runs in both modes: with REDIS_URL (as CI's second pass does) two
// instances must share one budget; without it each instance counts in its own memory.
const sharedCounters = Boolean(process.env.REDIS_URL);

describe('Rate limits across instances', () => {
  // Setup goes through an app with the default budget: the shared bootstrap token's Redis counter is already spent
  // past 3 by the other suites of the run.
  let setup: TestApp;
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    const env = { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '60', TRUST_PROXY: '1' };
    setup = await startTestApp();
    first = await startTestApp(env);
    second = await startTestApp(env);
  });
  afterAll(async () => {
    await setup?.close();
    await first?.close();
    await second?.close();
  });

  it(
    sharedCounters
      ? 'should spend one budget across two instances sharing Redis'
      : 'should keep a budget per instance when counters are in memory',
    async () => {
      const tenant = await createTenant(setup);
      const { token } = await issueToken(setup, tenant.id, ['events:read']);
      const ip = randomClientIp();
      const call = (app: TestApp) =>
        request(app.http).get('/api/v1/me').set(bearer(token)).set('X-Forwarded-For', ip);

      expectSuccess(await call(first));
      expectSuccess(await call(first));
      expectSuccess(await call(second));
      const fourth = await call(second);
      if (sharedCounters) {
        expectError(fourth, 429, 'rate_limited');
        expect(Number(fourth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      } else {
        expectSuccess(fourth);
        expect(fourth.headers['ratelimit']).toMatch(/^"default";r=1;t=\d+$/);
      }
    },
  );
});
