import { MAX_CATCH_UP_DAYS, scheduledDays } from './billing-run-worker';

const RUN_HOUR = 3;

const days = (today: string, hour: number, from: string, billingDays: number[]) =>
  scheduledDays({ today, hour, runHourUtc: RUN_HOUR, from, billingDays });

describe('scheduledDays', () => {
  it("should start today's run once the run hour has come, and not before", () => {
    expect(days('2026-03-17', RUN_HOUR - 1, '2026-03-17', [1])).toEqual([]);
    expect(days('2026-03-17', RUN_HOUR, '2026-03-17', [1])).toEqual(['2026-03-17']);
    expect(days('2026-03-17', 23, '2026-03-17', [1])).toEqual(['2026-03-17']);
  });

  it("should run today whatever the day, and a missed day only when it is one of the tenant's billing days", () => {
    expect(days('2026-03-03', 5, '2026-02-27', [1, 28])).toEqual(['2026-02-28', '2026-03-01', '2026-03-03']);
  });

  it("should catch up yesterday's billing day before today's run hour, without starting today's", () => {
    expect(days('2026-03-02', 1, '2026-03-01', [1])).toEqual(['2026-03-01']);
    expect(days('2026-03-02', 1, '2026-03-01', [15])).toEqual([]);
  });

  it('should reach back at most MAX_CATCH_UP_DAYS, the oldest day of that reach included', () => {
    expect(MAX_CATCH_UP_DAYS).toBe(62);
    // 2026-03-03 less 62 days is 2025-12-31.
    expect(days('2026-03-03', 5, '2025-06-01', [31])).toEqual(['2025-12-31', '2026-01-31', '2026-03-03']);
    expect(days('2026-03-03', 5, '2025-06-01', [1])).toEqual([
      '2026-01-01',
      '2026-02-01',
      '2026-03-01',
      '2026-03-03',
    ]);
  });

  it('should answer the days oldest first, each once, across a year end', () => {
    expect(days('2026-01-02', 4, '2025-12-30', [1, 31])).toEqual(['2025-12-31', '2026-01-01', '2026-01-02']);
  });

  it('should answer nothing when the tenant is scheduled up to date', () => {
    expect(days('2026-03-17', 5, '2026-03-18', [17, 18])).toEqual([]);
  });
});
