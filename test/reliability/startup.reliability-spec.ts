import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { stoppedAfterEach, tempDirs } from '../support/lifecycle';
import { runServer, type ServerRun } from '../support/server-process';
import { waitFor } from '../support/wait-for';

// Each run compiles the app with ts-node and may open PGlite: several seconds apiece.
const TIMEOUT_MS = 120_000;
const TOKEN = /isk_[A-Za-z0-9_-]{20,}/;

function listenAnywhere(): Promise<Server> {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, () => done(server));
  });
}

function ended(run: ServerRun): Extract<ServerRun, { listening: false }> {
  if (run.listening) {
    throw new Error(`the server started at ${run.url}; it should have stopped`);
  }
  return run;
}

describe('Start-up', () => {
  const freshDataDir = tempDirs('isp-api-startup-');
  const running = stoppedAfterEach(async (started: ServerRun) => {
    if (started.listening) {
      await started.stop();
    }
  }, TIMEOUT_MS);

  async function run(vars: Record<string, string>): Promise<ServerRun> {
    const started = await runServer(vars);
    running.push(started);
    return started;
  }

  it(
    'should say in one line that the port is in use, and issue no admin token before it stops',
    async () => {
      const other = await listenAnywhere();
      const port = (other.address() as { port: number }).port;
      const dataDir = freshDataDir();
      try {
        const failed = ended(await run({ PORT: String(port), DATA_DIR: dataDir }));
        expect(failed.code).toBe(1);
        expect(failed.stderr).toBe(`port ${port} is already in use; set PORT or stop the other process\n`);
        expect(failed.stdout).not.toMatch(TOKEN);
        expect(existsSync(join(dataDir, 'admin-token'))).toBe(false);
      } finally {
        other.close();
      }

      // The database was left without a token: the next start on a free port issues the first one.
      const next = await run({ PORT: '0', DATA_DIR: dataDir });
      expect(next.listening).toBe(true);
      expect(readFileSync(join(dataDir, 'admin-token'), 'utf8')).toMatch(TOKEN);
    },
    TIMEOUT_MS,
  );

  it(
    'should bind the port before anything else: on a busy port it creates no data folder and logs no start',
    async () => {
      const other = await listenAnywhere();
      const port = (other.address() as { port: number }).port;
      const dataDir = join(freshDataDir(), 'data');
      try {
        const failed = ended(await run({ PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info' }));
        expect(failed.code).toBe(1);
        expect(failed.stderr).toBe(`port ${port} is already in use; set PORT or stop the other process\n`);
        expect(failed.stdout).not.toContain('successfully started');
        expect(existsSync(dataDir)).toBe(false);
      } finally {
        other.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'should say in one line that HOST is not an address of this machine, having created nothing',
    async () => {
      const dataDir = join(freshDataDir(), 'data');
      const failed = ended(await run({ PORT: '0', HOST: '192.0.2.1', DATA_DIR: dataDir }));
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(
        /^HOST 192\.0\.2\.1 is not an address of this machine \(EADDRNOTAVAIL\)[^\n]*\n$/,
      );
      expect(existsSync(dataDir)).toBe(false);
    },
    TIMEOUT_MS,
  );

  it(
    'should listen on every IPv4 interface by default, on HOST when set, and print the address really bound',
    async () => {
      const dataDir = freshDataDir();
      const everywhere = await run({ PORT: '0', DATA_DIR: dataDir });
      if (!everywhere.listening) {
        throw new Error(`the server did not start: ${everywhere.stderr}`);
      }
      expect(everywhere.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
      const port = everywhere.url.split(':')[2];
      expect(everywhere.output().stdout).toContain(`API docs: http://127.0.0.1:${port}/docs`);
      expectSuccess(await request(`http://127.0.0.1:${port}`).get('/health/live'));
      await everywhere.stop();

      const loopback = await run({ PORT: '0', DATA_DIR: dataDir, HOST: '127.0.0.1' });
      if (!loopback.listening) {
        throw new Error(`the server did not start: ${loopback.stderr}`);
      }
      expect(loopback.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(loopback.output().stdout).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ \(this machine only;/);
      expectSuccess(await request(loopback.url).get('/health/live'));
    },
    TIMEOUT_MS,
  );

  it(
    'should say in one line what mail does: the server, its login and the sender, never the password',
    async () => {
      const dataDir = freshDataDir();
      const unset = await run({ PORT: '0', DATA_DIR: dataDir });
      if (!unset.listening) {
        throw new Error(`the server did not start: ${unset.stderr}`);
      }
      expect(unset.output().stdout).toMatch(
        /^mail: not configured \(SMTP_URL unset\): notifications will be recorded as skipped$/m,
      );
      await unset.stop();

      const password = 'pw-s3cret-9f2e';
      const configured = await run({
        PORT: '0',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'debug',
        SMTP_URL: `smtp://ops%40isp.example:${password}@smtp.isp.example:587`,
        MAIL_FROM: 'Example ISP <billing@isp.example>',
      });
      if (!configured.listening) {
        throw new Error(`the server did not start: ${configured.stderr}`);
      }
      expectSuccess(await request(configured.url).get('/health/live'));
      const { stdout, stderr } = configured.output();
      expect(stdout).toMatch(
        /^mail: smtp:\/\/smtp\.isp\.example:587 \(starttls, user ops@isp\.example\), from Example ISP <billing@isp\.example>$/m,
      );
      expect(stdout + stderr).not.toContain(password);
    },
    TIMEOUT_MS,
  );

  it(
    'should refuse a bad SMTP_URL in one line naming it, without repeating its password',
    async () => {
      const password = 'pw-s3cret-7c1d';
      const dataDir = join(freshDataDir(), 'data');
      const failed = ended(
        await run({
          PORT: '0',
          DATA_DIR: dataDir,
          SMTP_URL: `smtp://apikey:${password}@smtp.isp.example:587?tls=maybe`,
          MAIL_FROM: 'billing@isp.example',
        }),
      );
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/^Invalid configuration: SMTP_URL must have tls=starttls[^\n]*\n$/);
      expect(failed.stdout + failed.stderr).not.toContain(password);
      expect(existsSync(dataDir)).toBe(false);
    },
    TIMEOUT_MS,
  );

  it(
    'should name the address of an unreachable DATABASE_URL and what to check, in one line without a stack',
    async () => {
      const failed = ended(await run({ PORT: '0', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' }));
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/^[^\n]*127\.0\.0\.1:1\b[^\n]*check[^\n]*\n$/);
      expect(failed.stderr).not.toMatch(/\n\s+at /);
      expect(failed.stdout).toBe('');
    },
    TIMEOUT_MS,
  );

  it(
    'should refuse to start without DATABASE_URL when EMBEDDED_DATABASE is false, saying what to set',
    async () => {
      const dataDir = freshDataDir();
      const failed = ended(await run({ PORT: '0', DATA_DIR: dataDir, EMBEDDED_DATABASE: 'false' }));
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(
        /^Invalid configuration: DATABASE_URL is required[^\n]*EMBEDDED_DATABASE=true[^\n]*\n$/,
      );
      expect(existsSync(join(dataDir, 'pgdata'))).toBe(false);
    },
    TIMEOUT_MS,
  );

  it(
    'should write the first admin token to DATA_DIR/admin-token (mode 0600) and not to its output, without a terminal',
    async () => {
      const dataDir = freshDataDir();
      const tokenFile = join(dataDir, 'admin-token');
      const first = await run({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      if (!first.listening) {
        throw new Error(`the server did not start: ${first.stderr}`);
      }

      expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
      const token = readFileSync(tokenFile, 'utf8').trim();
      expect(token).toMatch(TOKEN);
      // The log (asynchronous) says where the token is.
      await waitFor(() => first.output().stdout.includes(tokenFile), {
        what: 'the log line naming the token file',
      });
      const { stdout, stderr } = first.output();
      expect(stdout).toContain(tokenFile);
      expect(stdout + stderr).not.toContain(token);
      expectSuccess(await request(first.url).get('/api/v1/me').set(bearer(token)));
      // The durability of the embedded database is stated at boot, in one line.
      expect(stdout).toMatch(
        /^Embedded database in .*: every commit is fsynced before it is acknowledged.*$/m,
      );

      await first.stop();
      const again = await run({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      expect(again.listening).toBe(true);
      expect(readFileSync(tokenFile, 'utf8').trim()).toBe(token);
    },
    TIMEOUT_MS,
  );
});
