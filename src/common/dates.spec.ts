import {
  addDays,
  addMonths,
  daysBetween,
  daysFrom,
  endOfDay,
  MAX_DAY,
  MAX_TIME,
  MAX_WALK_DAYS,
  MIN_DAY,
  MIN_TIME,
} from './dates';
import { isDateOnly, isTimestamp } from './validation/is-date-only';

/** Issue 27 items 1 and 2: calendar arithmetic at the ends of the calendar, and the one rule for accepted dates. */
describe('dates', () => {
  describe('addMonths', () => {
    it('should keep years 0–99 as they are (Date.UTC maps them to 1900–1999)', () => {
      expect(addMonths('0001-01-01', 1)).toBe('0001-02-01');
      expect(addMonths('0099-12-15', 1)).toBe('0100-01-15');
      expect(addMonths('0050-03-31', -1)).toBe('0050-02-28');
      expect(addMonths('0000-01-01', 0)).toBe('0000-01-01');
    });

    it('should clamp to the end of a shorter month and carry across years', () => {
      expect(addMonths('2026-01-31', 1)).toBe('2026-02-28');
      expect(addMonths('2024-01-31', 1)).toBe('2024-02-29');
      expect(addMonths('2026-12-01', 1)).toBe('2027-01-01');
      expect(addMonths('2026-01-15', -1)).toBe('2025-12-15');
      expect(addMonths('1900-01-01', -1)).toBe('1899-12-01');
    });

    it('should answer the last day the rule allows and refuse to write a year past 9999', () => {
      expect(addMonths('9999-11-30', 1)).toBe('9999-12-30');
      expect(() => addMonths('9999-12-01', 1)).toThrow(RangeError);
    });
  });

  describe('addDays', () => {
    it('should move across years, leap days and the ends of the range', () => {
      expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
      expect(addDays('1900-03-01', -1)).toBe('1900-02-28');
      expect(addDays('9999-12-30', 1)).toBe(MAX_DAY);
      expect(addDays('0001-01-01', -1)).toBe('0000-12-31');
    });

    it('should throw rather than write `+010000-01` (which sorts before 9999-12-31) past year 9999', () => {
      expect(() => addDays(MAX_DAY, 1)).toThrow(RangeError);
      expect(() => addDays('0000-01-01', -1)).toThrow(RangeError);
      expect(() => addDays('not-a-day', 1)).toThrow(RangeError);
    });
  });

  describe('daysBetween', () => {
    it('should count whole days, across the whole range', () => {
      expect(daysBetween('2026-11-01', '2026-12-01')).toBe(30);
      expect(daysBetween('0001-01-01', '0001-02-01')).toBe(31);
      expect(daysBetween('1900-01-01', '2000-01-01')).toBe(36_524);
      // 20 Gregorian cycles of 146,097 days to 9900-01-01, then 100 years with 24 leap days, less the last day.
      expect(daysBetween(MIN_DAY, MAX_DAY)).toBe(20 * 146_097 + 36_524 - 1);
    });
  });

  describe('daysFrom', () => {
    it('should answer exactly `count` consecutive days', () => {
      expect(daysFrom('9999-12-29', 3)).toEqual(['9999-12-29', '9999-12-30', '9999-12-31']);
      expect(daysFrom('2026-01-01', 0)).toEqual([]);
    });

    it('should refuse a walk it cannot finish: more than MAX_WALK_DAYS, negative, fractional or NaN', () => {
      expect(daysFrom('2000-01-01', MAX_WALK_DAYS)).toHaveLength(MAX_WALK_DAYS);
      for (const count of [MAX_WALK_DAYS + 1, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        expect(() => daysFrom('2000-01-01', count)).toThrow(RangeError);
      }
    });

    it('should end at 9999-12-31 instead of walking on, where the old string-compared walk never ended', () => {
      expect(() => daysFrom('9999-12-31', 2)).toThrow(RangeError);
    });
  });

  describe('the one rule: years 1900–9999', () => {
    it.each([
      ['1900-01-01', true],
      ['9999-12-31', true],
      ['2024-02-29', true],
      ['1899-12-31', false],
      ['0000-01-01', false],
      ['0001-01-01', false],
      ['0099-12-31', false],
      ['10000-01-01', false],
      ['+010000-01-01', false],
      ['2026-02-30', false],
      ['2026-1-01', false],
    ])('isDateOnly(%j) should be %s', (value, valid) => {
      expect(isDateOnly(value)).toBe(valid);
    });

    it.each([
      ['1900-01-01T00:00:00Z', true],
      ['9999-12-31T23:59:59.999Z', true],
      ['2026-11-20T15:04:05.000+02:00', true],
      ['1899-12-31T23:59:59.999Z', false],
      ['1900-01-01T00:00:00+00:01', false],
      ['9999-12-31T23:00:00-05:00', false],
      ['0000-01-01T00:00:00Z', false],
      ['0001-01-01T00:00:00Z', false],
      ['10000-01-01T00:00:00Z', false],
      ['+010000-01-01T00:00:00.000Z', false],
      ['2026-W01-1', false],
      ['2026-02-30T00:00:00Z', false],
    ])('isTimestamp(%j) should be %s', (value, valid) => {
      expect(isTimestamp(value)).toBe(valid);
    });

    it('should put the instants at the first and last millisecond of the day range', () => {
      expect(new Date(MIN_TIME).toISOString()).toBe('1900-01-01T00:00:00.000Z');
      expect(new Date(MAX_TIME).toISOString()).toBe('9999-12-31T23:59:59.999Z');
    });
  });
});

/** The integer calendar arithmetic against Date's own (the slow way it replaced), on random days of years 0–9999. */
describe('dates: integer arithmetic agrees with Date', () => {
  const viaDate = {
    addDays: (day: string, days: number) =>
      new Date(Date.parse(`${day}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10),
    daysBetween: (from: string, to: string) =>
      Math.round((Date.parse(`${to}T00:00:00.000Z`) - Date.parse(`${from}T00:00:00.000Z`)) / 86_400_000),
  };
  let seed = 20261126;
  const random = (below: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % below;
  };
  const pad = (value: number, width: number) => String(value).padStart(width, '0');
  const randomDay = () => {
    const year = random(2) === 0 ? 1 + random(9_997) : 1_900 + random(200);
    const month = 1 + random(12);
    const last = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 ? 1 : 0);
    return `${pad(year, 4)}-${pad(month, 2)}-${pad(1 + random(last), 2)}`;
  };

  it('should answer what Date answers for addDays and daysBetween', () => {
    for (let i = 0; i < 20_000; i += 1) {
      const day = randomDay();
      const other = randomDay();
      const step = random(801) - 400;
      expect(addDays(day, step)).toBe(viaDate.addDays(day, step));
      expect(daysBetween(day, other)).toBe(viaDate.daysBetween(day, other));
    }
  });

  it('should keep the month arithmetic consistent with day arithmetic (a month later is that month, clamped)', () => {
    for (let i = 0; i < 20_000; i += 1) {
      const day = randomDay();
      const later = addMonths(day, random(25) - 12);
      const date = Number(day.slice(8));
      const lastOfMonth = addDays(addMonths(`${later.slice(0, 8)}01`, 1), -1);
      expect(Number(later.slice(8))).toBe(Math.min(date, Number(lastOfMonth.slice(8))));
    }
  });
});

describe('endOfDay', () => {
  it('should end a day at the next one, 9999-12-31 included (its next day has no YYYY-MM-DD)', () => {
    expect(endOfDay('2026-02-28').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(endOfDay(MAX_DAY).getTime()).toBe(MAX_TIME + 1);
  });
});
