import { isId, newId, ulid } from './ids';

describe('ids', () => {
  it('should make prefixed ids of 26 Crockford characters', () => {
    expect(isId('sub', newId('sub', new Date('2026-12-01T12:00:00.000Z')))).toBe(true);
    expect(isId('sub', newId('txn', new Date('2026-12-01T12:00:00.000Z')))).toBe(false);
  });

  it('should increase within one millisecond', () => {
    const now = Date.now() + 10_000;
    const ids = Array.from({ length: 1000 }, () => ulid(now));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('should sort by time across milliseconds', () => {
    const later = Date.now() + 20_000;
    expect(ulid(later) < ulid(later + 1)).toBe(true);
  });

  it('should draw fresh random bits for every millisecond, across refills of the random pool', () => {
    const start = Date.now() + 30_000;
    // 1,000 milliseconds use 16,000 random bytes: the 4 KiB pool is refilled three times on the way.
    const randomParts = Array.from({ length: 1000 }, (_, i) => ulid(start + i).slice(10));
    expect(new Set(randomParts).size).toBe(randomParts.length);
    const digits = randomParts.join('');
    // Every base-32 digit shows up, roughly evenly (16,000 digits: 500 expected each).
    const counts = [...'0123456789ABCDEFGHJKMNPQRSTVWXYZ'].map((c) => digits.split(c).length - 1);
    expect(Math.min(...counts)).toBeGreaterThan(350);
    expect(Math.max(...counts)).toBeLessThan(650);
  });
});
