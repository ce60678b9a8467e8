import { Injectable } from '@nestjs/common';

/** YYYY-MM-DD of `at`, in UTC: the day billing, dunning and the scheduler reason in. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * The time the business rules read: a bill run's default day, the scheduler's hour, the overdue sweep's today and
 * the provisioning worker's completion times. One injectable source, so tests move time instead of sleeping.
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

/** A clock the tests set and advance; it stands still in between. */
export class TestClock extends Clock {
  private at: number;

  constructor(start: string | Date = new Date()) {
    super();
    this.at = new Date(start).getTime();
  }

  override now(): Date {
    return new Date(this.at);
  }

  set(at: string | Date): void {
    this.at = new Date(at).getTime();
  }

  advance(ms: number): void {
    this.at += ms;
  }
}
