import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { performance } from 'node:perf_hooks';

export interface Counter {
  count: number;
  /** Milliseconds until the window closes. */
  resetMs: number;
}

/** Fixed-window counters shared by the rate limiter and the abuse threshold. */
export interface CounterStore {
  hit(key: string, windowMs: number): Promise<Counter>;
  get(key: string): Promise<Counter | null>;
  set(key: string, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

export const COUNTER_STORE = Symbol('COUNTER_STORE');

/**
 * One process's counters. Enough for a single instance; several instances need Redis to share a budget. Windows are
 * elapsed time (as Redis's PEXPIRE), so they run on the monotonic clock, not on the date.
 */
export class MemoryCounterStore implements CounterStore {
  /** `windowMs` caps what is left: `(now + windowMs) - now` can round to a hair more than `windowMs`. */
  private readonly counters = new Map<string, { count: number; expiresAt: number; windowMs: number }>();
  private readonly sweeper = setInterval(() => this.sweep(), 30_000).unref();

  hit(key: string, windowMs: number): Promise<Counter> {
    const now = performance.now();
    let entry = this.counters.get(key);
    if (!entry || entry.expiresAt <= now) {
      entry = { count: 0, expiresAt: now + windowMs, windowMs };
      this.counters.set(key, entry);
    }
    entry.count += 1;
    return Promise.resolve({ count: entry.count, resetMs: remainingMs(entry, now) });
  }

  get(key: string): Promise<Counter | null> {
    const now = performance.now();
    const entry = this.counters.get(key);
    if (!entry || entry.expiresAt <= now) {
      return Promise.resolve(null);
    }
    return Promise.resolve({ count: entry.count, resetMs: remainingMs(entry, now) });
  }

  set(key: string, ttlMs: number): Promise<void> {
    this.counters.set(key, { count: 1, expiresAt: performance.now() + ttlMs, windowMs: ttlMs });
    return Promise.resolve();
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return Promise.resolve();
  }

  private sweep(): void {
    const now = performance.now();
    for (const [key, entry] of this.counters) {
      if (entry.expiresAt <= now) {
        this.counters.delete(key);
      }
    }
  }
}

/** What is left of an entry's window at `now`, never more than the window itself (floating-point rounding). */
function remainingMs(entry: { expiresAt: number; windowMs: number }, now: number): number {
  return Math.min(entry.windowMs, entry.expiresAt - now);
}

// INCR and PEXPIRE in one step, so a window cannot be left without an expiry.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
return {count, ttl}`;

/**
 * Counters in Redis, so every instance behind the load balancer draws on one budget. When Redis is unreachable the
 * limiter fails open (and logs it) rather than taking the API down with it.
 */
export class RedisCounterStore implements CounterStore {
  private readonly logger = new Logger('RedisCounterStore');
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = 'isp:',
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    this.redis.on('error', (error: Error) => this.logger.warn(`redis: ${error.message}`));
  }

  async hit(key: string, windowMs: number): Promise<Counter> {
    try {
      const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, this.prefix + key, windowMs)) as [
        number,
        number,
      ];
      return { count, resetMs: ttl > 0 ? ttl : windowMs };
    } catch (error) {
      this.logger.warn(`rate-limit counter unavailable, failing open: ${(error as Error).message}`);
      return { count: 0, resetMs: windowMs };
    }
  }

  async get(key: string): Promise<Counter | null> {
    try {
      const [count, ttl] = await Promise.all([
        this.redis.get(this.prefix + key),
        this.redis.pttl(this.prefix + key),
      ]);
      return count === null ? null : { count: Number(count), resetMs: Math.max(ttl, 0) };
    } catch {
      return null;
    }
  }

  async set(key: string, ttlMs: number): Promise<void> {
    try {
      await this.redis.set(this.prefix + key, '1', 'PX', ttlMs);
    } catch (error) {
      this.logger.warn(`could not store ${key}: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
