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
 * subscribers.list_first/_deep, events.list_first/_deep, events.by_subject, tickets.list, provisioning_orders.list,
 * ledger.list, transactions.create, transactions.allocate; then billing.run (bench/billing-run.ts): one bill run over
 * 100,000 subscribers (--billing-subscribers), as subscribers/s against baseline (a)'s requests/s; then
 * provisioning.run (bench/provisioning-run.ts): 10,000 activate orders (--provisioning-orders) carried out by the
 * worker through radius-sql, as orders/s against the same.
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
 *   --only <l>          comma-separated case names to measure (baselines are always kept; billing.run and
 *                       provisioning.run included)
 *   --billing-subscribers <n>  subscribers the billing.run case bills (100,000; 10,000 with --quick)
 *   --provisioning-orders <n>  orders the provisioning.run case carries out (10,000)
 *   --reuse             keep an already seeded bench database (skip the reset and the seeding)
 *   --cpu-prof          profile the server under test (.cpuprofile under bench/results/profiles/)
 *   --instances <n>     n server processes on the same database, autocannon's connections spread over them
 *                       round-robin (1; the baselines stay one process each)
 *
 * Speed is never asserted in the test suite: every figure here is a ratio against a baseline of the same run.
 *
 * This file is the run's order; the parts: options.ts (the command line), database.ts + seed.ts (reset, seeding,
 * fixtures), processes.ts + process-stats.ts (the server, the baselines, the embedded database; CPU and memory),
 * cases.ts (what is measured), count.ts (statements per request, plans), load.ts (the load), ratios.ts + report.ts +
 * results.ts (ratios, targets, tables, the JSON file), query-counter.ts (loaded into the server under test).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { benchBillingRun } from './billing-run';
import { benchProvisioningRun } from './provisioning-run';
import { BOOTSTRAP_TOKEN, buildCases, type Fixtures } from './cases';
import { countAll } from './count';
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
import { parseOptions } from './options';
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

const GET_IDS = 5_000;
/** After services.create: how long to wait for the provisioning worker to carry out the orders it queued. */
const PROVISIONING_SETTLE_MS = 120_000;
/** How long the bench waits for the server's overdue sweep of the seed before measuring anyway. */
const SWEEP_SETTLE_MS = 900_000;
/** How deep into the list the deep cursor points, as a share of the seeded rows (900,000 of 1,000,000). */
const DEEP_SHARE = 0.9;

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const runStarted = new Date();
  const resultsDir = join(ROOT, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const stamp = runStarted.toISOString().replace(/[:.]/g, '-');
  const profileDir = options.cpuProf ? join(resultsDir, 'profiles', stamp) : null;
  if (profileDir) {
    mkdirSync(profileDir, { recursive: true });
  }

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
    if (!options.reuse) {
      await resetSchema(db);
    }

    const logFile = join(resultsDir, `server-${stamp}.log`);
    // The app's own pool size; on the embedded database one connection, as the app uses when it starts PGlite itself
    // (pglite-socket interleaves the statements of concurrent connections).
    const poolMax = options.embedded ? 1 : Number(process.env.DATABASE_POOL_MAX ?? 20);
    server = await startServers(
      {
        databaseUrl,
        poolMax,
        bootstrapToken: BOOTSTRAP_TOKEN,
        logFile,
        cpuProfDir: profileDir,
      },
      options.instances,
    );
    log(
      `Server under test: node dist/main.js, ${options.instances === 1 ? 'pid' : `${options.instances} instances, pids`} ` +
        `${server.pids.join(', ')}, ${server.baseUrls.join(', ')} (log: ${logFile})`,
    );

    const { tenantId, billing, domain, seededRows } = await prepareDatabase(db, options);
    // The measured cases start once the server's overdue sweep has gone through the seed's past-due invoices.
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
    const client = db;
    const fixtures: Fixtures = {
      tenantId,
      getIds: await sampleSubscriberIds(db, tenantId, seededRows, GET_IDS),
      subscribersDeepCursor: subscribersDeep.cursor,
      eventsDeepCursor: eventsDeep.cursor,
      billing,
      domain,
      provisioningSettled: async () => {
        const left = await waitForOpenOrders(client, tenantId, PROVISIONING_SETTLE_MS);
        if (left > 0) {
          log(`  (${left} provisioning orders still open after ${PROVISIONING_SETTLE_MS / 1000} s)`);
        }
      },
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
    const servedBy: ServedBy = {
      app: server,
      baseline,
      floor,
    };

    const { queryCounts, plans } = await countAll(cases, servedBy, server, db);
    log('\nStatements per request (sequential requests, counted in the server process):');
    log(queryTable(queryCounts));

    const measurements = await measure(cases, options, servedBy, server, embedded);
    await reportResults(db, server, embedded, {
      options,
      runStarted,
      resultsDir,
      stamp,
      seededRows,
      deepPosition,
      measurements,
      queryCounts,
      plans,
    });
    if (!options.only || options.only.includes('billing.run')) {
      await benchBillingRun(db, server, measurements, options.billingSubscribers, resultsDir, stamp);
    }
    if (!options.only || options.only.includes('provisioning.run')) {
      await benchProvisioningRun(db, server, measurements, options.provisioningOrders, resultsDir, stamp);
    }
    if (profileDir) {
      log(`CPU profile of the server: ${profileDir} (written when it stops)`);
    }
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
