/**
 * A private PostgreSQL cluster that a suite may take down and bring back (issue 18 item 4), and `src/main.ts` as a
 * child process on it.
 *
 * Unlike test/support/pg-cluster.ts' startThrowawayCluster, this cluster keeps its data folder across a
 * stop, so `start()` brings the same database back, and its processes can be frozen (SIGSTOP) and thawed (SIGCONT)
 * to play a database that hangs. It listens on 127.0.0.1:<port> (the port comes from the range the suite is given) and
 * on a Unix socket in its folder, so a suite can reach it both ways a deployment does; never on the shared server's
 * port. As root the cluster runs as the `postgres` user (Postgres refuses to run as root).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { initCluster } from '../../support/pg-cluster';
import { SERVER_DEFAULTS, type ServerChild, startServer } from '../../support/server-process';
import { pipeChildLogs } from './log-capture';

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

/** initdb into a fresh temporary folder (test/support/pg-cluster.ts), then start it on 127.0.0.1:`port`. */
export async function startFaultCluster(port: number): Promise<FaultCluster> {
  const { dir, pgdata, user, run } = await initCluster('isp-faults-pg-');
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
    await start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}

export type FaultServer = ServerChild;

/**
 * `src/main.ts` in its own Node process on `databaseUrl` at LOG_LEVEL info, its output captured as log `logName`
 * (log-capture.ts) and only the end of it kept here (it logs every request of the traffic). Resolves once it answers
 * /health/live; rejects with its output when it ends before listening.
 */
export function startFaultServer(
  databaseUrl: string,
  logName: string,
  env: Record<string, string>,
): Promise<FaultServer> {
  return startServer({
    unset: ['TEST_EMBEDDED_DATABASE'],
    env: { ...SERVER_DEFAULTS, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', ...env },
    keepChars: 20_000,
    onSpawn: (spawned) => pipeChildLogs(logName, spawned.child),
  });
}
