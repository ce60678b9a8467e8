/**
 * Child processes for the suites that drive the application from outside: `src/main.ts` as a server (killed, started
 * again, several at once), the embedded database host, and the CLI. One way to start each, with the helpers that
 * read what they print; the suites and their domain helpers (provisioning-process.ts, billing-run-process.ts,
 * test/reliability/support/*) only choose the environment, the preloaded traces and the log.
 *
 * A child process, because PGlite loads its file system with a dynamic import() that jest's module sandbox refuses
 * (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG), and because a SIGKILL must not take the test with it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { BOOTSTRAP_TOKEN } from './test-app';

/** The repository: every child runs there. */
export const ROOT = join(__dirname, '..', '..');
const TS_NODE = ['-r', 'ts-node/register/transpile-only'];
const TS_NODE_BIN = require.resolve('ts-node/dist/bin');
const LISTENING = /listening on (http:\/\/\S+)/;
/** How much of a child's output a failure message quotes (the end of it, where the reason is). */
const QUOTED = 5_000;

/** What the suites' servers run with unless a suite says otherwise: any free port, quiet, roomy limits. */
export const SERVER_DEFAULTS: Readonly<Record<string, string>> = {
  PORT: '0',
  LOG_LEVEL: 'silent',
  API_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
  RATE_LIMIT_MAX: '1000000',
  ABUSE_AUTH_FAILURES_MAX: '1000000',
};

export interface ServerOptions {
  /** Variables set over this process' environment (once `unset` is taken out of it). */
  env: Record<string, string>;
  /** Variables of this process' environment the server must not inherit. */
  unset?: string[];
  /** Files loaded (`node -r`) before src/main.ts: the traces of provisioning-process.ts and the like. */
  preloads?: string[];
  /** What failure messages call it. */
  name?: string;
  /**
   * Called as soon as it is spawned, before it has printed anything: the place to read its traces (`traced`) or copy
   * its output to the run's logs.
   */
  onSpawn?(server: ServerChild): void;
  /** Kill it and fail when it has not listened within this many ms; without it, the test's own timeout applies. */
  bootTimeoutMs?: number;
  /** Keep only the last this many characters of its stdout and stderr (a server logging every request). */
  keepChars?: number;
}

export interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What the process wrote to stderr, for the failure message. */
  stderr: string;
}

