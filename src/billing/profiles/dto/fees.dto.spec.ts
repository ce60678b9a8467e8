import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { BillingProfile, LateFeeType } from '../billing-profile.entity';
import {
  canonicalPercentage,
  isLateFeePercentage,
  lateFeeColumns,
  lateFeeOf,
  PercentageLateFeeFormDto,
} from './fees.dto';

describe('late fee percentages', () => {
  it.each(['5', '5.5', '5.00', '0.01', '100', '100.00', '099'])('should take %s', (value) => {
    expect(isLateFeePercentage(value)).toBe(true);
  });

  it.each(['0', '0.00', '100.01', '101', '5.005', '-5', '5.', '.5', ' 5', '1e1', '1000'])(
    'should refuse %s',
    (value) => {
      expect(isLateFeePercentage(value)).toBe(false);
    },
  );

  it('should refuse a number that is not a string', () => {
    expect(isLateFeePercentage(5)).toBe(false);
    expect(isLateFeePercentage(null)).toBe(false);
  });

  it.each([
    ['5', '5.00'],
    ['5.5', '5.50'],
    ['5.05', '5.05'],
    ['099', '99.00'],
    ['100', '100.00'],
    ['0.01', '0.01'],
  ])('should keep %s as %s', (value, canonical) => {
    expect(canonicalPercentage(value)).toBe(canonical);
  });
});

describe('late fee columns', () => {
  const profile = (columns: ReturnType<typeof lateFeeColumns>) =>
    Object.assign(new BillingProfile(), columns);

  it('should store a fixed fee and show it back, clearing the percentage columns', () => {
    const columns = lateFeeColumns({ type: LateFeeType.Fixed, amount: 500, after_days: 7 });
    expect(columns).toEqual({
      lateFeeType: LateFeeType.Fixed,
      lateFeeAmount: 500,
      lateFeePercentage: null,
      lateFeeMinAmount: null,
      lateFeeMaxAmount: null,
      lateFeeAfterDays: 7,
    });
    expect(lateFeeOf(profile(columns))).toEqual({ type: LateFeeType.Fixed, amount: 500, after_days: 7 });
  });

  it('should store a percentage in its canonical form, with no floor or ceiling when none is given', () => {
    const columns = lateFeeColumns({ type: LateFeeType.Percentage, percentage: '2.5' });
    expect(columns).toEqual({
      lateFeeType: LateFeeType.Percentage,
      lateFeeAmount: null,
      lateFeePercentage: '2.50',
      lateFeeMinAmount: null,
      lateFeeMaxAmount: null,
      lateFeeAfterDays: 0,
    });
    expect(lateFeeOf(profile({ ...columns, lateFeeMinAmount: 100, lateFeeMaxAmount: 900 }))).toEqual({
      type: LateFeeType.Percentage,
      percentage: '2.50',
      min_amount: 100,
      max_amount: 900,
      after_days: 0,
    });
  });

  it('should clear every column for no fee, and show none', () => {
    const columns = lateFeeColumns(null);
    expect(columns).toEqual({
      lateFeeType: null,
      lateFeeAmount: null,
      lateFeePercentage: null,
      lateFeeMinAmount: null,
      lateFeeMaxAmount: null,
      lateFeeAfterDays: 0,
    });
    expect(lateFeeOf(profile(columns))).toBeNull();
  });
});

describe('PercentageLateFeeFormDto', () => {
  const problems = (plain: object) =>
    validateSync(plainToInstance(PercentageLateFeeFormDto, plain)).map((error) => error.property);

  it('should take a ceiling equal to or above the floor, or either alone', () => {
    expect(problems({ type: 'percentage', percentage: '5', min_amount: 100, max_amount: 100 })).toEqual([]);
    expect(problems({ type: 'percentage', percentage: '5', max_amount: 1 })).toEqual([]);
    expect(problems({ type: 'percentage', percentage: '5', min_amount: 1 })).toEqual([]);
  });

  it('should refuse a ceiling below the floor, and a percentage out of range', () => {
    expect(problems({ type: 'percentage', percentage: '5', min_amount: 100, max_amount: 99 })).toEqual([
      'max_amount',
    ]);
    expect(problems({ type: 'percentage', percentage: '0' })).toEqual(['percentage']);
  });
});
