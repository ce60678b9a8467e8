import { Injectable } from '@nestjs/common';

/** YYYY-MM-DD of `at`, in UTC: the day billing, dunning and the scheduler reason in. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * Every read of the time in src/ (docs/architecture.md, "One clock"): the dates records are written with, a bill
 * run's default day, the scheduler's hour, the overdue sweep's today. One injectable source (ConfigModule provides
 * it, createApp's `clock` option chooses it), so tests move time instead of sleeping; the only place allowed to ask
 * the system for the date (eslint.config.mjs).
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }

  /** Today in UTC, YYYY-MM-DD. */
  today(): string {
    return utcDay(this.now());
  }
}
