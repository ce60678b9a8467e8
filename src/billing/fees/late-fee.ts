import type { BillingProfile } from '../profiles/billing-profile.entity';
import { LateFeeType } from '../profiles/billing-profile.entity';

/** The late fee settings of a profile (its late_fee_* columns). */
export type LateFeeSettings = Pick<
  BillingProfile,
  'lateFeeType' | 'lateFeeAmount' | 'lateFeePercentage' | 'lateFeeMinAmount' | 'lateFeeMaxAmount'
>;

/** "5.25" → 525: a percentage with at most two decimals, in hundredths of a percent. */
export function basisPoints(percentage: string): bigint {
  const [whole, decimals = ''] = percentage.split('.');
  return BigInt(whole) * 100n + BigInt(decimals.padEnd(2, '0').slice(0, 2));
}

/**
 * The late fee on `overdue` minor units, in minor units; 0: none (no late fee, or nothing overdue). Fixed: its amount.
 * Percentage: round_half_up(overdue × percent / 100) on exact integers (hundredths of a percent, BigInt, so no float
 * and no overflow), then raised to min_amount and lowered to max_amount when they are set.
 */
export function lateFeeAmount(settings: LateFeeSettings, overdue: number): number {
  if (overdue <= 0) {
    return 0;
  }
  switch (settings.lateFeeType) {
    case LateFeeType.Fixed:
      return settings.lateFeeAmount ?? 0;
    case LateFeeType.Percentage: {
      const bp = basisPoints(settings.lateFeePercentage ?? '0');
      let fee = Number((BigInt(overdue) * bp + 5_000n) / 10_000n);
      if (settings.lateFeeMinAmount !== null && fee < settings.lateFeeMinAmount) {
        fee = settings.lateFeeMinAmount;
      }
      if (settings.lateFeeMaxAmount !== null && fee > settings.lateFeeMaxAmount) {
        fee = settings.lateFeeMaxAmount;
      }
      return fee;
    }
    case null:
      return 0;
  }
}
