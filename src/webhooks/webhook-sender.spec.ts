import { retryAfterSeconds } from './webhook-sender';

const NOW = new Date('2026-03-01T12:00:00.000Z');

describe('retryAfterSeconds', () => {
  it('should read a number of seconds, spaces around it allowed', () => {
    expect(retryAfterSeconds('120', NOW)).toBe(120);
    expect(retryAfterSeconds(' 0 ', NOW)).toBe(0);
  });

  it("should read an HTTP date as the seconds from the app's now, rounded up", () => {
    expect(retryAfterSeconds('Sun, 01 Mar 2026 12:01:00 GMT', NOW)).toBe(60);
    expect(retryAfterSeconds('Sun, 01 Mar 2026 12:00:00 GMT', new Date('2026-03-01T11:59:59.500Z'))).toBe(1);
  });

  it('should read a date already past as now', () => {
    expect(retryAfterSeconds('Sun, 01 Mar 2026 11:00:00 GMT', NOW)).toBe(0);
  });

  it('should ignore a header that is absent, empty or neither form', () => {
    expect(retryAfterSeconds(undefined, NOW)).toBeNull();
    expect(retryAfterSeconds('', NOW)).toBeNull();
    expect(retryAfterSeconds('soon', NOW)).toBeNull();
    expect(retryAfterSeconds('12 apples', NOW)).toBeNull();
    expect(retryAfterSeconds('Mon, 32 Foo 2026 10:00:00 GMT', NOW)).toBeNull();
  });
});
