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

/**
 * The parts of a day written YYYY-MM-DD with a month 1–12 and a date 1–31, else null. The arithmetic below works on
 * them with integers (the days of the proleptic Gregorian calendar, as Date does), which a bill run computing every
 * service-day needs to be fast; anything else goes the slow way through Date, with the same answers.
 */
function partsOf(day: string): [number, number, number] | null {
  if (day.length !== 10 || day.charCodeAt(4) !== 45 || day.charCodeAt(7) !== 45) {
    return null;
  }
  let year = 0;
  for (let i = 0; i < 4; i += 1) {
    const digit = day.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) {
      return null;
    }
    year = year * 10 + digit;
  }
  const m1 = day.charCodeAt(5) - 48;
  const m2 = day.charCodeAt(6) - 48;
  const d1 = day.charCodeAt(8) - 48;
  const d2 = day.charCodeAt(9) - 48;
  if ([m1, m2, d1, d2].some((digit) => digit < 0 || digit > 9)) {
    return null;
  }
  const month = m1 * 10 + m2;
  const date = d1 * 10 + d2;
  return month >= 1 && month <= 12 && date >= 1 && date <= 31 ? [year, month, date] : null;
}

function isLeap(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeap(year) ? 29 : MONTH_DAYS[month - 1];
}

/** Days from 1970-01-01 to a calendar day (H. Hinnant's days_from_civil). */
function epochDay(year: number, month: number, date: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + date - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** The calendar day of a day number since 1970-01-01, written YYYY-MM-DD (civil_from_days); null past 0–9999. */
function dayOf(epoch: number): string | null {
  const z = epoch + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const date = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return year < 0 || year > MAX_YEAR ? null : `${pad(year, 4)}-${pad(month, 2)}-${pad(date, 2)}`;
}

function toTime(day: string): number {
  const parts = partsOf(day);
  if (parts !== null && parts[2] <= daysInMonth(parts[0], parts[1])) {
    return epochDay(...parts) * DAY_MS;
  }
  return Date.parse(`${day}T00:00:00.000Z`);
}

/** The day of a time; a day outside years 0–9999 cannot be written YYYY-MM-DD, and is a bug of the caller. */
function fromTime(time: number): string {
  if (Number.isSafeInteger(time) && time % DAY_MS === 0) {
    const day = dayOf(time / DAY_MS);
    if (day !== null) {
      return day;
    }
  }
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
  const parts = partsOf(day);
  if (parts !== null && Number.isSafeInteger(months)) {
    const [year, month, date] = parts;
    const index = year * 12 + month - 1 + months;
    const toYear = Math.floor(index / 12);
    const toMonth = index - toYear * 12 + 1;
    const toDate = Math.min(date, daysInMonth(toYear, toMonth));
    return fromTime(epochDay(toYear, toMonth, toDate) * DAY_MS);
  }
  const [year, month, date] = day.split('-').map(Number);
  const first = new Date(utcTime(year, month - 1 + months, 1));
  const last = new Date(utcTime(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  return fromTime(utcTime(first.getUTCFullYear(), first.getUTCMonth(), Math.min(date, last)));
}

/**
 * The instant a UTC day ends (the next day's first millisecond), for a range `[from, endOf(to))`; the day 9999-12-31,
 * whose next day cannot be written YYYY-MM-DD, ends just after MAX_TIME all the same.
 */
export function endOfDay(day: string): Date {
  return new Date(toTime(day) + DAY_MS);
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
