import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import request from 'supertest';
import { ConfigError } from '../../src/config/app-config';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer, randomClientIp, unknownTokenSecret } from '../support/factories';
import { startTestApp, type TestApp } from '../support/test-app';

/** Collects the JSON log lines the app writes. */
class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }

  requestLine(requestId: string): Record<string, unknown> | undefined {
    return this.lines.find((line) => line.msg === 'request' && line.request_id === requestId);
  }
}

interface ProxiedApp {
  t: TestApp;
  logs: LogCapture;
  /** Base URLs reaching the app from two real client addresses: 127.0.0.1 and ::1. */
  v4: string;
  v6: string;
}

/** An app listening on a real port, so the tests can reach it from two different loopback addresses. */
async function startProxiedApp(env: Record<string, string>): Promise<ProxiedApp> {
  const logs = new LogCapture();
  const t = await startTestApp(
    { ABUSE_AUTH_FAILURES_MAX: '3', LOG_LEVEL: 'info', ...env },
    { logDestination: logs },
  );
  await new Promise<void>((resolve) => t.http.listen(0, resolve));
  const { port } = t.http.address() as AddressInfo;
  return { t, logs, v4: `http://127.0.0.1:${port}`, v6: `http://[::1]:${port}` };
}

/** Three bad tokens from `base`, carrying this X-Forwarded-For. */
async function failThreeTimes(base: string, forwardedFor: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    expectError(
      await request(base)
        .get('/api/v1/me')
        .set(bearer(unknownTokenSecret()))
        .set('X-Forwarded-For', forwardedFor),
      401,
      'invalid_token',
    );
  }
}

describe('TRUST_PROXY', () => {
  it('should refuse true at boot, saying a client could spoof its address', async () => {
    await expect(startTestApp({ TRUST_PROXY: 'true' })).rejects.toThrow(ConfigError);
    await expect(startTestApp({ TRUST_PROXY: 'true' })).rejects.toThrow(/spoof/);
  });

  it('should refuse a subnet with a typo at boot', async () => {
    await expect(startTestApp({ TRUST_PROXY: '10.0.0.0/8,10.300.0.0/16' })).rejects.toThrow(
      /TRUST_PROXY holds "10\.300\.0\.0\/16"/,
    );
  });

  describe('unset', () => {
    let app: ProxiedApp;
    beforeAll(async () => {
      // The sender is blocked by its real loopback address: in-process counters keep that block out of shared Redis.
      app = await startProxiedApp({ TRUST_PROXY: '', REDIS_URL: '' });
    });
    afterAll(async () => {
      await app.t.close();
    });

    it('should ignore a spoofed X-Forwarded-For: the sender is blocked, not the victim it names', async () => {
      await failThreeTimes(app.v4, '::1');

      expectSuccess(await request(app.v6).get('/api/v1/me').set(bearer(app.t.adminToken)));
      expectError(
        await request(app.v4).get('/api/v1/me').set(bearer(app.t.adminToken)).set('X-Forwarded-For', '::1'),
        429,
        'abuse_blocked',
      );
    });

    it('should log the socket address, not the X-Forwarded-For one', async () => {
      const requestId = `trust-unset-${Date.now()}`;
      await request(app.v6)
        .get('/api/v1')
        .set('X-Request-ID', requestId)
        .set('X-Forwarded-For', '203.0.113.9')
        .expect(200);
      expect(app.logs.requestLine(requestId)?.ip).toBe('::1');
    });
  });

  describe('set to 1 (one load balancer)', () => {
    let app: ProxiedApp;
    beforeAll(async () => {
      app = await startProxiedApp({ TRUST_PROXY: '1' });
    });
    afterAll(async () => {
      await app.t.close();
    });

    it('should block the address the trusted hop appended, not a left-most one the client wrote', async () => {
      const victim = randomClientIp();
      const attacker = randomClientIp();
      await failThreeTimes(app.v4, `${victim}, ${attacker}`);

      expectSuccess(
        await request(app.v4).get('/api/v1/me').set(bearer(app.t.adminToken)).set('X-Forwarded-For', victim),
      );
      expectError(
        await request(app.v4)
          .get('/api/v1/me')
          .set(bearer(app.t.adminToken))
          .set('X-Forwarded-For', `${victim}, ${attacker}`),
        429,
        'abuse_blocked',
      );
      expectError(
        await request(app.v4)
          .get('/api/v1/me')
          .set(bearer(app.t.adminToken))
          .set('X-Forwarded-For', attacker),
        429,
        'abuse_blocked',
      );
    });

    it('should log the right-most X-Forwarded-For entry as the client address', async () => {
      const client = randomClientIp();
      const requestId = `trust-one-${Date.now()}`;
      await request(app.v4)
        .get('/api/v1')
        .set('X-Request-ID', requestId)
        .set('X-Forwarded-For', `198.51.100.7, ${client}`)
        .expect(200);
      expect(app.logs.requestLine(requestId)?.ip).toBe(client);
    });
  });

  describe('set to a list of subnets', () => {
    let app: ProxiedApp;
    beforeAll(async () => {
      app = await startProxiedApp({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.0/8' });
    });
    afterAll(async () => {
      await app.t.close();
    });

    it('should take the first address outside the trusted subnets, from the right', async () => {
      const victim = randomClientIp();
      const attacker = randomClientIp();
      await failThreeTimes(app.v4, `${victim}, ${attacker}, 10.1.2.3`);

      expectSuccess(
        await request(app.v4)
          .get('/api/v1/me')
          .set(bearer(app.t.adminToken))
          .set('X-Forwarded-For', `${victim}, 10.9.9.9`),
      );
      expectError(
        await request(app.v4)
          .get('/api/v1/me')
          .set(bearer(app.t.adminToken))
          .set('X-Forwarded-For', `${attacker}, 10.1.2.3`),
        429,
        'abuse_blocked',
      );
    });

    it('should log the address the trusted proxies reported', async () => {
      const client = randomClientIp();
      const requestId = `trust-list-${Date.now()}`;
      await request(app.v4)
        .get('/api/v1')
        .set('X-Request-ID', requestId)
        .set('X-Forwarded-For', `198.51.100.7, ${client}, 10.1.2.3`)
        .expect(200);
      expect(app.logs.requestLine(requestId)?.ip).toBe(client);
    });

    it('should ignore X-Forwarded-For from a sender outside the trusted subnets', async () => {
      const requestId = `trust-list-untrusted-${Date.now()}`;
      await request(app.v6)
        .get('/api/v1')
        .set('X-Request-ID', requestId)
        .set('X-Forwarded-For', randomClientIp())
        .expect(200);
      expect(app.logs.requestLine(requestId)?.ip).toBe('::1');
    });
  });
});
