import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { requestContext } from './request-context';

/** YYYY-MM-DD of `at`, in UTC: the day billing, dunning and the scheduler reason in. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** A test tenant's frozen time for the work a worker does for it (docs/test-clocks.md). */
const tenantTime = new AsyncLocalStorage<Date>();

/**
 * Runs `work` with every Clock reading answering `frozenAt` (a test clock's tenant's time), or as it is for null: a
 * worker acting for one tenant at a time wraps that tenant's work in it.
 */
export function atFrozenTime<T>(frozenAt: Date | null, work: () => T): T {
  return frozenAt === null ? work() : tenantTime.run(new Date(frozenAt.getTime()), work);
}

/**
 * Every read of the time in src/ (docs/architecture.md, "One clock"): the dates records are written with, a bill
 * run's default day, the scheduler's hour, the overdue sweep's today. One injectable source (ConfigModule provides
 * it, createApp's `clock` option chooses it), so tests move time instead of sleeping; the only place allowed to ask
 * the system for the date (eslint.config.mjs). A test tenant's work reads its test clock's frozen time instead
 * (the request context's, set by the auth guard, or a worker's atFrozenTime); every other tenant's reads the system's.
 */
@Injectable()
export class Clock {
  now(): Date {
    const frozen = tenantTime.getStore() ?? requestContext.get()?.frozenAt;
    return frozen ? new Date(frozen.getTime()) : this.systemNow();
  }

  /** Today in UTC, YYYY-MM-DD. */
  today(): string {
    return utcDay(this.now());
  }

  /** The time no test clock governs: a subclass (tests' TestClock) chooses it instead of the system's. */
  protected systemNow(): Date {
    return new Date();
  }
}
