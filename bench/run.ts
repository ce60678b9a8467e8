/**
 * `npm run bench [-- options]`: the hot paths against baselines measured in the same run (docs/performance.md).
 *
 * Baselines, in the order they run, each right before what is compared with it:
 *   (a) baseline.insert     bench/baseline-server.ts: bare node:http + the create's single-row pg INSERT (the floor of
 *                           the create path)
 *   (c) baseline.framework  bench/framework-floor-server.ts: a bare Nest + Express app with the stock ValidationPipe,
 *                           the app's CreateSubscriberDto and the same INSERT (the floor of the app's own stack)
 *   (b) health.live         GET /health/live of the server under test (the framework's ceiling)
 * Cases against them: subscribers.create (+ _idempotent), tickets.create, services.create, subscribers.get,
 * subscribers.list_first/_deep, subscribers.search, events.list_first/_deep, events.by_subject, tickets.list, provisioning_orders.list,
 * ledger.list, transactions.create, transactions.allocate; then billing.run (bench/billing-run.ts): one bill run over
 * 100,000 subscribers (--billing-subscribers), as subscribers/s against baseline (a)'s requests/s; then
 * billing.mixed (bench/billing-mixed.ts): the API's p99 under a fixed-rate mixed load while a bill run of 100,000
 * subscribers goes, against its idle p99 just before (target ≤ 3); then
 * provisioning.run (bench/provisioning-run.ts): 10,000 activate orders (--provisioning-orders) carried out by the
 * worker through radius-sql, as orders/s against the same; and reports (bench/reports.ts): each GET /reports/* on the
 * seeded subscribers (bench/seed-reports.ts), one request at a time, against a 100-row page. In between,
 * documents.pdf (bench/documents-pdf.ts): invoice PDFs per second rendered in this process, against an empty one-page
 * pdfkit document (a ratio, no target). Then exports.memory (bench/exports-memory.ts): the server's peak RSS
 * streaming the subscribers CSV of 10,000 rows, then of every seeded row, and the difference (issue #35's target:
 * within 20 MB); then import.run (bench/import-run.ts): one CSV upload of 100,000 new subscribers (--import-rows)
 * imported by the worker, as rows/s against baseline (a)'s requests/s (target ≥ 0.5, issue #35). Last,
 * accounting.run (bench/accounting-run.ts, PostgreSQL with FreeRADIUS installed only): 5,000 sessions
 * (--accounting-sessions) of Start, 5 Interim-Updates and Stop through a real FreeRADIUS into radacct, as rows/s.
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
 *   --only <l>          comma-separated case names to measure (baselines are always kept; billing.run,
 *                       provisioning.run, reports, import.run and accounting.run included)
 *   --billing-subscribers <n>  subscribers the billing.run case bills (100,000; 10,000 with --quick)
 *   --mixed-subscribers <n>    subscribers of billing.mixed's bill run (100,000)
 *   --mixed-rate <n>           requests/s of billing.mixed's API load, idle and during the run (100)
 *   --provisioning-orders <n>  orders the provisioning.run case carries out (10,000)
 *   --import-rows <n>  subscribers the import.run case imports from one CSV (100,000; 10,000 with --quick)
 *   --accounting-sessions <n>  sessions the accounting.run case sends through FreeRADIUS (5,000; 1,000 with --quick)
 *   --reuse             keep an already seeded bench database (skip the reset and the seeding)
 *   --cpu-prof          profile the server under test (.cpuprofile under bench/results/profiles/)
 *   --instances <n>     n server processes on the same database, autocannon's connections spread over them
 *                       round-robin (1; the baselines stay one process each), every worker in each
 *   --rate-limit-store <memory|redis>  where the servers count the rate limit (redis with --instances > 1: the
 *                       Redis of BENCH_REDIS_URL, else redis://127.0.0.1:6379/1)
 *   --own-cluster       a throw-away Postgres cluster (temp dir, own port, pg_stat_statements) instead of the server
 *                       of BENCH_DATABASE_URL: statements per request under load, and its database CPU alone
 *
 * Speed is never asserted in the test suite: every figure here is a ratio against a baseline of the same run.
 *
 * This file is the run's order; the parts: options.ts (the command line), database.ts + seed*.ts (reset, seeding,
 * fixtures), processes.ts + process-stats.ts (the server, the baselines, the embedded database; CPU and memory),
 * cases.ts (what is measured), count.ts (statements per request, plans), load.ts (the load), ratios.ts + report.ts +
 * results.ts (ratios, targets, tables, the JSON file), query-counter.ts (loaded into the server under test).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { benchDocumentsPdf, DOCUMENTS_PDF_CASE } from './documents-pdf';
import { BOOTSTRAP_TOKEN, buildCases, type Fixtures } from './cases';
import { countAll } from './count';
import { DatabaseObserver } from './db-observer';
import { type OwnCluster, startOwnCluster } from './own-cluster';
import { checkRedis, serverSetup } from './server-setup';
import {
  cursorAt,
  ensureDatabase,
  prepareDatabase,
  resetSchema,
  sampleSubscriberIds,
  waitForOpenOrders,
  waitForOverdueSweep,
} from './database';
import { measure, type ServedBy } from './load';
import { type Options, parseOptions } from './options';
import {
  type BaselineServer,
  type EmbeddedDatabase,
  ROOT,
  type ServerUnderTest,
  startBaseline,
  startEmbeddedDatabase,
  startServers,
} from './processes';
import { log, queryTable } from './report';
import { reportResults } from './results';
import { wholeCases } from './whole-cases';

const GET_IDS = 5_000;
/** After services.create: how long to wait for the provisioning worker to carry out the orders it queued. */
const PROVISIONING_SETTLE_MS = 120_000;
/** How long the bench waits for the server's overdue sweep of the seed before measuring anyway. */
const SWEEP_SETTLE_MS = 900_000;
/** How deep into the list the deep cursor points, as a share of the seeded rows (900,000 of 1,000,000). */
const DEEP_SHARE = 0.9;

