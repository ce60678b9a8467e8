import { isISO8601, registerDecorator, ValidationOptions } from 'class-validator';
import { MAX_DAY, MAX_TIME, MIN_DAY, MIN_TIME } from '../dates';

/** A calendar date, YYYY-MM-DD, that exists (no 2026-02-30) and lies in MIN_DAY..MAX_DAY (years 1900–9999). */
export function isDateOnly(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    return false;
  }
  const date = new Date(`${value}T00:00:00.000Z`);
  return (
    !Number.isNaN(date.getTime()) &&
    date.toISOString().startsWith(value) &&
    value >= MIN_DAY &&
    value <= MAX_DAY
  );
}

/**
 * An ISO 8601 instant (strict: no 2026-02-30) that JavaScript reads (no week or ordinal dates) and that falls, in UTC,
 * in years 1900–9999: `9999-12-31T23:00:00-05:00` is year 10000 and is refused.
 */
export function isTimestamp(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 64 || !isISO8601(value, { strict: true })) {
    return false;
  }
  const time = Date.parse(value);
  return !Number.isNaN(time) && time >= MIN_TIME && time <= MAX_TIME;
}

export function IsDateOnly(options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isDateOnly',
      target: object.constructor,
      propertyName,
      options: {
        message: `${propertyName} must be a date as YYYY-MM-DD from ${MIN_DAY} to ${MAX_DAY}`,
        ...options,
      },
      validator: { validate: isDateOnly },
    });
}

/** The timestamp counterpart of IsDateOnly: the same years, one rule (src/common/dates.ts). */
export function IsTimestamp(options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isTimestamp',
      target: object.constructor,
      propertyName,
      options: {
        message: `${propertyName} must be an ISO 8601 timestamp from ${MIN_DAY}T00:00:00Z to ${MAX_DAY}T23:59:59.999Z`,
        ...options,
      },
      validator: { validate: isTimestamp },
    });
}

/** A day no later than `latest` (YYYY-MM-DD), for a date the server computes more dates from; `why` says which. */
export function IsNotAfterDay(latest: string, why: string, options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'notAfterDay',
      target: object.constructor,
      propertyName,
      options: { message: `${propertyName} must be on or before ${latest}: ${why}`, ...options },
      validator: { validate: (value: unknown) => typeof value !== 'string' || value <= latest },
    });
}
