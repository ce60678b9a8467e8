import { Writable } from 'node:stream';
import request from 'supertest';
import { expectError } from '../support/envelope';
import { bearer } from '../support/factories';
import { createTenantWithToken, startTestApp, type TestApp, appSuite } from '../support/test-app';

/** Collects the JSON log lines the app writes. */
class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      this.raw.push(line);
      this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }
}

describe('Logs', () => {
  let t: TestApp;
  const logs = new LogCapture();

  appSuite(
    (app) => (t = app),
    () => startTestApp({ LOG_LEVEL: 'info' }, { logDestination: logs }),
  );

  it('should write one JSON line per request carrying its request id, and never the token', async () => {
    const tenant = await createTenantWithToken(t, ['admin']);
    const requestId = `log-test-${Date.now()}`;
    await request(t.http)
      .get('/api/v1/me')
      .set(bearer(tenant.token))
      .set('X-Request-ID', requestId)
      .expect(200);
    await request(t.http).get('/api/v1/me').set(bearer('isk_not_a_real_token_0000000000')).expect(401);

    const line = logs.lines.find((entry) => entry.request_id === requestId && entry.msg === 'request');
    expect(line).toMatchObject({ method: 'GET', path: '/api/v1/me', status: 200, token_id: tenant.tokenId });
    expect(
      logs.lines.filter((entry) => entry.request_id === requestId && entry.msg === 'request'),
    ).toHaveLength(1);
    const everything = logs.raw.join('\n');
    expect(everything).not.toContain(tenant.token);
    expect(everything).not.toContain(t.adminToken);
    expect(everything).not.toContain('isk_not_a_real_token');
  });
});

describe('GET /health/ready', () => {
  it('should answer 503 service_unavailable once the database is unreachable', async () => {
    const t = await startTestApp();
    try {
      await request(t.http).get('/health/ready').expect(200);
      await t.dataSource.destroy();
      expectError(await request(t.http).get('/health/ready'), 503, 'service_unavailable');
      await request(t.http).get('/health/live').expect(200);
    } finally {
      await t.close().catch(() => undefined);
    }
  });
});