export interface ServerChild {
  /** Base address of the server; '' until it listens. */
  url: string;
  child: ChildProcess;
  /** Resolves once the process has gone, with how: its signal, or its exit code as a string. */
  exited: Promise<string>;
  /** The same, with the exit code and the signal apart and what it wrote on stderr. */
  ended: Promise<ProcessEnd>;
  running(): boolean;
  stdout(): string;
  stderr(): string;
  /** Calls `listener` with every whole line the process writes on stdout from now on, in order. */
  onLine(listener: (line: string) => void): void;
  /**
   * Sends `signal` unless the process has gone, then SIGKILL if it is still there after `graceMs`; resolves with how
   * it ended.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<string>;
}

/** A spawned server and its address once it prints it (null when it ends first). */
export interface SpawnedServer {
  server: ServerChild;
  listening: Promise<string | null>;
}

/** Spawns `src/main.ts` (see ServerOptions) and collects what it prints; does not wait for anything. */
export function spawnServer(options: ServerOptions): SpawnedServer {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of options.unset ?? []) {
    delete env[name];
  }
  const preloads = (options.preloads ?? []).flatMap((file) => ['-r', file]);
  const child = spawn(process.execPath, [...TS_NODE, ...preloads, join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { ...env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (text: string) => (options.keepChars ? text.slice(-options.keepChars) : text);
  let stdout = '';
  let stderr = '';
  /** The unfinished last line of stdout, and who reads the whole ones. */
  let partial = '';
  const lineListeners: ((line: string) => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    stdout = keep(stdout + text);
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      for (const listener of lineListeners) {
        listener(line);
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr = keep(stderr + chunk.toString())));
  const ended = new Promise<ProcessEnd>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  const exited = ended.then(({ code, signal }) => signal ?? String(code));
  const running = () => child.exitCode === null && child.signalCode === null;
  const server: ServerChild = {
    url: '',
    child,
    exited,
    ended,
    running,
    stdout: () => stdout,
    stderr: () => stderr,
    onLine: (listener) => lineListeners.push(listener),
    stop: async (signal = 'SIGTERM', graceMs = 15_000) => {
      if (running()) {
        child.kill(signal);
        const timer = setTimeout(() => running() && child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
  options.onSpawn?.(server);
  const listening = new Promise<string | null>((resolve) => {
    const onData = () => {
      const match = LISTENING.exec(stdout);
      if (match) {
        child.stdout.off('data', onData);
        server.url = match[1];
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    void exited.then(() => resolve(null));
  });
  return { server, listening };
}

/**
 * spawnServer, resolved once the server answers /health/live (one answered request proves it finished booting: its
 * signal handlers are in place). Rejects with the end of its output when it ends, or does not listen in time, first.
 */
export async function startServer(options: ServerOptions): Promise<ServerChild> {
  const { server, listening } = spawnServer(options);
  const name = options.name ?? 'server';
  const output = () => (server.stderr().trim() || server.stdout().trim()).slice(-QUOTED);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    if (options.bootTimeoutMs) {
      timer = setTimeout(() => {
        server.child.kill('SIGKILL');
        reject(new Error(`${name} did not listen within ${options.bootTimeoutMs} ms: ${output()}`));
      }, options.bootTimeoutMs);
    }
  });
  try {
    const url = await Promise.race([listening, timedOut]);
    if (url === null) {
      throw new Error(`${name} ended (${await server.exited}) before listening: ${output()}`);
    }
  } finally {
    clearTimeout(timer);
  }
  await request(server.url).get('/health/live');
  return server;
}

/**
 * Collects, from the moment it is called, what `read` makes of each stdout line of `server` that `pattern` matches:
 * the lines a preloaded trace prints (provisioning-process.ts, billing-run-process.ts). Answers a copy each call.
 */
export function traced<T>(
  server: ServerChild,
  pattern: RegExp,
  read: (match: RegExpExecArray) => T,
): () => T[] {
  const seen: T[] = [];
  server.onLine((line) => {
    const match = pattern.exec(line);
    if (match) {
      seen.push(read(match));
    }
  });
  return () => [...seen];
}

/**
 * `src/main.ts` on the embedded database in `dataDir`, exactly as `npm start` runs without DATABASE_URL (no
 * DATABASE_URL, REDIS_URL or test database), with `env` over the quiet defaults.
 */
export function startServerProcess(dataDir: string, env: Record<string, string> = {}): Promise<ServerChild> {
  return startServer({
    unset: ['DATABASE_URL', 'REDIS_URL', 'TEST_EMBEDDED_DATABASE', 'DATABASE_POOL_MAX'],
    env: { ...SERVER_DEFAULTS, DATA_DIR: dataDir, ...env },
  });
}

export type ServerRun =
  | { listening: true; url: string; output(): { stdout: string; stderr: string }; stop(): Promise<void> }
  | { listening: false; code: number | null; stdout: string; stderr: string };

/**
 * Runs `src/main.ts` as `npm start` would, without a terminal (stdout is a pipe, as in a container), with only the
 * variables given on top of this environment's PATH and the like (no DATABASE_URL, REDIS_URL or bootstrap token
 * unless given). Resolves once it listens, or with its output once it has exited.
 */
export async function runServer(vars: Record<string, string>): Promise<ServerRun> {
  const { server, listening } = spawnServer({
    unset: [
      'DATABASE_URL',
      'REDIS_URL',
      'TEST_EMBEDDED_DATABASE',
      'API_BOOTSTRAP_TOKEN',
      'LOG_LEVEL',
      'SMTP_URL',
      'MAIL_FROM',
    ],
    env: vars,
  });
  const url = await listening;
  if (url === null) {
    return {
      listening: false,
      code: (await server.ended).code,
      stdout: server.stdout(),
      stderr: server.stderr(),
    };
  }
  return {
    listening: true,
    url,
    output: () => ({ stdout: server.stdout(), stderr: server.stderr() }),
    stop: async () => {
      await server.stop();
    },
  };
}

/** The suite's database (the global setup's embedded one, or the Postgres server of DATABASE_URL). */
export function suiteDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new Error('DATABASE_URL is not set: the global setup provides it');
  }
  return url;
}

/** `src/main.ts` on the suite's database, with `env` over the quiet defaults: a server a test may kill. */
export function startSuiteServer(env: Record<string, string> = {}): Promise<ServerChild> {
  return startServer({ env: { ...SERVER_DEFAULTS, DATABASE_URL: suiteDatabaseUrl(), ...env } });
}

export interface EmbeddedHost {
  child: ChildProcess;
  /** A `pg` URL on the database. */
  url: string;
  /** Sends `message` (test/support/embedded-host.ts: `{type: 'commit'}`) and resolves with its answer. */
  send(message: object): Promise<{ type: string; walFsyncs?: number; message?: string }>;
  /** SIGTERM; resolves once it has gone, rejecting when it did not end cleanly. */
  stop(): Promise<void>;
}

/**
 * test/support/embedded-host.ts in a process of its own: the embedded database on `dataDir`, or in memory when null,
 * reachable by URL (PGlite cannot load inside jest's sandbox, and a server holds its folder's lock while it runs).
 */
export function startEmbeddedHost(dataDir: string | null): Promise<EmbeddedHost> {
  const child = spawn(process.execPath, [...TS_NODE, join(ROOT, 'test', 'support', 'embedded-host.ts')], {
    cwd: ROOT,
    env: { ...process.env, EMBEDDED_DIR: dataDir ?? '' },
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  const next = () =>
    new Promise<{ type: string; url?: string; walFsyncs?: number; message?: string }>((resolve) =>
      child.once('message', resolve),
    );
  return new Promise<EmbeddedHost>((resolve, reject) => {
    void exited.then((how) => reject(new Error(`embedded host ended (${how}) before ready: ${stderr}`)));
    void next().then((ready) => {
      if (ready.type !== 'ready' || !ready.url) {
        reject(new Error(`embedded host: ${JSON.stringify(ready)}`));
        return;
      }
      resolve({
        child,
        url: ready.url,
        send: (message) => {
          const reply = next();
          child.send(message);
          return reply;
        },
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
          }
          const how = await exited;
          if (how !== '0') {
            throw new Error(`embedded host ended (${how}): ${stderr}`);
          }
        },
      });
    });
  });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run cli -- <args>` (ts-node on src/cli/main.ts) as an operator would, with `env` for its environment. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [TS_NODE_BIN, '--transpile-only', 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { ...env, LOG_LEVEL: '' }, // the CLI's quiet default, whatever the suite runs with
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}
