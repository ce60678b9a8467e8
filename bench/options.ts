/** The command line of `npm run bench` (documented at the top of bench/run.ts) and the database it wipes. */

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/bench';

export interface Options {
  embedded: boolean;
  durationS: number;
  warmupS: number;
  connections: number[];
  rows: number;
  /** billing.run: subscribers billed by the one bill run (100,000; 10,000 with --quick). */
  billingSubscribers: number;
  /** billing.mixed: subscribers of the bill run the API is loaded beside (100,000). */
  mixedSubscribers: number;
  /** billing.mixed: requests/s of the mixed load, idle and during the run (100). */
  mixedRate: number;
  /** provisioning.run: activate orders the worker carries out (10,000). */
  provisioningOrders: number;
  /** import.run: subscribers imported from one CSV upload (100,000; 10,000 with --quick). */
  importRows: number;
  /** accounting.run: sessions sent through FreeRADIUS, 7 packets each (5,000; 1,000 with --quick). */
  accountingSessions: number;
  quick: boolean;
  only: string[] | null;
  reuse: boolean;
  cpuProf: boolean;
  /** Server processes of the same build on the same database, the load spread over them round-robin (1). */
  instances: number;
  /**
   * Where the servers count the rate limit: `redis` (REDIS_URL, shared by the instances, as in production behind a
   * load balancer) or `memory` (each process its own). Redis by default with --instances > 1, memory otherwise.
   */
  rateLimitStore: 'memory' | 'redis';
  /**
   * The Redis of `rateLimitStore: redis`: BENCH_REDIS_URL, else database 1 of the local Redis, so the bench's counters
   * (the app's `isp:` keys) are not those of test suites on database 0: an abuse block of 127.0.0.1 counted there
   * would refuse the bench's requests.
   */
  redisUrl: string;
  /**
   * --own-cluster: a throw-away PostgreSQL cluster (initdb in a temp dir, its own port, pg_stat_statements preloaded)
   * instead of the server of BENCH_DATABASE_URL, removed at the end (bench/own-cluster.ts).
   */
  ownCluster: boolean;
  databaseUrl: string;
}

/**
 * The bench wipes its database, so it never uses DATABASE_URL's own database: BENCH_DATABASE_URL as given, else the
 * server of DATABASE_URL with the database `bench`, else the local default.
 */
function benchDatabaseUrl(): string {
  if (process.env.BENCH_DATABASE_URL) {
    return process.env.BENCH_DATABASE_URL;
  }
  if (!process.env.DATABASE_URL) {
    return DEFAULT_DATABASE_URL;
  }
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = '/bench';
  return url.toString();
}

/** The options that take a value (`--rows 1000` or `--rows=1000`). */
const VALUED_OPTIONS = [
  'duration',
  'warmup',
  'connections',
  'rows',
  'only',
  'billing-subscribers',
  'mixed-subscribers',
  'mixed-rate',
  'provisioning-orders',
  'import-rows',
  'accounting-sessions',
  'instances',
  'rate-limit-store',
];

/** --own-cluster and --rate-limit-store, checked against the rest. */
function deploymentOptions(
  flags: Map<string, string | true>,
  instances: number,
): Pick<Options, 'ownCluster' | 'rateLimitStore'> {
  const ownCluster = flags.has('own-cluster');
  if (flags.has('embedded') && ownCluster) {
    throw new Error('--own-cluster is a PostgreSQL cluster: not with --embedded');
  }
  if (ownCluster && flags.has('reuse')) {
    throw new Error('--own-cluster starts an empty cluster each run: not with --reuse');
  }
  const store = flags.get('rate-limit-store') ?? (instances > 1 ? 'redis' : 'memory');
  if (store !== 'memory' && store !== 'redis') {
    throw new Error('--rate-limit-store must be memory or redis');
  }
  return { ownCluster, rateLimitStore: store };
}

export function parseOptions(argv: string[]): Options {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      throw new Error(`Unexpected argument "${arg}"`);
    }
    const [name, inline] = arg.slice(2).split('=', 2);
    if (['embedded', 'quick', 'reuse', 'cpu-prof', 'own-cluster'].includes(name)) {
      flags.set(name, true);
    } else if (VALUED_OPTIONS.includes(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) {
        throw new Error(`--${name} needs a value`);
      }
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
    if (raw === undefined) {
      return fallback;
    }
    const value = Number(raw.replace(/[_,]/g, ''));
    if (!Number.isFinite(value) || value <= 0) {
      throw new Error(`--${name} must be a positive number`);
    }
    return value;
  };
  const quick = flags.has('quick');
  const embedded = flags.has('embedded');
  const instances = positive('instances', 1);
  if (!Number.isInteger(instances)) {
    throw new Error('--instances must be a whole number');
  }
  // pglite-socket interleaves the statements of concurrent connections (docs/performance.md, Embedded database).
  if (embedded && instances > 1) {
    throw new Error('--instances > 1 needs Postgres: the embedded database takes one connection');
  }
  const { ownCluster, rateLimitStore } = deploymentOptions(flags, instances);
  return {
    embedded,
    quick,
    durationS: positive('duration', quick ? 3 : 10),
    warmupS: positive('warmup', quick ? 1 : 2),
    connections: (text('connections') ?? (quick ? '64' : '32,64')).split(',').map((c) => {
      const value = Number(c);
      if (!Number.isInteger(value) || value < 1) {
        throw new Error('--connections must list whole numbers');
      }
      return value;
    }),
    rows: Math.round(positive('rows', quick || embedded ? 100_000 : 1_000_000)),
    billingSubscribers: Math.round(positive('billing-subscribers', quick ? 10_000 : 100_000)),
    mixedSubscribers: Math.round(positive('mixed-subscribers', 100_000)),
    mixedRate: Math.round(positive('mixed-rate', 100)),
    provisioningOrders: Math.round(positive('provisioning-orders', 10_000)),
    importRows: Math.round(positive('import-rows', quick ? 10_000 : 100_000)),
    accountingSessions: Math.round(positive('accounting-sessions', quick ? 1_000 : 5_000)),
    only: text('only')?.split(',') ?? null,
    reuse: flags.has('reuse'),
    cpuProf: flags.has('cpu-prof'),
    instances,
    rateLimitStore,
    redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379/1',
    ownCluster,
    databaseUrl: benchDatabaseUrl(),
  };
}
