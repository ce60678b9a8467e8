/**
 * `billing.mixed` (issue #35 target 2): a bill run of 100,000 subscribers (--mixed-subscribers; bench/billing-run.ts'
 * tenant, taxes, pending charges and auto-apply) must never block the API. The same mixed load (GET /subscribers/{id}
 * and POST /subscribers in turn, the cases of bench/cases.ts, at a fixed rate: --mixed-rate requests/s over 16
 * connections) runs twice: idle, for --duration seconds, then from the run's POST until it completes. Reported: the
 * API's p99 while the run goes against its idle p99 just before (target ≤ 3), with p50, the requests served, the
 * run's own subscribers/s and the server's peak RSS.
 *
 * The load is fixed-rate, not saturating: at saturation a p99 is the queue's length, which any work beside the API
 * (a bill run, a sweep, a neighbour on the machine) lengthens in proportion to the CPU it takes, blocking or not. At a
 * rate the server serves with room to spare, the p99 shows what a client waits for: the event loop held by a batch's
 * computation or serialisation, the pool taken, locks.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { Client } from 'pg';
import { api, AS_OF, seedBillingTenant } from './billing-run';
import { type BenchCase, BOOTSTRAP_TOKEN } from './cases';
import type { ServerUnderTest } from './processes';
import { log } from './report';

export const BILLING_MIXED_CASE = 'billing.mixed';
/** Connections of the mixed load; the rate, not these, sets its pace. */
const CONNECTIONS = 16;

export interface LoadFigures {
  seconds: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  non2xx: number;
}

export interface BillingMixedResult {
  subscribers: number;
  ratePerS: number;
  connections: number;
  idle: LoadFigures;
  duringRun: LoadFigures;
  /** duringRun.p99Ms / idle.p99Ms (target ≤ 3). */
  ratio: number;
  runSeconds: number;
  subscribersPerS: number;
  peakRssMb: number;
  met: { ratio: boolean };
}

/** The load's options: GET by id and POST, in turn on each connection, at `rate` requests/s in all. */
function loadOptions(
  server: ServerUnderTest,
  get: BenchCase,
  create: BenchCase,
  rate: number,
  durationS: number,
): autocannon.Options {
  const request = (each: BenchCase): autocannon.Request => ({
    method: each.method,
    setupRequest: (req) => {
      const made = each.next!();
      return { ...req, path: made.path, body: made.body, headers: { ...req.headers, ...made.headers } };
    },
  });
  return {
    url: server.baseUrl,
    connections: CONNECTIONS,
    overallRate: rate,
    duration: durationS,
    timeout: 10,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${BOOTSTRAP_TOKEN}` },
    requests: [request(get), request(create)],
  };
}

function figuresOf(result: autocannon.Result): LoadFigures {
  const seconds = result.duration;
  return {
    seconds,
    requests: result.requests.total,
    rps: result.requests.total / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** Runs the load until `until` resolves (or for its duration), answering autocannon's result. */
function loadUntil(options: autocannon.Options, until?: Promise<unknown>): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error: Error | null, result: autocannon.Result) =>
      error ? reject(error) : resolve(result),
    );
    void until?.finally(() => instance.stop());
  });
}

export async function benchBillingMixed(
  db: Client,
  server: ServerUnderTest,
  cases: { get: BenchCase; create: BenchCase },
  total: number,
  rate: number,
  durationS: number,
  resultsDir: string,
  stamp: string,
): Promise<BillingMixedResult> {
  log(
    `\nbilling.mixed: seeding ${total.toLocaleString('en-US')} subscribers with one active service each; ` +
      `the API under ${rate} req/s (GET /subscribers/{id} and POST /subscribers in turn, ${CONNECTIONS} connections)…`,
  );
  const tenantId = await seedBillingTenant(db, server, total);
  // Warm-up, then the idle measurement right before the run.
  await loadUntil(loadOptions(server, cases.get, cases.create, rate, Math.min(2, durationS)));
  const idle = figuresOf(await loadUntil(loadOptions(server, cases.get, cases.create, rate, durationS)));
  server.rss.window();
  const run = await api(server, '/billing-runs', {
    method: 'POST',
    tenant: tenantId,
    body: JSON.stringify({ as_of: AS_OF }),
  });
  const finished = (async () => {
    let current = run;
    while (current.status === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 250));
      current = await api(server, `/billing-runs/${run.id as string}`, { tenant: tenantId });
    }
    return current;
  })();
  const during = figuresOf(
    await loadUntil(loadOptions(server, cases.get, cases.create, rate, 24 * 3600), finished),
  );
  const current = await finished;
  const peakRssMb = server.rss.window();
  if (current.status !== 'completed' || current.subscribers_billed !== total) {
    throw new Error(`billing.mixed: the run did not bill everyone: ${JSON.stringify(current)}`);
  }
  const runSeconds =
    (Date.parse(current.completed_at as string) - Date.parse(current.created_at as string)) / 1000;
  const ratio = idle.p99Ms > 0 ? during.p99Ms / idle.p99Ms : Infinity;
  const result: BillingMixedResult = {
    subscribers: total,
    ratePerS: rate,
    connections: CONNECTIONS,
    idle,
    duringRun: during,
    ratio,
    runSeconds,
    subscribersPerS: total / runSeconds,
    peakRssMb,
    met: { ratio: ratio <= 3 },
  };
  const row = (name: string, f: LoadFigures) =>
    `| ${name} | ${f.seconds.toFixed(0)} | ${f.requests} | ${f.rps.toFixed(0)} | ${f.p50Ms} | ${f.p99Ms} | ${f.maxMs} | ${f.errors + f.non2xx} |`;
  log(
    [
      '| billing.mixed: the API | s | requests | req/s | p50 ms | p99 ms | max ms | errors + non-2xx |',
      '|:--|--:|--:|--:|--:|--:|--:|--:|',
      row('idle, just before', idle),
      row(`during the run of ${total.toLocaleString('en-US')}`, during),
    ].join('\n'),
  );
  log(
    `billing.mixed: p99 during the run / idle p99 = ${ratio.toFixed(2)} (target ≤ 3: ${result.met.ratio ? 'met' : 'NOT met'}); ` +
      `the run billed ${result.subscribersPerS.toFixed(0)} subscribers/s beside the load (${runSeconds.toFixed(1)} s); ` +
      `server peak RSS ${peakRssMb.toFixed(0)} MB`,
  );
  writeFileSync(join(resultsDir, `billing-mixed-${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
