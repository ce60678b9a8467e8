/**
 * A private PostgreSQL cluster that a suite may take down and bring back (issue 18 item 4), and `src/main.ts` as a
 * child process on it.
 *
 * Unlike test/support/provisioning-process.ts' startThrowawayCluster, this cluster keeps its data folder across a
 * stop, so `start()` brings the same database back, and its processes can be frozen (SIGSTOP) and thawed (SIGCONT)
 * to play a database that hangs. It listens on 127.0.0.1:<port> (the port comes from the range the suite is given) and
 * on a Unix socket in its folder, so a suite can reach it both ways a deployment does; never on the shared server's
 * port. As root the cluster runs as the `postgres` user (Postgres refuses to run as root).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { BOOTSTRAP_TOKEN } from '../../support/test-app';
import { pipeChildLogs } from './log-capture';

const ROOT = join(__dirname, '..', '..', '..');
const PG_LIB = '/usr/lib/postgresql';
const LISTENING = /listening on (http:\/\/\S+)/;
const exec = promisify(execFile);

/** The newest PostgreSQL server binaries installed (Debian layout). */
function serverBinaries(): string {
  const versions = existsSync(PG_LIB) ? readdirSync(PG_LIB) : [];
  const bin = versions
    .map((version) => join(PG_LIB, version, 'bin'))
    .filter((dir) => existsSync(join(dir, 'initdb')))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .pop();
  if (!bin) {
    throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin');
  }
  return bin;
}

/** Whether nothing listens on 127.0.0.1:`port`. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** The first free port of [from, to]: a cluster a crashed run left behind does not stop the next one. */
export async function freePortIn(from: number, to: number): Promise<number> {
  for (let port = from; port <= to; port += 1) {
    if (await portFree(port)) {
      return port;
    }
  }
  throw new Error(`no free port in ${from}–${to}`);
}

export interface FaultCluster {
  /** A `pg` URL over TCP on 127.0.0.1. */
  url: string;
  /** A `pg` URL on the cluster's Unix socket (in its folder). */
  socketUrl: string;
  port: number;
  /** `pg_ctl stop` in `mode`; the data folder stays for `start`. */
  stop(mode: 'immediate' | 'fast'): Promise<void>;
  /** `pg_ctl start` on the same data folder; resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGSTOP to the postmaster, then to every one of its children: the database hangs, its sockets stay open. */
  freeze(): number[];
  /** SIGCONT to every process `freeze` stopped (and any child of the postmaster), children first. */
  thaw(): void;
  /** Thaws, stops (immediate) and deletes the cluster; safe to call whatever state it is in, and twice. */
  destroy(): Promise<void>;
}

/** initdb into a fresh temporary folder, then start it on 127.0.0.1:`port`. */
export async function startFaultCluster(port: number): Promise<FaultCluster> {
  const bin = serverBinaries();
  const dir = mkdtempSync(join(tmpdir(), 'isp-faults-pg-'));
  const pgdata = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? 'postgres' : userInfo().username;
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
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    `-c listen_addresses=127.0.0.1`,
    '-c fsync=off',
    '-c max_connections=100',
  ].join(' ');
  const start = () =>
    run('pg_ctl', ['start', '-w', '-t', '60', '-D', pgdata, '-l', join(dir, 'server.log'), '-o', options]);
  const frozen = new Set<number>();

  const postmasterPid = (): number | null => {
    try {
      const pid = Number(readFileSync(join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    } catch {
      return null;
    }
  };
  const childrenOf = (pid: number): number[] => {
    try {
      return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map(Number);
    } catch {
      return []; // pgrep exits 1 when there is none
    }
  };
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // gone already
    }
  };

  const cluster: FaultCluster = {
    url: `postgres://${user}@127.0.0.1:${port}/postgres`,
    socketUrl: `postgres://${user}@${encodeURIComponent(dir)}:${port}/postgres`,
    port,
    stop: (mode) => run('pg_ctl', ['stop', '-w', '-t', '60', '-m', mode, '-D', pgdata]),
    start,
    freeze: () => {
      const pid = postmasterPid();
      if (pid === null) {
        throw new Error(`no postmaster.pid in ${pgdata}: the cluster is not running`);
      }
      // The postmaster first: stopped, it forks no new backend while the children are being stopped.
      signal(pid, 'SIGSTOP');
      frozen.add(pid);
      for (const child of childrenOf(pid)) {
        signal(child, 'SIGSTOP');
        frozen.add(child);
      }
      return [...frozen];
    },
    thaw: () => {
      const pid = postmasterPid();
      const children = pid === null ? [] : childrenOf(pid);
      for (const each of [...children, ...frozen].filter((p) => p !== pid)) {
        signal(each, 'SIGCONT');
      }
      if (pid !== null) {
        signal(pid, 'SIGCONT');
      }
      frozen.clear();
    },
    destroy: async () => {
      cluster.thaw();
      if (existsSync(dir)) {
        await run('pg_ctl', ['stop', '-w', '-t', '30', '-m', 'immediate', '-D', pgdata]).catch(
          () => undefined,
        );
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };

  try {
    await run('initdb', ['-D', pgdata, '-U', user, '--auth=trust', '--no-sync', '-E', 'UTF8']);
    await start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}

export interface FaultServer {
  url: string;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL if the process has not gone within `graceMs`; resolves with how it ended. */
  stop(graceMs?: number): Promise<string>;
}

/**
 * `src/main.ts` in its own Node process on `databaseUrl` at LOG_LEVEL info, its output captured as log `logName`
 * (log-capture.ts). Resolves once it answers /health/live; rejects with its output when it ends before listening.
 */
export function startFaultServer(
  databaseUrl: string,
  logName: string,
  env: Record<string, string>,
): Promise<FaultServer> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: '0',
    LOG_LEVEL: 'info',
    API_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
    RATE_LIMIT_MAX: '1000000',
    ABUSE_AUTH_FAILURES_MAX: '1000000',
    ...env,
  };
  delete childEnv.TEST_EMBEDDED_DATABASE;
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'src', 'main.ts')],
    {
      cwd: ROOT,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  pipeChildLogs(logName, child);
  let stdout = '';
  let stderr = '';
  const onStdout = (chunk: Buffer) => (stdout += chunk.toString());
  const onStderr = (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000));
  child.stdout?.on('data', onStdout);
  child.stderr?.on('data', onStderr);
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, sig) => resolve(sig ?? String(code))),
  );
  const server: FaultServer = {
    url: '',
    child,
    stop: async (graceMs = 10_000) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        return exited;
      }
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  return new Promise<FaultServer>((resolve, reject) => {
    const onData = () => {
      const match = LISTENING.exec(stdout);
      if (!match) {
        return;
      }
      child.stdout?.off('data', onData);
      child.stdout?.off('data', onStdout);
      stdout = '';
      server.url = match[1];
      request(server.url)
        .get('/health/live')
        .then(() => resolve(server), reject);
    };
    child.stdout?.on('data', onData);
    void exited.then((how) =>
      reject(new Error(`server ended (${how}) before listening: ${stderr.trim() || stdout.slice(-5_000)}`)),
    );
  });
}
