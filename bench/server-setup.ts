import Redis from 'ioredis';
import type { Options } from './options';
import type { OwnCluster } from './own-cluster';
import { SERVER_WORKERS } from './processes';

/**
 * What the servers under test ran with, for the report: the rate limit's store (checked, not assumed: the limiter
 * fails open when Redis is down, which would measure a server that never reached it), the workers, the database.
 */
export interface ServerSetup {
  rateLimit: string;
  workers: string;
  database: string;
}

/** The app's key prefix in Redis (src/gateway/rate-limit/counter-store.ts). */
const APP_PREFIX = 'isp:';

function connect(url: string): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    lazyConnect: true,
    retryStrategy: () => null,
  });
}

const safeUrl = (url: string) => url.replace(/\/\/[^@/]*@/, '//…@');

/** Fails the run before anything starts when the Redis the servers are to count in does not answer. */
export async function checkRedis(options: Options): Promise<void> {
  if (options.rateLimitStore !== 'redis') {
    return;
  }
  const redis = connect(options.redisUrl);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(
      `--rate-limit-store redis: ${safeUrl(options.redisUrl)} does not answer (${(error as Error).message}); ` +
        'set BENCH_REDIS_URL, or --rate-limit-store memory',
    );
  } finally {
    redis.disconnect();
  }
}

/** The app's counter keys in the bench's Redis database (SCAN, never KEYS: the Redis is shared). */
async function appKeys(url: string): Promise<number> {
  const redis = connect(url);
  try {
    await redis.connect();
    let cursor = '0';
    let keys = 0;
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${APP_PREFIX}*`, 'COUNT', 1000);
      cursor = next;
      keys += found.length;
    } while (cursor !== '0');
    return keys;
  } finally {
    redis.disconnect();
  }
}

export async function serverSetup(options: Options, ownCluster: OwnCluster | null): Promise<ServerSetup> {
  const perProcess = options.instances > 1 ? 'each instance its own' : 'the one process';
  const rateLimit =
    options.rateLimitStore === 'redis'
      ? `Redis ${safeUrl(options.redisUrl)}, shared by ${options.instances === 1 ? 'the instance' : `the ${options.instances} instances`} ` +
        `(${await appKeys(options.redisUrl)} ${APP_PREFIX}* counter keys there after the measurements)`
      : `in memory (${perProcess})`;
  const workers =
    `${SERVER_WORKERS.map((worker) => worker.runs).join(', ')}, bill runs (the scheduler off), test clocks` +
    (options.instances > 1 ? `: in each of the ${options.instances} instances` : '');
  const database = options.embedded
    ? 'embedded PGlite'
    : ownCluster
      ? `own cluster (pg_stat_statements; ${Object.entries(ownCluster.settings)
          .map(([name, value]) => `${name}=${value}`)
          .join(', ')} as on the replaced server)`
      : 'shared PostgreSQL server (no pg_stat_statements: statements counted in the server, sequentially)';
  return { rateLimit, workers, database };
}
