/**
 * `npm run bench [-- options]`: the hot paths against baselines measured in the same run (docs/performance.md).
 *
 * Baselines, in the order they run, each right before what is compared with it:
 *   (a) baseline.insert     bench/baseline-server.ts: bare node:http + the create's single-row pg INSERT (the floor of
 *                           the create path)
 *   (c) baseline.framework  bench/framework-floor-server.ts: a bare Nest + Express app with the stock ValidationPipe,
 *                           the app's CreateSubscriberDto and the same INSERT (the floor of the app's own stack)
 *   (b) health.live         GET /health/live of the server under test (the framework's ceiling)
 * Cases against them: subscribers.create (+ _idempotent), subscribers.get, subscribers.list_first/_deep,
 * events.list_first/_deep, transactions.create, transactions.allocate.
 *
 * The database is wiped at the start: BENCH_DATABASE_URL, else database `bench` on DATABASE_URL's server, else
 * postgres://postgres@127.0.0.1:5432/bench (created when missing).
 *
 *   --embedded          the embedded database (PGlite, in a process of its own) instead
 *   --duration <s>      seconds per measurement (10)
 *   --warmup <s>        seconds of unrecorded load before each measurement (2)
 *   --connections <l>   comma-separated connection counts (32,64)
 *   --rows <n>          subscribers and events to seed (1,000,000; 100,000 with --embedded or --quick)
 *   --quick             smoke run: 3 s, 1 s warm-up, 64 connections, fewer cases, 100,000 rows
 *   --only <l>          comma-separated case names to measure (baselines are always kept)
 *   --reuse             keep an already seeded bench database (skip the reset and the seeding)
 *   --cpu-prof          profile the server under test (.cpuprofile under bench/results/profiles/)
 *
 * Speed is never asserted in the test suite: every figure here is a ratio against a baseline of the same run.
 */
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  type BaselineServer,
  type EmbeddedDatabase,
  postgresCpuMs,
  processCpuMs,
  productionNodeFlags,
  ROOT,
  type ServerUnderTest,
  startBaseline,
  startEmbeddedDatabase,
  startServer,
} from './processes';
import type { StatementStat } from './query-counter';
import {
  type CpuSnapshot,
  cpuUse,
  type Measurement,
  measurementOf,
  measurementTable,
  type QueryCount,
  queryTable,
  type Ratio,
  ratioTable,
  shortStatement,
  type Target,
  targetTable,
} from './report';
import {
  analyze,
  type BillingSeed,
  countRows,
  cursorAt,
  ensureDatabase,
  loadBillingSeed,
  resetSchema,
  sampleSubscriberIds,
  seedBilling,
  seedEvents,
  seedSubscribers,
  SEED_CURRENCY,
  type SubscriberSeed,
  tenantIdOf,
  withSecondaryIndexesDropped,
} from './seed';

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/bench';
const BOOTSTRAP_TOKEN = 'isk_bench_0123456789abcdefghijklmnopqrstuvwxyz';
const BILLING_PAIRS = 2_000;
const GET_IDS = 5_000;
/** Sequential requests per case when counting statements. */
const COUNT_REQUESTS = 20;
/** How deep into the list the deep cursor points, as a share of the seeded rows (900,000 of 1,000,000). */
const DEEP_SHARE = 0.9;

interface Options {
  embedded: boolean;
  durationS: number;
  warmupS: number;
  connections: number[];
  rows: number;
  quick: boolean;
  only: string[] | null;
  reuse: boolean;
  cpuProf: boolean;
  databaseUrl: string;
}

/**
 * The bench wipes its database, so it never uses DATABASE_URL's own database: BENCH_DATABASE_URL as given, else the
 * server of DATABASE_URL with the database `bench`, else the local default.
 */
function benchDatabaseUrl(): string {
  if (process.env.BENCH_DATABASE_URL) return process.env.BENCH_DATABASE_URL;
  if (!process.env.DATABASE_URL) return DEFAULT_DATABASE_URL;
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = '/bench';
  return url.toString();
}

