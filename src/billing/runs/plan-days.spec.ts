import fc from 'fast-check';
import { type BillableService, gridPeriod, periodAmount, type PlanInfo, planOn, prorate } from './plan-days';

const plan = (billingPeriod: PlanInfo['billingPeriod'], price: number): PlanInfo => ({
  id: `plan_${billingPeriod}`,
  name: billingPeriod,
  price,
  currency: 'EUR',
  billingPeriod,
});

const service = (fields: Partial<BillableService>): BillableService => ({
  id: 'svc_1',
  planId: 'plan_now',
  billedInAdvance: true,
  activatedOn: '2026-01-10',
  terminatedOn: null,
  planChanges: [],
  billedUntil: null,
  openCharges: [],
  ...fields,
});

describe('prorate', () => {
  it.each([
    [1000, 0, 31, 0], // no day
    [0, 15, 31, 0], // nothing to share
    [3100, 31, 31, 3100], // the whole period is the whole amount
    [5, 1, 2, 3], // 2.5 → 3 (half up)
    [7, 1, 3, 2], // 2.33 → 2
    [2, 2, 3, 1], // 1.33 → 1
    [-5, 1, 2, -3], // half away from zero on a credit
    [-7, 2, 3, -5], // -4.67 → -5
  ])('should share %d as %d/%d of it: %d', (amount, numerator, denominator, share) => {
    expect(prorate(amount, numerator, denominator)).toBe(share);
  });

  it('should give a credit the same size as the charge it undoes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 366 }),
        fc.integer({ min: 0, max: 366 }),
        (amount, denominator, days) => {
          const numerator = Math.min(days, denominator);
          expect(prorate(-amount, numerator, denominator) + prorate(amount, numerator, denominator)).toBe(0);
        },
      ),
    );
  });

  it('should never charge more for fewer days, nor more than the whole for part of it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 1, max: 366 }),
        fc.integer({ min: 0, max: 365 }),
        (amount, denominator, days) => {
          const numerator = Math.min(days, denominator - 1);
          const share = prorate(amount, numerator, denominator);
          expect(share).toBeLessThanOrEqual(prorate(amount, numerator + 1, denominator));
          expect(share).toBeLessThanOrEqual(amount);
          expect(Number.isSafeInteger(share)).toBe(true);
        },
      ),
    );
  });
});

describe('periodAmount', () => {
  it('should bill a monthly plan its price whatever the length of the month', () => {
    const monthly = plan('monthly', 3100);
    expect(periodAmount(monthly, '2026-02-01')).toBe(3100);
    expect(periodAmount(monthly, '2026-01-31')).toBe(3100);
    expect(periodAmount(monthly, '2024-02-29')).toBe(3100);
  });

  it("should bill a quarterly plan the month's days of the quarter starting there", () => {
    const quarterly = plan('quarterly', 9100);
    // April has 30 of the 91 days from 2026-04-01 to 2026-07-01.
    expect(periodAmount(quarterly, '2026-04-01')).toBe(3000);
    // From a month's end: 2026-01-31 → 02-28 is 28 days of the 89 to 04-30 (the ends clamp to the last day).
    expect(periodAmount(quarterly, '2026-01-31')).toBe(prorate(9100, 28, 89));
    expect(prorate(9100, 28, 89)).toBe(2863);
  });

  it('should count a leap day in both the month and the year of a yearly plan', () => {
    const yearly = plan('yearly', 36_600);
    expect(periodAmount(yearly, '2024-02-01')).toBe(2900); // 29 of 366
    expect(periodAmount(yearly, '2025-02-01')).toBe(prorate(36_600, 28, 365)); // 28 of 365
    expect(periodAmount(yearly, '2025-02-01')).toBe(2808);
  });

  it('should add up, over the twelve months of a year, to within a minor unit per month of the yearly price', () => {
    const yearly = plan('yearly', 120_000);
    const starts = Array.from({ length: 12 }, (_, m) => `2026-${String(m + 1).padStart(2, '0')}-01`);
    const sum = starts.reduce((total, start) => total + periodAmount(yearly, start), 0);
    // Each month is its share of the year starting that month (365 days each, 2027 not being leap).
    expect(Math.abs(sum - 120_000)).toBeLessThanOrEqual(12);
  });
});

describe('planOn', () => {
  it('should bill nothing before activation, nor for a service never activated', () => {
    expect(planOn(service({ activatedOn: null }), '2026-03-01')).toBeNull();
    expect(planOn(service({}), '2026-01-09')).toBeNull();
    expect(planOn(service({}), '2026-01-10')).toBe('plan_now');
  });

  it('should bill the last day before termination and not the day of it', () => {
    const ended = service({ terminatedOn: '2026-03-15' });
    expect(planOn(ended, '2026-03-14')).toBe('plan_now');
    expect(planOn(ended, '2026-03-15')).toBeNull();
    expect(planOn(ended, '2026-04-01')).toBeNull();
  });

  it('should follow the plan changes, a change counting from its own day', () => {
    const changed = service({
      planId: 'plan_b',
      planChanges: [
        { on: '2026-01-10', planId: 'plan_a' },
        { on: '2026-02-15', planId: 'plan_b' },
      ],
    });
    expect(planOn(changed, '2026-01-10')).toBe('plan_a');
    expect(planOn(changed, '2026-02-14')).toBe('plan_a');
    expect(planOn(changed, '2026-02-15')).toBe('plan_b');
    expect(planOn(changed, '2026-12-31')).toBe('plan_b');
  });

  it('should take the earliest known plan for days before the first recorded change, not the current one', () => {
    // History begins after activation (changes older than billing looks at are not read).
    const changed = service({
      planId: 'plan_c',
      planChanges: [
        { on: '2026-02-01', planId: 'plan_b' },
        { on: '2026-03-01', planId: 'plan_c' },
      ],
    });
    expect(planOn(changed, '2026-01-20')).toBe('plan_b');
  });
});

describe('gridPeriod', () => {
  it('should start the period on the billing day itself', () => {
    expect(gridPeriod('2026-03-01', 1)).toEqual({ start: '2026-03-01', end: '2026-04-01' });
    expect(gridPeriod('2026-03-31', 1)).toEqual({ start: '2026-03-01', end: '2026-04-01' });
  });

  it('should reach back across a year end for a day before the billing day', () => {
    expect(gridPeriod('2026-01-04', 5)).toEqual({ start: '2025-12-05', end: '2026-01-05' });
  });

  it('should handle billing day 28 around a leap day', () => {
    expect(gridPeriod('2024-02-29', 28)).toEqual({ start: '2024-02-28', end: '2024-03-28' });
    expect(gridPeriod('2024-02-27', 28)).toEqual({ start: '2024-01-28', end: '2024-02-28' });
    expect(gridPeriod('2025-03-01', 28)).toEqual({ start: '2025-02-28', end: '2025-03-28' });
  });

  it('should hold every day in exactly the period it names, one month long', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('1990-01-01T00:00:00Z'),
          max: new Date('2090-12-31T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.integer({ min: 1, max: 28 }),
        (at, billingDay) => {
          const day = at.toISOString().slice(0, 10);
          const { start, end } = gridPeriod(day, billingDay);
          expect(start <= day && day < end).toBe(true);
          expect(Number(start.slice(8, 10))).toBe(billingDay);
          expect(Number(end.slice(8, 10))).toBe(billingDay);
        },
      ),
    );
  });
});
