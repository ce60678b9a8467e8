import autocannon from 'autocannon';
import { type BenchCase, BOOTSTRAP_TOKEN } from './cases';
import type { Options } from './options';
import type { DatabaseObserver } from './db-observer';
import type { EmbeddedDatabase, ServerUnderTest } from './processes';
import { postgresCpuMs, processCpuMs } from './process-stats';
import { type CpuSnapshot, cpuUse, log, type Measurement, measurementOf } from './report';

/**
 * The processes that serve each target: their URLs for the load, their pids for the CPU measurement. The first one
 * (`baseUrl`, `pid`) takes the single requests (probes, statement counts); the server under test has more than one
 * with --instances.
 */
export type ServedBy = Record<
  BenchCase['target'],
  { pid: number; baseUrl: string; pids: number[]; baseUrls: string[] }
>;

function cannonOptions(
  benchCase: BenchCase,
  baseUrls: string[],
  connections: number,
  durationS: number,
): autocannon.Options {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (benchCase.target === 'app') {
    headers.authorization = `Bearer ${BOOTSTRAP_TOKEN}`;
  }
  const urls = baseUrls.map((baseUrl) => baseUrl + (benchCase.path ?? ''));
  const options: autocannon.Options = {
    // Several instances (--instances): autocannon (9.x) takes an array of URLs and opens its connections over them
    // round-robin (connection i to urls[i % n]); no proxy, so nothing extra sits in the path or on the CPU. Its
    // typings only know a string.
    url: urls.length === 1 ? urls[0] : (urls as unknown as string),
    method: benchCase.method,
    connections,
    duration: durationS,
    timeout: 10,
    headers,
  };
  const next = benchCase.next;
  if (next) {
    options.requests = [
      {
        method: benchCase.method,
        setupRequest: (request) => {
          const made = next();
          return {
            ...request,
            path: made.path,
            body: made.body,
            headers: { ...request.headers, ...made.headers },
          };
        },
      },
    ];
  }
  return options;
}

function fire(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error: Error | null, result: autocannon.Result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

/** One request the way a client sends it, with the status checked: every case must answer 2xx before it is loaded. */
export async function send(
  benchCase: BenchCase,
  baseUrl: string,
): Promise<{ status: number; text: string; path: string }> {
  const made = benchCase.next ? benchCase.next() : { path: benchCase.path! };
  const headers: Record<string, string> = { 'content-type': 'application/json', ...made.headers };
  if (benchCase.target === 'app') {
    headers.authorization = `Bearer ${BOOTSTRAP_TOKEN}`;
  }
  const response = await fetch(baseUrl + made.path, { method: benchCase.method, headers, body: made.body });
  return { status: response.status, text: await response.text(), path: made.path };
}

export async function probe(benchCase: BenchCase, baseUrl: string): Promise<void> {
  const { status, text, path } = await send(benchCase, baseUrl);
  if (status >= 300) {
    throw new Error(`${benchCase.name}: ${benchCase.method} ${path} answered ${status}: ${text}`);
  }
}

/**
 * Every case under load at every connection count, after its warm-up: throughput, latency, memory and CPU, and on
 * Postgres (`observer`) the lock waits and, with --own-cluster, the statements of the window (bench/db-observer.ts).
 */
export async function measure(
  cases: BenchCase[],
  options: Pick<Options, 'connections' | 'durationS' | 'warmupS'>,
  servedBy: ServedBy,
  server: ServerUnderTest,
  embedded: EmbeddedDatabase | null,
  observer: DatabaseObserver | null = null,
): Promise<Measurement[]> {
  const urlsOf = (c: BenchCase) => servedBy[c.target].baseUrls;
  const measurements: Measurement[] = [];
  const total = cases.length * options.connections.length;
  log(`\n${total} measurements of ${options.durationS} s, each after ${options.warmupS} s of warm-up:`);
  const cpuNow = (c: BenchCase): CpuSnapshot => {
    const usage = process.cpuUsage();
    return {
      server: servedBy[c.target].pids.reduce((sum, pid) => sum + processCpuMs(pid), 0),
      database: embedded
        ? new Map<number, number>([[embedded.pid, processCpuMs(embedded.pid)]])
        : (observer?.cpuMs() ?? postgresCpuMs()),
      loadGenerator: (usage.user + usage.system) / 1000,
      at: Date.now(),
    };
  };
  for (const connections of options.connections) {
    for (const c of cases) {
      await fire(cannonOptions(c, urlsOf(c), connections, options.warmupS));
      server.rss.window();
      await observer?.start();
      const before = cpuNow(c);
      const result = await fire(cannonOptions(c, urlsOf(c), connections, options.durationS));
      const cpu = cpuUse(before, cpuNow(c), result.requests.total);
      const database = (await observer?.stop(result.requests.total)) ?? null;
      const measurement = measurementOf(
        c.name,
        c.label,
        connections,
        result,
        server.rss.window(),
        cpu,
        database,
      );
      const settleStarted = Date.now();
      await c.settle?.();
      measurements.push(measurement);
      let failures = '';
      if (measurement.errors + measurement.timeouts + measurement.non2xx > 0) {
        // One more request the same way, to show what the failures say (it may well succeed by now).
        const sample = await send(c, servedBy[c.target].baseUrl);
        measurement.failureSample = `${sample.status} ${sample.text.slice(0, 300)}`;
        failures =
          ` FAILURES errors=${measurement.errors} timeouts=${measurement.timeouts} ` +
          `codes=${JSON.stringify(measurement.statusCodes)}; one more request now: ${measurement.failureSample}`;
      }
      log(
        `  ${c.label} @${connections}: ${measurement.rps.toFixed(0)} req/s, p50 ${measurement.latencyMs.p50} ms, ` +
          `p99 ${measurement.latencyMs.p99} ms, CPU cores server ${cpu.serverCores.toFixed(2)} ` +
          `db ${cpu.databaseCores.toFixed(2)} load-generator ${cpu.loadGeneratorCores.toFixed(2)}` +
          (database ? `, db backends waiting ${(database.lockWaits.waitingShare * 100).toFixed(0)} %` : '') +
          (database?.statements
            ? `, ${database.statements.statementsPerRequest.toFixed(1)} statements/req`
            : '') +
          failures +
          (c.settle ? `; settled ${((Date.now() - settleStarted) / 1000).toFixed(1)} s after` : ''),
      );
    }
  }
  return measurements;
}