/** What a run has started, stopped at its end (or on Ctrl-C) whatever it got to. */
interface Running {
  embedded: EmbeddedDatabase | null;
  server: ServerUnderTest | null;
  baseline: BaselineServer | null;
  floor: BaselineServer | null;
  db: Client | null;
  ownCluster: OwnCluster | null;
  observer: DatabaseObserver | null;
}

function nothingRunning(): Running {
  const none = { embedded: null, server: null, baseline: null, floor: null, db: null };
  return { ...none, ownCluster: null, observer: null };
}

/** Postgres: what the database does in each window (lock waits; statements on the own cluster). */
async function observerOf(
  options: Options,
  running: Running,
  databaseUrl: string,
): Promise<DatabaseObserver | null> {
  return options.embedded ? null : DatabaseObserver.open(databaseUrl, running.ownCluster?.postmasterPid);
}

async function stopAll(running: Running): Promise<void> {
  await running.baseline?.stop().catch(() => undefined);
  await running.floor?.stop().catch(() => undefined);
  await running.server?.stop().catch(() => undefined);
  await running.observer?.close().catch(() => undefined);
  await running.db?.end().catch(() => undefined);
  await running.embedded?.stop().catch(() => undefined);
  await running.ownCluster?.stop().catch(() => undefined);
}

