import type { ValueTransformer } from 'typeorm';

/** Money is integer minor units: bigint in Postgres, a safe integer in TypeScript, never a float. */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

export const bigintMoney: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => {
    if (value === null) {
      return null;
    }
    const amount = Number(value);
    if (!Number.isSafeInteger(amount)) {
      throw new Error(`Amount ${value} exceeds the safe integer range`);
    }
    return amount;
  },
};
