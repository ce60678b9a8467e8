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
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { tracedBatches } from '../../support/billing-run-process';
import { startThrowawayCluster, type ThrowawayCluster } from '../../support/pg-cluster';
import { tracedApplies } from '../../support/provisioning-process';
import { ROOT, SERVER_DEFAULTS, type ServerChild, startServer, traced } from '../../support/server-process';
import { pipeChildLogs } from './log-capture';

const PRELOADS = [
  join(ROOT, 'test', 'support', 'provisioning-process.ts'),
  join(ROOT, 'test', 'support', 'billing-run-process.ts'),
  join(__dirname, 'instances-webhook-trace.ts'),
];
const SENT = /^webhook-test sent (\S+) (\S+)$/;
const BOOT_TIMEOUT_MS = 90_000;

export type Instance = ServerChild & {
  name: string;
  /** The order ids this process' radius-sql driver applied, in order, repeats kept. */
  applied(): string[];
  /** The subscribers of each bill run batch of the held tenant this process wrote, one array per batch. */
  batches(): string[][];
  /** Each webhook this process sent, in order: the event id (webhook-id) and the address. */
  sent(): { eventId: string; url: string }[];
};

/**
 * One instance on `databaseUrl` (and the REDIS_URL of the jest process, if any) with `env` over quiet defaults
 * (LOG_LEVEL info: the run's log capture reads it). Resolves once it answers /health/live; rejects with its output
 * when it ends, or does not listen, first. Its `stop()` is a SIGTERM, then a SIGKILL if it is still there 15 s later.
 */
export async function startInstance(
  name: string,
  databaseUrl: string,
  env: Record<string, string>,
): Promise<Instance> {
  const traces = {
    applied: (): string[] => [],
    batches: (): string[][] => [],
    sent: (): { eventId: string; url: string }[] => [],
  };
  const server = await startServer({
    name,
    env: { ...SERVER_DEFAULTS, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', ...env },
    preloads: PRELOADS,
    bootTimeoutMs: BOOT_TIMEOUT_MS,
    onSpawn: (spawned) => {
      pipeChildLogs(name, spawned.child);
      traces.applied = tracedApplies(spawned);
      traces.batches = tracedBatches(spawned);
      traces.sent = traced(spawned, SENT, (match) => ({ eventId: match[1], url: match[2] }));
    },
  });
  return Object.assign(server, { name }, traces);
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
