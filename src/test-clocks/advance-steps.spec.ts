import { advanceSteps, billsDayAt } from './advance-steps';

const iso = (dates: Date[]): string[] => dates.map((date) => date.toISOString());

describe('advanceSteps', () => {
  it('should stop at the start, each day at the run hour in between, and the end', () => {
    expect(iso(advanceSteps(new Date('2027-01-01T00:00:00Z'), new Date('2027-01-03T12:00:00Z'), 2))).toEqual([
      '2027-01-01T00:00:00.000Z',
      '2027-01-01T02:00:00.000Z',
      '2027-01-02T02:00:00.000Z',
      '2027-01-03T02:00:00.000Z',
      '2027-01-03T12:00:00.000Z',
    ]);
  });

  it('should skip the start day run hour when the start is past it', () => {
    expect(iso(advanceSteps(new Date('2027-01-01T05:00:00Z'), new Date('2027-01-02T01:00:00Z'), 2))).toEqual([
      '2027-01-01T05:00:00.000Z',
      '2027-01-02T01:00:00.000Z',
    ]);
  });

  it('should end on the run hour once when the target is that instant', () => {
    expect(iso(advanceSteps(new Date('2027-01-01T03:00:00Z'), new Date('2027-01-02T02:00:00Z'), 2))).toEqual([
      '2027-01-01T03:00:00.000Z',
      '2027-01-02T02:00:00.000Z',
    ]);
  });

  it('should bill a day only from its run hour', () => {
    expect(billsDayAt(new Date('2027-01-01T01:59:59Z'), 2)).toBe(false);
    expect(billsDayAt(new Date('2027-01-01T02:00:00Z'), 2)).toBe(true);
  });
});
