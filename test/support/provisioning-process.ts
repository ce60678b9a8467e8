/**
 * Server processes for the provisioning crash and multi-instance suites, and a throw-away PostgreSQL cluster.
 *
 * This file is also preloaded into those server processes (`node -r <this file> src/main.ts`). There, and only when
 * the process was started with TEST_PROVISIONING_HOLD (`<ms>:<tenant slug>`), it wraps the radius-sql driver: every
 * `apply` really writes the RADIUS rows and prints `provisioning-test applied <order id>` on stdout; an order of that
 * tenant is then held for that many milliseconds before the worker may record it. That keeps a suite's orders in
 * flight long enough for a SIGKILL to land between the network write and the completion, and lets it count which
 * process carried out which order; orders other suites left open in the shared database are not held. Nothing of
 * src/ changes; the jest process never sets the variable, so importing the helpers patches nothing.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { RadiusSqlDriver } from '../../src/provisioning/network/radius-sql.driver';
import { BOOTSTRAP_TOKEN } from './test-app';

const ROOT = join(__dirname, '..', '..');
const LISTENING = /listening on (http:\/\/\S+)/;
const exec = promisify(execFile);
const PG_LIB = '/usr/lib/postgresql';
const APPLIED = /^provisioning-test applied (\S+)$/gm;

const HOLD = /^(\d+):(\S+)$/.exec(process.env.TEST_PROVISIONING_HOLD ?? '');
if (HOLD) {
  const [, holdMs, tenantSlug] = HOLD;
  const apply = RadiusSqlDriver.prototype.apply;
  RadiusSqlDriver.prototype.apply = async function (this: RadiusSqlDriver, order, service, plan) {
    const outcome = await apply.call(this, order, service, plan);
    process.stdout.write(`provisioning-test applied ${order.id}\n`);
    if (service.radiusUsername.startsWith(`${tenantSlug}/`)) {
      await new Promise((resolve) => setTimeout(resolve, Number(holdMs)));
    }
    return outcome;
  };
}

export interface ProvisioningServer {
  url: string;
  child: ChildProcess;
  /** Resolves once the process has gone, with its signal (or exit code). */
  exited: Promise<string>;
  /** The order ids this process' driver applied (each line it printed), in order, repeats kept. */
  applied(): string[];
  /** Sends `signal` unless the process has already gone, and resolves with how it ended. */
  stop(signal: NodeJS.Signals): Promise<string>;
}

/**
 * `src/main.ts` in its own Node process on `databaseUrl`, its radius-sql driver traced and holding the orders of
 * tenant `hold.tenantSlug` `hold.ms` after each apply (see above). Resolves once it answers /health/live; rejects
 * with its output when it ends before listening.
 */
export function startProvisioningServer(
  databaseUrl: string,
  hold: { ms: number; tenantSlug: string },
  env: Record<string, string> = {},
): Promise<ProvisioningServer> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', __filename, join(ROOT, 'src', 'main.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: '0',
        LOG_LEVEL: 'silent',
        API_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        RATE_LIMIT_MAX: '1000000',
        ABUSE_AUTH_FAILURES_MAX: '1000000',
        NETWORK_DRIVER: 'radius-sql',
        TEST_PROVISIONING_HOLD: `${hold.ms}:${hold.tenantSlug}`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  const server: ProvisioningServer = {
    url: '',
    child,
    exited,
    applied: () => [...stdout.matchAll(APPLIED)].map((match) => match[1]),
    stop: (signal) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
      }
      return exited;
    },
  };
  return new Promise<ProvisioningServer>((resolve, reject) => {
    const onData = () => {
      const match = LISTENING.exec(stdout);
      if (!match) {
        return;
      }
      child.stdout?.off('data', onData);
      server.url = match[1];
      request(server.url)
        .get('/health/live')
        .then(() => resolve(server), reject);
    };
    child.stdout?.on('data', onData);
    void exited.then((how) =>
      reject(new Error(`server ended (${how}) before listening: ${stderr.trim() || stdout.trim()}`)),
    );
  });
}

export interface ThrowawayCluster {
  /** A `pg` URL on the cluster's Unix socket (no TCP port is opened). */
  url: string;
  stop(): Promise<void>;
}

/**
 * A PostgreSQL cluster of its own in a temporary folder (initdb, then pg_ctl start), for a suite that needs a
 * database several processes share while the run's embedded one serialises every transaction. It listens only on a
 * Unix socket in that folder, named after `port`; the shared server on 5432 is never touched. As root, the cluster
 * runs as the `postgres` user (Postgres refuses to run as root).
 */
export async function startThrowawayCluster(port: number): Promise<ThrowawayCluster> {
  const versions = existsSync(PG_LIB) ? readdirSync(PG_LIB) : [];
  const bin = versions
    .map((version) => join(PG_LIB, version, 'bin'))
    .filter((dir) => existsSync(join(dir, 'initdb')))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .pop();
  if (!bin) {
    throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin');
  }
  const dir = mkdtempSync(join(tmpdir(), 'isp-prov-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = async (tool: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
      : [join(bin, tool), args];
    await exec(file, argv, { timeout: 60_000 });
  };
  if (asRoot) {
    const { stdout } = await exec('id', ['-u', 'postgres']);
    chownSync(dir, Number(stdout.trim()), -1);
  }
  const pgdata = join(dir, 'data');
  const user = asRoot ? 'postgres' : userInfo().username;
  try {
    await run('initdb', ['-D', pgdata, '-U', user, '--auth=trust', '--no-sync', '-E', 'UTF8']);
    await run('pg_ctl', [
      'start',
      '-w',
      '-D',
      pgdata,
      '-l',
      join(dir, 'server.log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses='' -c fsync=off -c max_connections=100`,
    ]);
  } catch (error) {
    await run('pg_ctl', ['stop', '-m', 'immediate', '-D', pgdata]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `postgres://${user}@${encodeURIComponent(dir)}:${port}/postgres`,
    stop: async () => {
      try {
        await run('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', pgdata]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
