/** Calendar-day arithmetic on UTC days written YYYY-MM-DD (bill runs, the overdue sweep, usage). */

const DAY_MS = 86_400_000;

/**
 * The one rule for every date and timestamp the API accepts: years 1900 to 9999. PostgreSQL and JavaScript both hold
 * them, every one is written YYYY-MM-DD with four digits, and none meets `Date.UTC`'s mapping of years 0–99 to 19xx.
 */
export const MIN_YEAR = 1900;
export const MAX_YEAR = 9999;
export const MIN_DAY = `${MIN_YEAR}-01-01`;
export const MAX_DAY = `${MAX_YEAR}-12-31`;
/** The instants of MIN_DAY's first and MAX_DAY's last millisecond, UTC. */
export const MIN_TIME = Date.parse(`${MIN_DAY}T00:00:00.000Z`);
export const MAX_TIME = Date.parse(`${MAX_DAY}T23:59:59.999Z`);

/** The most days one walk over days may take: a bug, not a request, asks for more. */
export const MAX_WALK_DAYS = 10_000;

function toTime(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`);
}

/** The day of a time; a day outside years 0–9999 cannot be written YYYY-MM-DD, and is a bug of the caller. */
function fromTime(time: number): string {
  const date = new Date(time);
  const year = date.getUTCFullYear();
  if (Number.isNaN(time) || year < 0 || year > MAX_YEAR) {
    throw new RangeError(
      `no YYYY-MM-DD day at ${Number.isNaN(time) ? 'an invalid time' : date.toISOString()}`,
    );
  }
  return date.toISOString().slice(0, 10);
}

/** The time of a UTC calendar day; setUTCFullYear, unlike Date.UTC, takes years 0–99 as they are. */
function utcTime(year: number, monthIndex: number, date: number): number {
  const at = new Date(0);
  at.setUTCFullYear(year, monthIndex, date);
  return at.getTime();
}

export function addDays(day: string, days: number): string {
  return fromTime(toTime(day) + days * DAY_MS);
}

/** The same day of the month `months` later (or earlier); a day past the month's end is its last day. */
export function addMonths(day: string, months: number): string {
  const [year, month, date] = day.split('-').map(Number);
  const first = new Date(utcTime(year, month - 1 + months, 1));
  const last = new Date(utcTime(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  return fromTime(utcTime(first.getUTCFullYear(), first.getUTCMonth(), Math.min(date, last)));
}

/** Whole days from `from` to `to`. */
export function daysBetween(from: string, to: string): number {
  return Math.round((toTime(to) - toTime(from)) / DAY_MS);
}

/**
 * `count` consecutive days from `from`. The count is fixed before the walk starts (never a comparison of day strings,
 * which a year past 9999 breaks), and at most MAX_WALK_DAYS.
 */
export function daysFrom(from: string, count: number): string[] {
  if (!Number.isSafeInteger(count) || count < 0 || count > MAX_WALK_DAYS) {
    throw new RangeError(`a walk over ${count} days from ${from}: at most ${MAX_WALK_DAYS}`);
  }
  return Array.from({ length: count }, (_, index) => addDays(from, index));
}
