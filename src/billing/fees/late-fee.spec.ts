import { LateFeeType } from '../profiles/billing-profile.entity';
import { basisPoints, lateFeeAmount, type LateFeeSettings } from './late-fee';

const none: LateFeeSettings = {
  lateFeeType: null,
  lateFeeAmount: null,
  lateFeePercentage: null,
  lateFeeMinAmount: null,
  lateFeeMaxAmount: null,
};
const fixed = (amount: number): LateFeeSettings => ({
  ...none,
  lateFeeType: LateFeeType.Fixed,
  lateFeeAmount: amount,
});
const percent = (
  percentage: string,
  min: number | null = null,
  max: number | null = null,
): LateFeeSettings => ({
  ...none,
  lateFeeType: LateFeeType.Percentage,
  lateFeePercentage: percentage,
  lateFeeMinAmount: min,
  lateFeeMaxAmount: max,
});

describe('late fees', () => {
  it('should read a percentage in hundredths of a percent', () => {
    expect(basisPoints('5.00')).toBe(500n);
    expect(basisPoints('5.5')).toBe(550n);
    expect(basisPoints('0.01')).toBe(1n);
    expect(basisPoints('100.00')).toBe(10_000n);
    expect(basisPoints('12')).toBe(1_200n);
  });

  it('should charge a fixed fee whatever the overdue amount, and nothing when nothing is overdue', () => {
    expect(lateFeeAmount(fixed(500), 1)).toBe(500);
    expect(lateFeeAmount(fixed(500), 1_000_000)).toBe(500);
    expect(lateFeeAmount(fixed(500), 0)).toBe(0);
    expect(lateFeeAmount(none, 3100)).toBe(0);
  });

  it.each([
    ['5.00', 3100, 155], // exact
    ['5.00', 3110, 156], // 155.5 → 156 (half up)
    ['5.00', 3109, 155], // 155.45 → 155
    ['2.50', 1, 0], // 0.025 → 0
    ['50.00', 1, 1], // 0.5 → 1
    ['33.33', 100, 33], // 33.33 → 33
    ['100.00', 4321, 4321],
    ['0.01', 9_007_199_254_740_991, 900_719_925_474], // no float, no overflow: 900719925474.0991 → …474
    ['99.99', 9_007_199_254_740_991, 9_006_298_534_815_517], // 9006298534815516.9009 → …517
  ])('should charge %s%% of %d as %d, rounded half up', (percentage, overdue, fee) => {
    expect(lateFeeAmount(percent(percentage), overdue)).toBe(fee);
  });

  it('should hold a percentage fee between its floor and its ceiling', () => {
    expect(lateFeeAmount(percent('5.00', 200), 1000)).toBe(200); // 50 → floor
    expect(lateFeeAmount(percent('5.00', 200, 1000), 100_000)).toBe(1000); // 5000 → ceiling
    expect(lateFeeAmount(percent('5.00', 200, 1000), 10_000)).toBe(500); // between
    expect(lateFeeAmount(percent('5.00', 200), 0)).toBe(0); // nothing overdue: no floor either
  });
});
