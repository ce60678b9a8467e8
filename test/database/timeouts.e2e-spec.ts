import { Client } from 'pg';
import request from 'supertest';
import type { QueryRunner } from 'typeorm';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber, subscriberBody, SUBSCRIBER_SCOPES } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

const ACQUIRE_TIMEOUT_MS = 300;
const STATEMENT_TIMEOUT_MS = 800;
const embedded = process.env.TEST_EMBEDDED_DATABASE === 'true';

/** Issue #11 item 11: a stuck database answers 503 service_unavailable in bounded time, never hangs or 500s. */
describe('Database timeouts', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  beforeAll(async () => {
    t = await startTestApp({
      DATABASE_POOL_MAX: '1',
      DATABASE_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      // The worker would compete for the one connection and make the timings of this suite its own.
      WEBHOOK_WORKER_ENABLED: 'false',
      TOKEN_CACHE_TTL_MS: '0',
    });
    tenant = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
  });
  afterAll(async () => {
    await t.close();
  });

  /** A request with a deadline far beyond the acquire timeout: a hang fails the test instead of stalling it. */
  const timed = async <T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> => {
    const started = Date.now();
    const result = await run();
    return { result, ms: Date.now() - started };
  };

  it("should run the app's statements without parallel plans (their workers waited on each other under load)", async () => {
    const [row] = await t.dataSource.query<{ max_parallel_workers_per_gather: string }[]>(
      'SHOW max_parallel_workers_per_gather',
    );
    expect(row.max_parallel_workers_per_gather).toBe('0');
  });

  describe('while a transaction holds the only pooled connection', () => {
    let holder: QueryRunner;

    beforeEach(async () => {
      holder = t.dataSource.createQueryRunner();
      await holder.connect();
      await holder.startTransaction();
      await holder.query('SELECT 1');
    });
    afterEach(async () => {
      if (!holder.isReleased) {
        if (holder.isTransactionActive) {
          await holder.rollbackTransaction();
        }
        await holder.release();
      }
    });

    it('should answer /health/ready 503 service_unavailable within the acquire timeout', async () => {
      const { result: res, ms } = await timed(() => request(t.http).get('/health/ready').timeout(10_000));
      expectError(res, 503, 'service_unavailable');
      expect(ms).toBeLessThan(ACQUIRE_TIMEOUT_MS + 2_000);
    });

    it('should answer POST /subscribers 503 service_unavailable with Retry-After', async () => {
      const { result: res, ms } = await timed(() =>
        request(t.http)
          .post('/api/v1/subscribers')
          .set(bearer(tenant.token))
          .send(subscriberBody())
          .timeout(10_000),
      );
      expectError(res, 503, 'service_unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(ms).toBeLessThan(ACQUIRE_TIMEOUT_MS * 3 + 2_000);
    });

    it('should serve again once the transaction ends', async () => {
      await holder.rollbackTransaction();
      await holder.release();
      const ready = await request(t.http).get('/health/ready').timeout(10_000);
      expectSuccess(ready);
      const created = await request(t.http)
        .post('/api/v1/subscribers')
        .set(bearer(tenant.token))
        .send(subscriberBody())
        .timeout(10_000);
      expectSuccess(created, 201);
    });
  });

  it('should answer 503 service_unavailable with Retry-After when a statement outlives DATABASE_STATEMENT_TIMEOUT_MS', async () => {
    const subscriber = await createSubscriber(t, tenant.token);
    const locker = new Client({ connectionString: process.env.DATABASE_URL });
    await locker.connect();
    try {
      if (embedded) {
        // PGlite enforces no statement timeout (one session in WASM, no timer interrupts): the embedded database
        // relies on the acquire timeout above, and this is what the README states.
        const [row] = (await locker.query('SHOW statement_timeout')).rows as { statement_timeout: string }[];
        expect(row.statement_timeout).toBe('0');
        return;
      }
      // Another session holds the subscriber's row lock; the PATCH waits on it until statement_timeout cancels it.
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM subscribers WHERE id = $1 FOR UPDATE', [subscriber.id]);
      const { result: res, ms } = await timed(() =>
        request(t.http)
          .patch(`/api/v1/subscribers/${subscriber.id}`)
          .set(bearer(tenant.token))
          .send({ full_name: 'Waited Too Long' })
          .timeout(10_000),
      );
      expectError(res, 503, 'service_unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 50);
      await locker.query('ROLLBACK');
      const after = await request(t.http)
        .patch(`/api/v1/subscribers/${subscriber.id}`)
        .set(bearer(tenant.token))
        .send({ full_name: 'Served Again' });
      expectSuccess(after);
    } finally {
      await locker.end();
    }
  });
});
