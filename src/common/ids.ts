import { randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export const ID_PREFIXES = [
  'sub',
  'bp',
  'txn',
  'inv',
  'alc',
  'led',
  'tkt',
  'tcm',
  'tsc',
  'plan',
  'svc',
  'tup',
  'ord',
  'brun',
  'whk',
  'dlv',
  'evt',
  'ten',
  'tok',
  'req',
  'att',
  'nas',
  'chg',
  'bri',
  'txr',
  'cn',
  'ntf',
  'nat',
  'imp',
  'clk',
  'ipp',
  'pin',
  'pss',
  'psc',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

let lastTime = -1;
let lastRandom: number[] = [];

/**
 * Random bytes are drawn from the system's CSPRNG 4 KiB at a time and each used once: one call per 256 ids instead of
 * one per id (that call was 4–5 % of the server's CPU on a get by id, where the request id is the only id made; Node's
 * own randomUUID caches the same way).
 */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

/** 16 base-32 digits (80 random bits): 256 is a multiple of 32, so `byte % 32` is uniform. */
function randomDigits(): number[] {
  if (poolOffset + 16 > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const digits = new Array<number>(16);
  for (let i = 0; i < 16; i++) {
    digits[i] = POOL[poolOffset + i] % 32;
  }
  poolOffset += 16;
  return digits;
}

/** Adds one to a base-32 digit array; on overflow of all 16 digits the caller's clock is in the future anyway. */
function increment(digits: number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 31) {
      next[i] += 1;
      return next;
    }
    next[i] = 0;
  }
  return next;
}

/**
 * A monotonic ULID: 48 bits of milliseconds then 80 random bits, Crockford base32. Ids made in the same millisecond
 * by this process increase, so they sort in creation order.
 */
export function ulid(now: number): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
  } else {
    lastTime = now;
    lastRandom = randomDigits();
  }
  let time = '';
  let ms = lastTime;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[ms % 32] + time;
    ms = Math.floor(ms / 32);
  }
  return time + lastRandom.map((digit) => CROCKFORD[digit]).join('');
}

/** A new id; `at` (the caller's Clock reading, as the record's created_at) is the instant its first 10 characters encode. */
export function newId(prefix: IdPrefix, at: Date): string {
  return `${prefix}_${ulid(at.getTime())}`;
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`).test(value);
}
