/**
 * Server processes and database access for the crash suite (test/reliability/crash.reliability-spec.ts).
 *
 * The server is `src/main.ts` in its own Node process, on the embedded database in a data folder (DATA_DIR, as `npm
 * start` runs without DATABASE_URL) or on a Postgres URL, so it can be killed with SIGKILL. It is preloaded with
 * test/support/provisioning-process.ts and test/support/billing-run-process.ts, which do nothing unless their
 * variables are set: with TEST_PROVISIONING_HOLD (`<ms>:<tenant slug>`) every radius-sql apply prints
 * `provisioning-test applied <order id>` and that tenant's orders are held after their network write; with
 * TEST_BILLING_RUN_HOLD every bill-run batch of that tenant prints `billing-test batch <subscriber ids>` and holds its
 * transaction open. Its output goes to the run's log folder (log-capture.ts) at LOG_LEVEL=info.
 *
 * `openDatabase` gives a `pg` URL on the same data while no server runs: the Postgres URL itself, or, for a data
 * folder, test/support/embedded-host.ts serving that folder in a process of its own (the server holds the folder's
 * lock while it runs, and PGlite loads its files with a dynamic import jest's sandbox refuses).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { BOOTSTRAP_TOKEN } from '../../support/test-app';
import { pipeChildLogs } from './log-capture';

const ROOT = join(__dirname, '..', '..', '..');
const LISTENING = /listening on (http:\/\/\S+)/;
const APPLIED = /^provisioning-test applied (\S+)$/;
const BATCH = /^billing-test batch (\S+)$/;
const PRELOADS = [
  join(ROOT, 'test', 'support', 'provisioning-process.ts'),
  join(ROOT, 'test', 'support', 'billing-run-process.ts'),
];

/** Where a crash suite's server keeps its data. */
export type CrashDatabase = { kind: 'embedded'; dataDir: string } | { kind: 'postgres'; url: string };

export interface CrashServer {
  url: string;
  child: ChildProcess;
  /** Resolves once the process has gone, with its signal (or exit code). */
  exited: Promise<string>;
  /** The order ids this process' radius-sql driver applied (one per apply, repeats kept), in order. */
  applied(): string[];
  /** The subscribers of each held bill-run batch this process started writing, in order. */
  batches(): string[][];
  /** Calls `listener` after every chunk the process writes on stdout. */
  onOutput(listener: () => void): void;
  /** Sends `signal` unless the process has already gone, and resolves with how it ended. */
  stop(signal: NodeJS.Signals): Promise<string>;
  /** Everything the process wrote on stdout (its log lines among them) and on stderr, so far. */
  output(): string;
  stderr(): string;
}

/**
 * Starts the server on `db` with `env` on top of the suite's defaults (LOG_LEVEL=info, roomy rate limits, the
 * bootstrap token); its output goes to the run's log `logName`. Resolves once it answers /health/live; rejects with
 * its output when it ends before listening.
 */
export function startCrashServer(
  db: CrashDatabase,
  logName: string,
  env: Record<string, string>,
): Promise<CrashServer> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.TEST_EMBEDDED_DATABASE;
  delete base.DATABASE_POOL_MAX;
  if (db.kind === 'embedded') {
    delete base.DATABASE_URL;
    delete base.REDIS_URL; // one process on its own data: nothing to share, as server-process.ts runs it
    base.DATA_DIR = db.dataDir;
  } else {
    base.DATABASE_URL = db.url;
  }
  const child = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      ...PRELOADS.flatMap((file) => ['-r', file]),
      join(ROOT, 'src', 'main.ts'),
    ],
    {
      cwd: ROOT,
      env: {
        ...base,
        PORT: '0',
        LOG_LEVEL: 'info',
        API_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        RATE_LIMIT_MAX: '1000000',
        ABUSE_AUTH_FAILURES_MAX: '1000000',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  pipeChildLogs(logName, child);
  let stdout = '';
  let stderr = '';
  /** Read line by line as it comes (the log is long; the suite looks at these after every chunk). */
  let partial = '';
  const applied: string[] = [];
  const batches: string[][] = [];
  const listeners: (() => void)[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    stdout += text;
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const apply = APPLIED.exec(line);
      const batch = BATCH.exec(line);
      if (apply) {
        applied.push(apply[1]);
      } else if (batch) {
        batches.push(batch[1].split(','));
      }
    }
    for (const listener of listeners) {
      listener();
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  const server: CrashServer = {
    url: '',
    child,
    exited,
    applied: () => [...applied],
    batches: () => [...batches],
    onOutput: (listener) => listeners.push(listener),
    stop: (signal) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
      }
      return exited;
    },
    output: () => stdout + stderr,
    stderr: () => stderr,
  };
  return new Promise<CrashServer>((resolve, reject) => {
    const onData = () => {
      const match = server.url ? null : LISTENING.exec(stdout);
      if (!match) {
        return;
      }
      server.url = match[1];
      request(server.url)
        .get('/health/live')
        .then(() => resolve(server), reject);
    };
    listeners.push(onData);
    void exited.then((how) =>
      reject(new Error(`server ended (${how}) before listening: ${stderr.trim() || stdout.slice(-2000)}`)),
    );
  });
}

export interface OpenDatabase {
  /** A `pg` URL on the data. */
  url: string;
  close(): Promise<void>;
}

/** A `pg` URL on `db` while no server runs on it (see above); close it before a server opens the folder again. */
export function openDatabase(db: CrashDatabase): Promise<OpenDatabase> {
  if (db.kind === 'postgres') {
    return Promise.resolve({ url: db.url, close: () => Promise.resolve() });
  }
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'test', 'support', 'embedded-host.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, EMBEDDED_DIR: db.dataDir },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  return new Promise<OpenDatabase>((resolve, reject) => {
    child.once('message', (message: { type: string; url?: string }) => {
      if (message.type !== 'ready' || !message.url) {
        reject(new Error(`embedded host: ${JSON.stringify(message)}`));
        return;
      }
      resolve({
        url: message.url,
        close: async () => {
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
    void exited.then((how) => reject(new Error(`embedded host ended (${how}) before ready: ${stderr}`)));
  });
}