function parseOptions(argv: string[]): Options {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`Unexpected argument "${arg}"`);
    const [name, inline] = arg.slice(2).split('=', 2);
    if (['embedded', 'quick', 'reuse', 'cpu-prof'].includes(name)) {
      flags.set(name, true);
    } else if (['duration', 'warmup', 'connections', 'rows', 'only'].includes(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new Error(`--${name} needs a value`);
      flags.set(name, value);
    } else {
      throw new Error(`Unknown option --${name}`);
    }
  }
  const text = (name: string) => {
    const value = flags.get(name);
    return typeof value === 'string' ? value : undefined;
  };
  const positive = (name: string, fallback: number) => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw.replace(/[_,]/g, ''));
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
    return value;
  };
  const quick = flags.has('quick');
  const embedded = flags.has('embedded');
  return {
    embedded,
    quick,
    durationS: positive('duration', quick ? 3 : 10),
    warmupS: positive('warmup', quick ? 1 : 2),
    connections: (text('connections') ?? (quick ? '64' : '32,64')).split(',').map((c) => {
      const value = Number(c);
      if (!Number.isInteger(value) || value < 1) throw new Error('--connections must list whole numbers');
      return value;
    }),
    rows: Math.round(positive('rows', quick || embedded ? 100_000 : 1_000_000)),
    only: text('only')?.split(',') ?? null,
    reuse: flags.has('reuse'),
    cpuProf: flags.has('cpu-prof'),
    databaseUrl: benchDatabaseUrl(),
  };
}

const log = (line: string) => process.stdout.write(`${line}\n`);

