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
];

export function parseOptions(argv: string[]): Options {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      throw new Error(`Unexpected argument "${arg}"`);
    }
    const [name, inline] = arg.slice(2).split('=', 2);
    if (['embedded', 'quick', 'reuse', 'cpu-prof'].includes(name)) {
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
    databaseUrl: benchDatabaseUrl(),
  };
}
