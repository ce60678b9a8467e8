import { type ChildProcess, fork } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { RssSampler } from './process-stats';
import type { QueryStatsMessage, StatementStat } from './query-counter';

export const ROOT = join(__dirname, '..');
const TS_NODE = ['-r', 'ts-node/register/transpile-only'];

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function waitForExitOrMessage<T>(
  child: ChildProcess,
  what: string,
  accept: (message: unknown) => T | null,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      const value = accept(message);
      if (value === null) {
        return;
      }
      cleanup();
      resolve(value);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`${what} exited (code ${code}) before it was ready`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

async function stopChild(child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

/** The query counter is TypeScript; the server under test runs plain node: a transpiled copy, in the folder returned. */
function transpiledQueryCounter(): string {
  const source = readFileSync(join(__dirname, 'query-counter.ts'), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'isp-bench-'));
  writeFileSync(join(dir, 'query-counter.js'), outputText);
  return dir;
}

export interface ServerOptions {
  databaseUrl: string;
  /** The app's pool size (DATABASE_POOL_MAX): 1 on the embedded database, as the app itself does there. */
  poolMax: number;
  bootstrapToken: string;
  logFile: string;
  cpuProfDir: string | null;
  /** REDIS_URL of every instance (the rate limit and abuse counters shared), or null: each process counts its own. */
  redisUrl: string | null;
}

/**
 * The background workers every instance runs, as a production replica does (each is on by default; the bench says
 * so rather than rely on it): the switch and what it runs. The bill run scheduler is the one thing off (serverEnv).
 */
export const SERVER_WORKERS: { env: string; runs: string }[] = [
  { env: 'WEBHOOK_WORKER_ENABLED', runs: 'webhooks' },
  {
    env: 'PROVISIONING_WORKER_ENABLED',
    runs: 'provisioning (orders, network settings, data caps, radacct retention)',
  },
  { env: 'AUTOMATION_ENABLED', runs: 'automation (rules, dunning sweeps)' },
  { env: 'NOTIFICATION_WORKER_ENABLED', runs: 'notifications' },
  { env: 'IMPORT_WORKER_ENABLED', runs: 'imports' },
];

export interface ServerUnderTest {
  /** The first instance: the one the statements are counted in, and the bill run and the probes talk to. */
  pid: number;
  baseUrl: string;
  /** Every instance (--instances): the load is spread over them, their CPU summed. */
  pids: number[];
  baseUrls: string[];
  /** Resident memory of every instance: the largest of them. */
  rss: RssSampler;
  /** Statement counts since the last reset (and resets them when asked). */
  queryStats(reset: boolean): Promise<StatementStat[]>;
  stop(): Promise<void>;
}

/**
 * The node flags the server runs with in production: those of `npm start` (package.json), which the Dockerfile's CMD
 * repeats, so the bench measures the server as it is deployed.
 */
export function productionNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/);
  return words.slice(words.indexOf('node') + 1, words.indexOf('dist/main.js'));
}

/**
 * The server's environment: production, its database and port, every worker (SERVER_WORKERS), the rate limit's store,
 * and no limit or scheduled run in the bench's way.
 */
function serverEnv(options: ServerOptions, port: number): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    DATABASE_URL: options.databaseUrl,
    DATABASE_POOL_MAX: String(options.poolMax),
    PORT: String(port),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '10000000', // the most the config accepts: the limiter runs, but never refuses a bench request
    RATE_LIMIT_WINDOW_S: '60',
    API_BOOTSTRAP_TOKEN: options.bootstrapToken,
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    ...Object.fromEntries(SERVER_WORKERS.map((worker) => [worker.env, 'true'])),
    // The day's scheduled bill run would start, at whatever point of the run the hour comes, for the default tenant
    // as soon as it has services (seeded, and ordered by services.create) and walk all its subscribers; billing.run
    // starts its own run through the API.
    BILLING_SCHEDULER_ENABLED: 'false',
  };
}

/** Resolves once the server says it listens; rejects with its output if it exits first. */
function listening(child: ChildProcess): Promise<void> {
  let output = '';
  return new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('listening on')) {
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('exit', (code) =>
      reject(new Error(`the server exited (code ${code}) during boot:\n${output}`)),
    );
  });
}