/** Where the run writes: bench/results/, its files stamped with the start time, CPU profiles when asked. */
function resultPaths(options: Options) {
  const runStarted = new Date();
  const resultsDir = join(ROOT, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const stamp = runStarted.toISOString().replace(/[:.]/g, '-');
  const profileDir = options.cpuProf ? join(resultsDir, 'profiles', stamp) : null;
  if (profileDir) {
    mkdirSync(profileDir, { recursive: true });
  }
  return { runStarted, resultsDir, stamp, profileDir };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const paths = resultPaths(options);
  const { resultsDir, stamp, profileDir } = paths;
  const running = nothingRunning();
  process.once('SIGINT', () => void stopAll(running).finally(() => process.exit(130)));

  try {
    const databaseUrl = await openDatabase(options, running);
    const db = running.db!;
    // The app's own pool size; on the embedded database one connection, as the app uses when it starts PGlite itself
    // (pglite-socket interleaves the statements of concurrent connections).
    const poolMax = options.embedded ? 1 : Number(process.env.DATABASE_POOL_MAX ?? 20);
    const server = await startServerUnderTest(options, running, {
      databaseUrl,
      poolMax,
      resultsDir,
      stamp,
      profileDir,
    });
    const { fixtures, seededRows, deepPosition } = await fixturesOf(db, options);
    const servedBy = await startBaselines(running, server, databaseUrl, fixtures.tenantId, poolMax);
    const cases = buildCases(fixtures).filter(
      (c) =>
        c.target !== 'app' ||
        c.name === 'health.live' ||
        (options.only ? options.only.includes(c.name) : !options.quick || c.quick),
    );

    const { queryCounts, plans } = await countAll(cases, servedBy, server, db);
    log('\nStatements per request (sequential requests, counted in the server process):');
    log(queryTable(queryCounts));

    running.observer = await observerOf(options, running, databaseUrl);
    const measurements = await measure(cases, options, servedBy, server, running.embedded, running.observer);
    const setup = await serverSetup(options, running.ownCluster);
    // Issue 29: invoice PDFs per second in this process, against an empty one-page pdfkit document (no target).
    const documents =
      !options.only || options.only.includes(DOCUMENTS_PDF_CASE)
        ? await benchDocumentsPdf(Math.min(options.durationS, 5))
        : null;
    await reportResults(db, server, running.embedded, {
      options,
      runStarted: paths.runStarted,
      resultsDir,
      stamp,
      seededRows,
      deepPosition,
      measurements,
      queryCounts,
      plans,
      documents,
      setup,
    });
    await wholeCases({
      db,
      server,
      databaseUrl,
      embedded: running.embedded,
      options,
      paths,
      fixtures,
      seededRows,
      measurements,
    });
    if (profileDir) {
      log(`CPU profile of the server: ${profileDir} (written when it stops)`);
    }
  } finally {
    await stopAll(running);
  }
}

/** The database (the embedded one started, or the Postgres one created when missing), connected, and reset. */
async function openDatabase(options: Options, running: Running): Promise<string> {
  await checkRedis(options);
  let databaseUrl = options.databaseUrl;
  if (options.embedded) {
    running.embedded = await startEmbeddedDatabase();
    databaseUrl = running.embedded.url;
    log(`Embedded database (PGlite, its own process) at ${databaseUrl}`);
    if (options.rows < 1_000_000) {
      log(
        `Embedded: seeding ${options.rows.toLocaleString('en-US')} rows, not 1,000,000 (PGlite is a single session in one process; --rows 1000000 for the full table).`,
      );
    }
  } else {
    if (options.ownCluster) {
      running.ownCluster = await startOwnCluster(databaseUrl);
      databaseUrl = running.ownCluster.url;
      log(
        `Own cluster (--own-cluster, pg_stat_statements): postmaster pid ${running.ownCluster.postmasterPid}`,
      );
    }
    await ensureDatabase(databaseUrl);
    log(`Database: ${databaseUrl.replace(/\/\/[^@/]*@/, '//…@')}`);
  }
  running.db = new Client({ connectionString: databaseUrl });
  await running.db.connect();
  if (!options.reuse) {
    await resetSchema(running.db);
  }
  return databaseUrl;
}

/** The server (or --instances servers) under test, logging to bench/results/server-<stamp>.log. */
async function startServerUnderTest(
  options: Options,
  running: Running,
  at: { databaseUrl: string; poolMax: number; resultsDir: string; stamp: string; profileDir: string | null },
): Promise<ServerUnderTest> {
  const logFile = join(at.resultsDir, `server-${at.stamp}.log`);
  const server = await startServers(
    {
      databaseUrl: at.databaseUrl,
      poolMax: at.poolMax,
      bootstrapToken: BOOTSTRAP_TOKEN,
      logFile,
      cpuProfDir: at.profileDir,
      redisUrl: options.rateLimitStore === 'redis' ? options.redisUrl : null,
    },
    options.instances,
  );
  running.server = server;
  log(
    `Server under test: node dist/main.js, ${options.instances === 1 ? 'pid' : `${options.instances} instances, pids`} ` +
      `${server.pids.join(', ')}, ${server.baseUrls.join(', ')} (log: ${logFile})`,
  );
  return server;
}

/**
 * The seeded database's fixtures for the cases, once the server's overdue sweep has gone through the seed's past-due
 * invoices: ids to read, the deep cursors, the billing and domain seeds.
 */
async function fixturesOf(
  db: Client,
  options: Options,
): Promise<{ fixtures: Fixtures; seededRows: number; deepPosition: number }> {
  const { tenantId, billing, domain, seededRows } = await prepareDatabase(db, options);
  const sweepStarted = Date.now();
  const unswept = await waitForOverdueSweep(db, tenantId, SWEEP_SETTLE_MS);
  log(
    unswept === 0
      ? `Overdue sweep of the seed done in ${((Date.now() - sweepStarted) / 1000).toFixed(1)} s`
      : `  (${unswept} seeded invoices still not swept after ${SWEEP_SETTLE_MS / 1000} s)`,
  );
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
    domain,
    provisioningSettled: async () => {
      const left = await waitForOpenOrders(db, tenantId, PROVISIONING_SETTLE_MS);
      if (left > 0) {
        log(`  (${left} provisioning orders still open after ${PROVISIONING_SETTLE_MS / 1000} s)`);
      }
    },
  };
  return { fixtures, seededRows, deepPosition };
}

/** Baselines (a) and (c), each a process of its own on the same database, beside the server under test. */
async function startBaselines(
  running: Running,
  server: ServerUnderTest,
  databaseUrl: string,
  tenantId: string,
  poolMax: number,
): Promise<ServedBy> {
  const baseline = await startBaseline('insert', databaseUrl, tenantId, poolMax);
  running.baseline = baseline;
  const floor = await startBaseline('framework', databaseUrl, tenantId, poolMax);
  running.floor = floor;
  log(
    `Baseline (a): pid ${baseline.pid}, ${baseline.baseUrl}; baseline (c): pid ${floor.pid}, ${floor.baseUrl}`,
  );
  return { app: server, baseline, floor };
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
