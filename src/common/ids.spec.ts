import { isId, newId, ulid } from './ids';

describe('ids', () => {
  it('should make prefixed ids of 26 Crockford characters', () => {
    expect(isId('sub', newId('sub'))).toBe(true);
    expect(isId('sub', newId('txn'))).toBe(false);
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
});
