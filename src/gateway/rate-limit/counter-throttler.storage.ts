import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { COUNTER_STORE, type CounterStore } from './counter-store';

/** What a storage answers, read off the public ThrottlerStorage (the record's own file is not exported). */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** Lets @nestjs/throttler count in our CounterStore (memory, or Redis when REDIS_URL is set). */
@Injectable()
export class CounterThrottlerStorage implements ThrottlerStorage {
  constructor(@Inject(COUNTER_STORE) private readonly counters: CounterStore) {}

  async increment(key: string, ttlMs: number, limit: number): Promise<ThrottlerStorageRecord> {
    const { count, resetMs } = await this.counters.hit(`rl:${key}`, ttlMs);
    // 1 to the window's whole seconds: a header never says a 60 s window resets in 61 s.
    const timeToExpire = Math.min(Math.ceil(ttlMs / 1000), Math.max(1, Math.ceil(resetMs / 1000)));
    return { totalHits: count, timeToExpire, isBlocked: count > limit, timeToBlockExpire: timeToExpire };
  }
}
