/**
 * Server processes for the several-instances spec (issue 18 item 5): `src/main.ts` in its own Node process, its
 * output captured in the run's logs (log-capture.ts), preloaded with the two driver traces the crash suites use:
 *
 * - test/support/provisioning-process.ts (TEST_PROVISIONING_HOLD `<ms>:<tenant slug>`): every radius-sql `apply`
 *   prints `provisioning-test applied <order id>`, and an order of that tenant is held `ms` before it is recorded;
 * - test/support/billing-run-process.ts (TEST_BILLING_RUN_HOLD `<ms>:<tenant slug>`): every bill run batch of that
 *   tenant prints `billing-test batch <subscriber ids>` once its invoices are inserted, and holds its transaction open
 *   `ms` before it commits.
 *
 * - instances-webhook-trace.ts (TEST_WEBHOOK_TRACE=1): every webhook sent prints `webhook-test sent <webhook-id> <url>`.
 *
 * Each trace patches nothing unless its variable is set, so the lines tell which process carried out which order,
 * which batch and which delivery. Nothing of src/ changes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import request from 'supertest';
import { startThrowawayCluster, type ThrowawayCluster } from '../../support/provisioning-process';
import { BOOTSTRAP_TOKEN } from '../../support/test-app';
import { pipeChildLogs } from './log-capture';

const ROOT = join(__dirname, '..', '..', '..');
const PRELOADS = [
  join(ROOT, 'test', 'support', 'provisioning-process.ts'),
  join(ROOT, 'test', 'support', 'billing-run-process.ts'),
  join(__dirname, 'instances-webhook-trace.ts'),
];
const LISTENING = /listening on (http:\/\/\S+)/;
const APPLIED = /^provisioning-test applied (\S+)$/gm;
const BATCH = /^billing-test batch (\S+)$/gm;
const SENT = /^webhook-test sent (\S+) (\S+)$/gm;
const BOOT_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 15_000;

export interface Instance {
  name: string;
  url: string;
  child: ChildProcess;
  /** Resolves once the process has gone, with its signal (or exit code). */
  exited: Promise<string>;
  /** The order ids this process' radius-sql driver applied, in order, repeats kept. */
  applied(): string[];
  /** The subscribers of each bill run batch of the held tenant this process wrote, one array per batch. */
  batches(): string[][];
  /** Each webhook this process sent, in order: the event id (webhook-id) and the address. */
  sent(): { eventId: string; url: string }[];
  /** SIGTERM (a clean shutdown), then SIGKILL if it is still there after STOP_TIMEOUT_MS; resolves with how it ended. */
  stop(): Promise<string>;
}

/**
 * One instance on `databaseUrl` (and the REDIS_URL of the jest process, if any) with `env` over quiet defaults
 * (LOG_LEVEL info: the run's log capture reads it). Resolves once it answers /health/live; rejects with its output
 * when it ends, or does not listen, first.
 */
export function startInstance(
  name: string,
  databaseUrl: string,
  env: Record<string, string>,
): Promise<Instance> {
  const preloads = PRELOADS.flatMap((file) => ['-r', file]);
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', ...preloads, join(ROOT, 'src', 'main.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
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
  pipeChildLogs(name, child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  const instance: Instance = {
    name,
    url: '',
    child,
    exited,
    applied: () => [...stdout.matchAll(APPLIED)].map((match) => match[1]),
    batches: () => [...stdout.matchAll(BATCH)].map((match) => match[1].split(',')),
    sent: () => [...stdout.matchAll(SENT)].map((match) => ({ eventId: match[1], url: match[2] })),
    stop: async () => {
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => running() && child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
  return new Promise<Instance>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not listen within ${BOOT_TIMEOUT_MS} ms: ${stderr.trim().slice(-2000)}`));
    }, BOOT_TIMEOUT_MS);
    const onData = () => {
      const match = LISTENING.exec(stdout);
      if (!match) {
        return;
      }
      child.stdout?.off('data', onData);
      clearTimeout(timer);
      instance.url = match[1];
      request(instance.url)
        .get('/health/live')
        .then(() => resolve(instance), reject);
    };
    child.stdout?.on('data', onData);
    void exited.then((how) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${name} ended (${how}) before listening: ${(stderr.trim() || stdout.trim()).slice(-2000)}`,
        ),
      );
    });
  });
}

/**
 * Boots every instance at once; those that came up are pushed onto `started` (so afterAll stops them) before the
 * first failure, if any, is thrown.
 */
export async function startInstances(boots: Promise<Instance>[], started: Instance[]): Promise<Instance[]> {
  const settled = await Promise.allSettled(boots);
  for (const boot of settled) {
    if (boot.status === 'fulfilled') {
      started.push(boot.value);
    }
  }
  const failed = settled.find((boot) => boot.status === 'rejected');
  if (failed) {
    throw failed.reason;
  }
  return started;
}

/**
 * The Postgres several instances share: the suite's DATABASE_URL, or, on the embedded database (one process at a time),
 * a throw-away cluster on a port drawn from [low, high) that the caller stops.
 */
export async function databaseForInstances(
  low: number,
  high: number,
): Promise<{ url: string; cluster?: ThrowawayCluster }> {
  if (process.env.TEST_EMBEDDED_DATABASE === 'true') {
    const cluster = await startThrowawayCluster(randomInt(low, high));
    return { url: cluster.url, cluster };
  }
  if (!process.env.DATABASE_URL) {
    throw new Error('DATABASE_URL is not set: the global setup provides it');
  }
  return { url: process.env.DATABASE_URL };
}
