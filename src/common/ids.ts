import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export const ID_PREFIXES = [
  'sub',
  'bp',
  'txn',
  'inv',
  'alc',
  'led',
  'tkt',
  'plan',
  'svc',
  'ord',
  'whk',
  'dlv',
  'evt',
  'ten',
  'tok',
  'req',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

/** A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32, so ids sort by creation time. */
export function ulid(now = Date.now()): string {
  let time = '';
  let ms = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[ms % 32] + time;
    ms = Math.floor(ms / 32);
  }
  const bytes = randomBytes(16);
  let random = '';
  for (let i = 0; i < 16; i++) random += CROCKFORD[bytes[i] % 32];
  return time + random;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`;
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`).test(value);
}