/** The built server (node dist/main.js) as a child process, with the query counter preloaded. */
export async function startServer(options: ServerOptions): Promise<ServerUnderTest> {
  const port = await freePort();
  const log = createWriteStream(options.logFile);
  const counterDir = transpiledQueryCounter();
  const execArgv = [...productionNodeFlags(), '-r', join(counterDir, 'query-counter.js')];
  if (options.cpuProfDir) {
    execArgv.push('--cpu-prof', '--cpu-prof-dir', options.cpuProfDir);
  }
  const child = fork(join(ROOT, 'dist/main.js'), [], {
    cwd: ROOT,
    execArgv,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: serverEnv(options, port),
  });
  const ready = listening(child);
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  await ready;

  let pending: ((stats: StatementStat[]) => void) | null = null;
  child.on('message', (message: unknown) => {
    const reply = message as QueryStatsMessage;
    if (reply?.type === 'bench:queries' && pending) {
      const settle = pending;
      pending = null;
      settle(reply.stats);
    }
  });
  const rss = new RssSampler([child.pid!]);
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    pid: child.pid!,
    baseUrl,
    pids: [child.pid!],
    baseUrls: [baseUrl],
    rss,
    queryStats(reset) {
      return new Promise((resolve) => {
        pending = resolve;
        child.send({ type: 'bench:queries', reset });
      });
    },
    async stop() {
      rss.stop();
      await stopChild(child);
      log.end();
      rmSync(counterDir, { recursive: true, force: true });
    },
  };
}

/**
 * `instances` servers of the same build on the same database (--instances), started one after the other so only the
 * first runs the migrations; the first one's log is `logFile`, the others' `<logFile>-<n>.log`. One instance when 1.
 */
export async function startServers(options: ServerOptions, instances: number): Promise<ServerUnderTest> {
  const started: ServerUnderTest[] = [];
  try {
    for (let i = 0; i < instances; i++) {
      const logFile = i === 0 ? options.logFile : options.logFile.replace(/\.log$/, `-${i + 1}.log`);
      started.push(await startServer({ ...options, logFile }));
    }
  } catch (error) {
    for (const server of started) {
      await server.stop().catch(() => undefined);
    }
    throw error;
  }
  if (started.length === 1) {
    return started[0];
  }
  const [first] = started;
  const pids = started.map((server) => server.pid);
  const rss = new RssSampler(pids);
  return {
    pid: first.pid,
    baseUrl: first.baseUrl,
    pids,
    baseUrls: started.map((server) => server.baseUrl),
    rss,
    queryStats: (reset) => first.queryStats(reset),
    async stop() {
      rss.stop();
      await Promise.all(started.map((server) => server.stop()));
    },
  };
}

export interface BaselineServer {
  pid: number;
  baseUrl: string;
  pids: number[];
  baseUrls: string[];
  stop(): Promise<void>;
}

/** The baselines that run in a process of their own: (a) bare node:http, (c) the framework floor (Nest + Express). */
export const BASELINE_SCRIPTS = {
  insert: 'baseline-server.ts',
  framework: 'framework-floor-server.ts',
} as const;
export type BaselineKind = keyof typeof BASELINE_SCRIPTS;

/**
 * A baseline server (BASELINE_SCRIPTS) in a process of its own, like the server under test, with the same pool size:
 * baseline (a) is `insert`, baseline (c) `framework`.
 */
export async function startBaseline(
  kind: BaselineKind,
  databaseUrl: string,
  tenantId: string,
  poolMax: number,
): Promise<BaselineServer> {
  const script = BASELINE_SCRIPTS[kind];
  const child = fork(join(__dirname, script), [], {
    cwd: ROOT,
    execArgv: TS_NODE,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, DATABASE_URL: databaseUrl, TENANT_ID: tenantId, POOL_MAX: String(poolMax) },
  });
  const port = await waitForExitOrMessage(child, `the baseline server (bench/${script})`, (message) => {
    const ready = message as { type?: string; port?: number } | null;
    return ready?.type === 'ready' && typeof ready.port === 'number' ? ready.port : null;
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  return { pid: child.pid!, baseUrl, pids: [child.pid!], baseUrls: [baseUrl], stop: () => stopChild(child) };
}

export interface EmbeddedDatabase {
  url: string;
  pid: number;
  rss: RssSampler;
  stop(): Promise<void>;
}

/** --embedded: PGlite in its own process (bench/embedded-db.ts), shared by the server, the baseline and the seeding. */
export async function startEmbeddedDatabase(): Promise<EmbeddedDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'isp-bench-pglite-'));
  const child = fork(join(__dirname, 'embedded-db.ts'), [], {
    cwd: ROOT,
    execArgv: TS_NODE,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_PGLITE_DIR: dir },
  });
  const url = await waitForExitOrMessage(child, 'the embedded database', (message) => {
    const ready = message as { type?: string; url?: string } | null;
    return ready?.type === 'ready' && typeof ready.url === 'string' ? ready.url : null;
  });
  const rss = new RssSampler([child.pid!]);
  return {
    url,
    pid: child.pid!,
    rss,
    async stop() {
      rss.stop();
      await stopChild(child, 30_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