interface NextRequest {
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

interface BenchCase {
  name: string;
  label: string;
  /** The process that serves it: the server under test, baseline (a) or baseline (c). */
  target: 'app' | 'baseline' | 'floor';
  method: 'GET' | 'POST';
  /** Kept by --quick. */
  quick: boolean;
  /** A fixed path, or a generator for requests that differ (unique bodies, keys, ids). */
  path?: string;
  next?: () => NextRequest;
  /** For the query count: its statements per request, and the table whose SELECT to EXPLAIN. */
  countQueries: boolean;
  explain?: 'subscribers' | 'events';
}

interface Fixtures {
  tenantId: string;
  getIds: string[];
  subscribersDeepCursor: string;
  eventsDeepCursor: string;
  billing: BillingSeed;
}

function buildCases(fixtures: Fixtures): BenchCase[] {
  const tag = Date.now().toString(36);
  let seq = 0;
  const subscriberBody = () => {
    const n = ++seq;
    return JSON.stringify({
      external_id: `bench-${tag}-${n}`,
      full_name: `Bench Subscriber ${n}`,
      email: `bench-${tag}-${n}@example.net`,
      phone: '+14155550123',
      status: 'active',
      address: { line1: '1 Fiber Way', city: 'Springfield', state: 'IL', postal_code: '62701' },
      metadata: { plan: 'fiber-500' },
    });
  };
  const { getIds, billing } = fixtures;
  return [
    {
      name: 'baseline.insert',
      label: 'baseline (a): node:http + pg INSERT',
      target: 'baseline',
      method: 'POST',
      quick: true,
      countQueries: false,
      next: () => ({ path: '/', body: subscriberBody() }),
    },
    {
      name: 'baseline.framework',
      label: 'baseline (c): Nest + Express + ValidationPipe + pg INSERT',
      target: 'floor',
      method: 'POST',
      quick: true,
      countQueries: false,
      next: () => ({ path: '/api/v1/subscribers', body: subscriberBody() }),
    },
    {
      name: 'subscribers.create',
      label: 'POST /subscribers',
      target: 'app',
      method: 'POST',
      quick: true,
      countQueries: true,
      next: () => ({ path: '/api/v1/subscribers', body: subscriberBody() }),
    },
    {
      name: 'subscribers.create_idempotent',
      label: 'POST /subscribers + X-Idempotency-Key',
      target: 'app',
      method: 'POST',
      quick: false,
      countQueries: true,
      next: () => ({
        path: '/api/v1/subscribers',
        body: subscriberBody(),
        headers: { 'x-idempotency-key': `bench-${tag}-${seq}` },
      }),
    },
    {
      name: 'health.live',
      label: 'GET /health/live (baseline b)',
      target: 'app',
      method: 'GET',
      quick: true,
      countQueries: true,
      path: '/health/live',
    },
    {
      name: 'subscribers.get',
      label: 'GET /subscribers/{id}',
      target: 'app',
      method: 'GET',
      quick: true,
      countQueries: true,
      explain: 'subscribers',
      next: () => ({ path: `/api/v1/subscribers/${getIds[++seq % getIds.length]}` }),
    },
    {
      name: 'subscribers.list_first',
      label: 'GET /subscribers?limit=100 (first page)',
      target: 'app',
      method: 'GET',
      quick: true,
      countQueries: true,
      explain: 'subscribers',
      path: '/api/v1/subscribers?limit=100',
    },
    {
      name: 'subscribers.list_deep',
      label: 'GET /subscribers?limit=100 (deep cursor)',
      target: 'app',
      method: 'GET',
      quick: true,
      countQueries: true,
      explain: 'subscribers',
      path: `/api/v1/subscribers?limit=100&starting_after=${fixtures.subscribersDeepCursor}`,
    },
    {
      name: 'events.list_first',
      label: 'GET /events?limit=100 (first page)',
      target: 'app',
      method: 'GET',
      quick: false,
      countQueries: true,
      explain: 'events',
      path: '/api/v1/events?limit=100',
    },
    {
      name: 'events.list_deep',
      label: 'GET /events?limit=100 (deep cursor)',
      target: 'app',
      method: 'GET',
      quick: false,
      countQueries: true,
      explain: 'events',
      path: `/api/v1/events?limit=100&starting_after=${fixtures.eventsDeepCursor}`,
    },
    {
      name: 'transactions.create',
      label: 'POST /transactions (payment)',
      target: 'app',
      method: 'POST',
      quick: false,
      countQueries: true,
      next: () => {
        const n = ++seq;
        return {
          path: '/api/v1/transactions',
          body: JSON.stringify({
            subscriber_id: getIds[n % getIds.length],
            kind: 'payment',
            source: 'external',
            amount: 4999,
            currency: SEED_CURRENCY,
            external_id: `bench-${tag}-${n}`,
            method: 'card',
          }),
        };
      },
    },
    {
      name: 'transactions.allocate',
      label: 'POST /transactions/{id}/allocate',
      target: 'app',
      method: 'POST',
      quick: false,
      countQueries: true,
      next: () => {
        const pair = billing.pairs[++seq % billing.pairs.length];
        return {
          path: `/api/v1/transactions/${pair.transactionId}/allocate`,
          body: JSON.stringify({ allocations: [{ invoice_id: pair.invoiceId, amount: 1 }] }),
        };
      },
    },
  ];
}

function cannonOptions(
  benchCase: BenchCase,
  baseUrl: string,
  connections: number,
  durationS: number,
): autocannon.Options {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (benchCase.target === 'app') headers.authorization = `Bearer ${BOOTSTRAP_TOKEN}`;
  const options: autocannon.Options = {
    url: baseUrl + (benchCase.path ?? ''),
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
async function send(
  benchCase: BenchCase,
  baseUrl: string,
): Promise<{ status: number; text: string; path: string }> {
  const made = benchCase.next ? benchCase.next() : { path: benchCase.path! };
  const headers: Record<string, string> = { 'content-type': 'application/json', ...made.headers };
  if (benchCase.target === 'app') headers.authorization = `Bearer ${BOOTSTRAP_TOKEN}`;
  const response = await fetch(baseUrl + made.path, { method: benchCase.method, headers, body: made.body });
  return { status: response.status, text: await response.text(), path: made.path };
}

async function probe(benchCase: BenchCase, baseUrl: string): Promise<void> {
  const { status, text, path } = await send(benchCase, baseUrl);
  if (status >= 300) {
    throw new Error(`${benchCase.name}: ${benchCase.method} ${path} answered ${status}: ${text}`);
  }
}

async function countQueries(
  server: ServerUnderTest,
  benchCase: BenchCase,
): Promise<{
  count: QueryCount;
  stats: StatementStat[];
}> {
  await server.queryStats(true);
  for (let i = 0; i < COUNT_REQUESTS; i++) await probe(benchCase, server.baseUrl);
  // The webhook worker polls on its own clock; its statements are not the request's.
  const stats = (await server.queryStats(true)).filter((stat) => !/SKIP LOCKED/i.test(stat.text));
  const total = stats.reduce((sum, stat) => sum + stat.count, 0);
  return {
    count: {
      case: benchCase.name,
      label: benchCase.label,
      requests: COUNT_REQUESTS,
      perRequest: total / COUNT_REQUESTS,
      statements: stats.map((stat) => ({ text: stat.text, perRequest: stat.count / COUNT_REQUESTS })),
    },
    stats,
  };
}

interface Explained {
  case: string;
  sql: string;
  params: unknown[];
  plan: string;
  indexes: string[];
}

async function explain(db: Client, benchCase: BenchCase, stats: StatementStat[]): Promise<Explained | null> {
  const table = benchCase.explain;
  const statement = stats.find(
    (stat) => stat.text.startsWith('SELECT') && stat.text.includes(`FROM "${table}"`),
  );
  if (!statement) return null;
  const params = statement.params ?? [];
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
    params,
  );
  const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
  const indexes = [...new Set([...plan.matchAll(/using "?(\w+)"?/g)].map((match) => match[1]))];
  return { case: benchCase.name, sql: statement.text, params, plan, indexes };
}

function ratio(
  name: string,
  connections: number,
  numerator: Measurement | undefined,
  denominator: Measurement | undefined,
  pick: (m: Measurement) => number,
  target: Ratio['target'],
  what: string,
): Ratio | null {
  if (!numerator || !denominator || pick(denominator) === 0) return null;
  const value = pick(numerator) / pick(denominator);
  const met = target ? (target.op === '>=' ? value >= target.bound : value <= target.bound) : null;
  return {
    name,
    connections,
    value,
    target,
    met,
    detail: `${what}: ${pick(numerator).toFixed(1)} / ${pick(denominator).toFixed(1)}`,
  };
}

function ratiosOf(measurements: Measurement[], connections: number[]): Ratio[] {
  const ratios: Ratio[] = [];
  const rps = (m: Measurement) => m.rps;
  const p99 = (m: Measurement) => m.latencyMs.p99;
  const p50 = (m: Measurement) => m.latencyMs.p50;
  for (const c of connections) {
    const find = (name: string) => measurements.find((m) => m.case === name && m.connections === c);
    const base = find('baseline.insert');
    const floor = find('baseline.framework');
    const live = find('health.live');
    const candidates = [
      ratio(
        'create rps / baseline (a) rps',
        c,
        find('subscribers.create'),
        base,
        rps,
        { op: '>=', bound: 0.5 },
        'req/s',
      ),
      ratio(
        'create p99 / baseline (a) p99',
        c,
        find('subscribers.create'),
        base,
        p99,
        { op: '<=', bound: 4 },
        'p99 ms',
      ),
      ratio('create rps / floor (c) rps', c, find('subscribers.create'), floor, rps, null, 'req/s'),
      ratio('floor (c) rps / baseline (a) rps', c, floor, base, rps, null, 'req/s'),
      ratio('floor (c) p99 / baseline (a) p99', c, floor, base, p99, null, 'p99 ms'),
      ratio(
        'create+key rps / baseline (a) rps',
        c,
        find('subscribers.create_idempotent'),
        base,
        rps,
        null,
        'req/s',
      ),
      ratio(
        'create+key p99 / baseline (a) p99',
        c,
        find('subscribers.create_idempotent'),
        base,
        p99,
        null,
        'p99 ms',
      ),
      ratio(
        'get by id rps / health/live rps',
        c,
        find('subscribers.get'),
        live,
        rps,
        { op: '>=', bound: 0.6 },
        'req/s',
      ),
      ratio(
        'subscribers deep p50 / first p50',
        c,
        find('subscribers.list_deep'),
        find('subscribers.list_first'),
        p50,
        { op: '<=', bound: 1.3 },
        'p50 ms',
      ),
      ratio(
        'events deep p50 / first p50',
        c,
        find('events.list_deep'),
        find('events.list_first'),
        p50,
        { op: '<=', bound: 1.3 },
        'p50 ms',
      ),
      ratio('transactions rps / baseline (a) rps', c, find('transactions.create'), base, rps, null, 'req/s'),
      ratio('allocate rps / baseline (a) rps', c, find('transactions.allocate'), base, rps, null, 'req/s'),
    ];
    for (const candidate of candidates) if (candidate) ratios.push(candidate);
  }
  return ratios;
}

function targetsOf(
  ratios: Ratio[],
  measurements: Measurement[],
  peakRssMb: number,
  embedded: boolean,
): Target[] {
  const at64 = (name: string) => ratios.find((r) => r.name === name && r.connections === 64);
  const fromRatio = (label: string, name: string): Target => {
    const r = at64(name);
    return {
      name: label,
      bound: r?.target ? `${r.target.op} ${r.target.bound}` : '—',
      value: r ? r.value.toFixed(2) : 'not measured',
      met: embedded || !r ? null : r.met,
    };
  };
  const app = measurements.filter((m) => !m.case.startsWith('baseline'));
  const errors = measurements.reduce((sum, m) => sum + m.errors + m.timeouts, 0);
  const fivexx = measurements.reduce((sum, m) => sum + m.status5xx, 0);
  const non2xx = app.reduce((sum, m) => sum + m.non2xx, 0);
  return [
    fromRatio('create subscriber req/s ≥ 50 % of baseline (a)', 'create rps / baseline (a) rps'),
    fromRatio('create subscriber p99 ≤ 4× baseline (a) p99', 'create p99 / baseline (a) p99'),
    fromRatio('get by id req/s ≥ 60 % of GET /health/live', 'get by id rps / health/live rps'),
    fromRatio('subscribers deep page p50 ≤ 1.3× first page p50', 'subscribers deep p50 / first p50'),
    fromRatio('events deep page p50 ≤ 1.3× first page p50', 'events deep p50 / first p50'),
    { name: 'errors + timeouts, whole run', bound: '= 0', value: String(errors), met: errors === 0 },
    { name: '5xx, whole run', bound: '= 0', value: String(fivexx), met: fivexx === 0 },
    { name: 'non-2xx (app), whole run', bound: '= 0', value: String(non2xx), met: non2xx === 0 },
    {
      name: 'server peak RSS (VmHWM)',
      bound: '≤ 300 MB',
      value: `${peakRssMb.toFixed(0)} MB`,
      met: peakRssMb <= 300,
    },
  ];
}

async function prepareDatabase(
  db: Client,
  options: Options,
): Promise<{ tenantId: string; subscriberSeed: SubscriberSeed; billing: BillingSeed; seededRows: number }> {
  const tenantId = await tenantIdOf(db, 'default');
  const existing = await countRows(db, 'subscribers', tenantId);
  if (options.reuse && existing >= options.rows) {
    log(`Reusing the seeded database: ${existing.toLocaleString('en-US')} subscribers.`);
    const seeded = await countRows(db, 'events', tenantId);
    return {
      tenantId,
      subscriberSeed: { startMs: 0, stepMs: 0, total: existing },
      billing: await loadBillingSeed(db, tenantId),
      seededRows: Math.min(existing, seeded),
    };
  }
  log(
    `Seeding ${options.rows.toLocaleString('en-US')} subscribers and as many events (INSERT … SELECT generate_series):`,
  );
  await db.query('SET synchronous_commit = off');
  const subscribers = await withSecondaryIndexesDropped(db, 'subscribers', log, () =>
    seedSubscribers(db, tenantId, options.rows, log),
  );
  await withSecondaryIndexesDropped(db, 'events', log, () =>
    seedEvents(db, tenantId, options.rows, subscribers, log),
  );
  const billing = await seedBilling(db, tenantId, Math.min(BILLING_PAIRS, options.rows), subscribers);
  log(`  billing: ${billing.pairs.length} payments with an open invoice each`);
  const started = Date.now();
  await analyze(db);
  log(`  VACUUM ANALYZE: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { tenantId, subscriberSeed: subscribers, billing, seededRows: options.rows };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const runStarted = new Date();
  const resultsDir = join(ROOT, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const stamp = runStarted.toISOString().replace(/[:.]/g, '-');
  const profileDir = options.cpuProf ? join(resultsDir, 'profiles', stamp) : null;
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  let embedded: EmbeddedDatabase | null = null;
  let server: ServerUnderTest | null = null;
  let baseline: BaselineServer | null = null;
  let floor: BaselineServer | null = null;
  let db: Client | null = null;
  const stopAll = async () => {
    await baseline?.stop().catch(() => undefined);
    await floor?.stop().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    await db?.end().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
  };
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));

  try {
    let databaseUrl = options.databaseUrl;
    if (options.embedded) {
      embedded = await startEmbeddedDatabase();
      databaseUrl = embedded.url;
      log(`Embedded database (PGlite, its own process) at ${databaseUrl}`);
      if (options.rows < 1_000_000) {
        log(
          `Embedded: seeding ${options.rows.toLocaleString('en-US')} rows, not 1,000,000 (PGlite is a single session in one process; --rows 1000000 for the full table).`,
        );
      }
    } else {
      await ensureDatabase(databaseUrl);
      log(`Database: ${databaseUrl.replace(/\/\/[^@/]*@/, '//…@')}`);
    }
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
    if (!options.reuse) await resetSchema(db);

    const logFile = join(resultsDir, `server-${stamp}.log`);
    // The app's own pool size; on the embedded database one connection, as the app uses when it starts PGlite itself
    // (pglite-socket interleaves the statements of concurrent connections).
    const poolMax = options.embedded ? 1 : Number(process.env.DATABASE_POOL_MAX ?? 20);
    server = await startServer({
      databaseUrl,
      poolMax,
      bootstrapToken: BOOTSTRAP_TOKEN,
      logFile,
      cpuProfDir: profileDir,
    });
    log(`Server under test: node dist/main.js, pid ${server.pid}, ${server.baseUrl} (log: ${logFile})`);

    const { tenantId, billing, seededRows } = await prepareDatabase(db, options);
    const deepPosition = Math.floor(seededRows * DEEP_SHARE);
    const subscribersDeep = await cursorAt(db, 'subscribers', tenantId, deepPosition);
    const eventsDeep = await cursorAt(db, 'events', tenantId, deepPosition);
    log(
      `Deep cursors at position ${deepPosition.toLocaleString('en-US')} of ${seededRows.toLocaleString('en-US')}: ` +
        `subscriber ${subscribersDeep.id} (${subscribersDeep.createdAt.toISOString()}), event ${eventsDeep.id}`,
    );
    const fixtures: Fixtures = {
      tenantId,
      getIds: await sampleSubscriberIds(db, tenantId, seededRows, GET_IDS),
      subscribersDeepCursor: subscribersDeep.cursor,
      eventsDeepCursor: eventsDeep.cursor,
      billing,
    };

    baseline = await startBaseline('insert', databaseUrl, tenantId, poolMax);
    floor = await startBaseline('framework', databaseUrl, tenantId, poolMax);
    log(
      `Baseline (a): pid ${baseline.pid}, ${baseline.baseUrl}; baseline (c): pid ${floor.pid}, ${floor.baseUrl}`,
    );
    const cases = buildCases(fixtures).filter(
      (c) =>
        c.target !== 'app' ||
        c.name === 'health.live' ||
        (options.only ? options.only.includes(c.name) : !options.quick || c.quick),
    );
    /** The process that serves each target: its URL for the load, its pid for the CPU measurement. */
    const servedBy: Record<BenchCase['target'], { pid: number; baseUrl: string }> = {
      app: server,
      baseline,
      floor,
    };
    const urlOf = (c: BenchCase) => servedBy[c.target].baseUrl;

    // Every case answers 2xx before it is loaded; then its statements per request, and the list plans.
    const queryCounts: QueryCount[] = [];
    const plans: Explained[] = [];
    for (const c of cases) {
      await probe(c, urlOf(c));
      if (!c.countQueries) continue;
      const { count, stats } = await countQueries(server, c);
      queryCounts.push(count);
      if (c.explain) {
        const plan = await explain(db, c, stats);
        if (plan) plans.push(plan);
      }
    }
    log('\nStatements per request (sequential requests, counted in the server process):');
    log(queryTable(queryCounts));

    const measurements: Measurement[] = [];
    const total = cases.length * options.connections.length;
    log(`\n${total} measurements of ${options.durationS} s, each after ${options.warmupS} s of warm-up:`);
    const cpuNow = (c: BenchCase): CpuSnapshot => {
      const usage = process.cpuUsage();
      return {
        server: processCpuMs(servedBy[c.target].pid),
        database: embedded
          ? new Map<number, number>([[embedded.pid, processCpuMs(embedded.pid)]])
          : postgresCpuMs(),
        loadGenerator: (usage.user + usage.system) / 1000,
        at: Date.now(),
      };
    };
    for (const connections of options.connections) {
      for (const c of cases) {
        await fire(cannonOptions(c, urlOf(c), connections, options.warmupS));
        server.rss.window();
        const before = cpuNow(c);
        const result = await fire(cannonOptions(c, urlOf(c), connections, options.durationS));
        const cpu = cpuUse(before, cpuNow(c), result.requests.total);
        const measurement = measurementOf(c.name, c.label, connections, result, server.rss.window(), cpu);
        measurements.push(measurement);
        let failures = '';
        if (measurement.errors + measurement.timeouts + measurement.non2xx > 0) {
          // One more request the same way, to show what the failures say (it may well succeed by now).
          const sample = await send(c, urlOf(c));
          measurement.failureSample = `${sample.status} ${sample.text.slice(0, 300)}`;
          failures =
            ` FAILURES errors=${measurement.errors} timeouts=${measurement.timeouts} ` +
            `codes=${JSON.stringify(measurement.statusCodes)}; one more request now: ${measurement.failureSample}`;
        }
        log(
          `  ${c.label} @${connections}: ${measurement.rps.toFixed(0)} req/s, p50 ${measurement.latencyMs.p50} ms, ` +
            `p99 ${measurement.latencyMs.p99} ms, CPU cores server ${cpu.serverCores.toFixed(2)} ` +
            `db ${cpu.databaseCores.toFixed(2)} load-generator ${cpu.loadGeneratorCores.toFixed(2)}${failures}`,
        );
      }
    }

    const peakRssMb = server.rss.highWaterMb();
    const embeddedRssMb = embedded?.rss.highWaterMb() ?? null;
    const ratios = ratiosOf(measurements, options.connections);
    const targets = targetsOf(ratios, measurements, peakRssMb, options.embedded);

    const { rows: versionRows } = await db.query<{ version: string }>('SELECT version()');
    const git = (args: string[]) => {
      try {
        return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    };
    const environment = {
      commit: `${git(['rev-parse', '--short', 'HEAD']) || 'unknown'}${git(['status', '--porcelain', 'src']) ? ' + uncommitted src changes' : ''}`,
      node: process.version,
      serverNodeFlags: productionNodeFlags(),
      cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
      memoryGb: Math.round(totalmem() / 2 ** 30),
      database: options.embedded
        ? 'embedded PGlite (own process, via pglite-socket)'
        : versionRows[0].version,
    };

    log(
      `\nResults (${options.embedded ? 'embedded PGlite' : 'PostgreSQL'}; ${environment.cpus}; node ${process.version} ` +
        `${environment.serverNodeFlags.join(' ')}; ` +
        `commit ${environment.commit}):`,
    );
    log(measurementTable(measurements));
    log('\nRatios (same run):');
    log(ratioTable(ratios));
    log(
      `\nTargets${options.embedded ? ' (informational on the embedded database; they apply to the real Postgres)' : ''}:`,
    );
    log(targetTable(targets));
    log(
      `\nServer peak RSS (VmHWM, whole run): ${peakRssMb.toFixed(0)} MB` +
        (embeddedRssMb !== null ? `; the PGlite process: ${embeddedRssMb.toFixed(0)} MB` : ''),
    );
    for (const plan of plans) {
      log(`\nEXPLAIN (ANALYZE, BUFFERS) for ${plan.case} — indexes: ${plan.indexes.join(', ') || 'none'}`);
      log(plan.sql);
      log(plan.plan);
    }

    const file = join(resultsDir, `bench-${stamp}${options.embedded ? '-embedded' : ''}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          startedAt: runStarted.toISOString(),
          finishedAt: new Date().toISOString(),
          options: { ...options, databaseUrl: options.embedded ? 'embedded' : options.databaseUrl },
          environment,
          seededRows,
          deepPosition,
          measurements,
          ratios,
          targets,
          peakRssMb,
          embeddedDatabaseRssMb: embeddedRssMb,
          queryCounts: queryCounts.map((count) => ({
            ...count,
            statements: count.statements.map((s) => ({ ...s, short: shortStatement(s.text) })),
          })),
          plans,
        },
        null,
        2,
      ),
    );
    log(`\nJSON: ${file}`);
    if (profileDir) log(`CPU profile of the server: ${profileDir} (written when it stops)`);
  } finally {
    await stopAll();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
