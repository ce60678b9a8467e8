import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import request, { type Response } from 'supertest';
import { BootstrapService } from '../../src/gateway/bootstrap.service';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { startTestApp, type TestApp, appSuite } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** A loopback port free at the time of asking. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** The first answer of `url` + `path` once its port accepts connections. */
function firstAnswer(url: string, path: string): Promise<Response> {
  return waitFor(() => request(url).get(path), {
    timeout: 60_000,
    interval: 20,
    what: `an answer of ${path}`,
  });
}

interface Operation {
  security?: Array<Record<string, string[]>>;
  responses: Record<string, unknown>;
}

/** Endpoints that answer without a token; every other operation must name the bearer scheme. */
// The portal's sign-in is public: an invite code or an emailed code, not a bearer token, is its credential; asking
// for a code by email is public too, and answers the same whether the email exists (docs/portal.md).
const PUBLIC_OPERATIONS = [
  'get /api/v1',
  'get /health/live',
  'get /health/ready',
  'post /api/v1/portal/sessions',
  'post /api/v1/portal/sign-in-codes',
];

describe('Gateway info, health and docs', () => {
  let t: TestApp;
  appSuite((app) => (t = app), { RATE_LIMIT_MAX: '250000', RATE_LIMIT_WINDOW_S: '30' });

  describe('GET /api/v1', () => {
    it('should answer without a token in the envelope', async () => {
      const res = await request(t.http).get('/api/v1');
      expectSuccess(res);
    });

    it('should state the version, the authentication scheme and the rate limit policy', async () => {
      const res = await request(t.http).get('/api/v1');
      expect(res.body.data).toMatchObject({
        api_version: 'v1',
        authentication: {
          scheme: 'bearer',
          header: 'Authorization: Bearer <API_TOKEN>',
          tenant_header: 'X-Tenant-ID',
        },
        rate_limit: {
          requests: 250000,
          window_seconds: 30,
          headers: expect.arrayContaining(['RateLimit-Policy', 'RateLimit', 'Retry-After']),
          abuse_threshold: {
            failed_authentications: expect.any(Number),
            window_seconds: expect.any(Number),
            block_seconds: expect.any(Number),
          },
        },
        links: { docs: '/docs', openapi: '/docs/openapi.json' },
      });
    });

    it('should show the policy it states in the RateLimit-Policy header', async () => {
      const res = await request(t.http).get('/api/v1');
      expect(res.headers['ratelimit-policy']).toBe('"default";q=250000;w=30');
      expect(res.headers['x-ratelimit-limit']).toBe('250000');
    });
  });

  describe('health', () => {
    it('should answer /health/live without a token', async () => {
      const res = await request(t.http).get('/health/live');
      expectSuccess(res);
      expect(res.body.data.status).toBe('ok');
    });

    it('should answer /health/ready with the database checked', async () => {
      const res = await request(t.http).get('/health/ready');
      expectSuccess(res);
      expect(res.body.data).toEqual({ status: 'ok', checks: { database: 'ok' } });
    });

    it('should answer /health/ready 503 while the start has not yet registered the bootstrap token, and 200 once the token works', async () => {
      // The port is bound before the bootstrap step; hold that step until the probe has answered.
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const original = BootstrapService.prototype.run;
      const held = jest.spyOn(BootstrapService.prototype, 'run').mockImplementation(async function (
        this: BootstrapService,
      ) {
        await gate;
        return original.call(this);
      });
      const port = await freePort();
      const token = `isk_test_${randomBytes(24).toString('hex')}`;
      const starting = startTestApp({ API_BOOTSTRAP_TOKEN: token }, { port });
      try {
        const url = `http://127.0.0.1:${port}`;
        const early = await firstAnswer(url, '/health/ready');
        expectError(early, 503, 'service_unavailable');
        expect(early.body.error.message).toBe('The server is still starting; retry shortly.');
        expect(early.headers['retry-after']).toBe('1');
        expectSuccess(await request(url).get('/health/live'));
        release();
        await starting;
        const ready = await request(url).get('/health/ready');
        expectSuccess(ready);
        expect(ready.body.data).toEqual({ status: 'ok', checks: { database: 'ok' } });
        expectList(await request(url).get('/api/v1/tenants').set(bearer(token)));
      } finally {
        release();
        held.mockRestore();
        await (await starting).close();
      }
    });

    it('should answer health checks even with a bad token', async () => {
      const res = await request(t.http).get('/health/live').set(bearer('isk_not_a_real_token_at_all'));
      expectSuccess(res);
    });
  });

  describe('docs', () => {
    it('should serve an OpenAPI document with the bearer security scheme', async () => {
      const res = await request(t.http).get('/docs/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.openapi).toMatch(/^3\./);
      expect(res.body.info.version).toBe('v1');
      expect(res.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    });

    it('should not describe the opaque isk_ tokens as JWTs', async () => {
      const res = await request(t.http).get('/docs/openapi.json');
      expect(res.body.components.securitySchemes.bearer.bearerFormat).not.toBe('JWT');
    });

    it('should document the foundation endpoints', async () => {
      const res = await request(t.http).get('/docs/openapi.json');
      expect(Object.keys(res.body.paths)).toEqual(
        expect.arrayContaining([
          '/api/v1',
          '/api/v1/me',
          '/api/v1/tenants',
          '/api/v1/tokens',
          '/api/v1/tokens/{id}',
          '/api/v1/events',
          '/api/v1/events/{id}',
          '/health/live',
          '/health/ready',
        ]),
      );
    });

    it('should require the bearer scheme and document 401 on every operation that is not public', async () => {
      const res = await request(t.http).get('/docs/openapi.json');
      const paths = res.body.paths as Record<string, Record<string, Operation>>;
      const closed = Object.entries(paths).flatMap(([path, operations]) =>
        Object.entries(operations)
          .map(([method, operation]) => ({ name: `${method} ${path}`, operation }))
          .filter(({ name }) => !PUBLIC_OPERATIONS.includes(name)),
      );
      expect(closed.length).toBeGreaterThan(0);
      const lacking = closed
        .filter(
          ({ operation }) =>
            !operation.security?.some((entry) => 'bearer' in entry) || !operation.responses['401'],
        )
        .map(({ name }) => name);
      expect(lacking).toEqual([]);
    });

    it('should serve the Swagger UI as HTML at /docs', async () => {
      const res = await request(t.http).get('/docs');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('swagger-ui');
    });
  });
});
