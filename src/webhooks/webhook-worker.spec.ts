import { formatDuration, retryInSeconds } from './webhook-worker';
import type { SendResult } from './webhook-sender';

const DELAYS = [60, 300, 3600];

const answered = (statusCode: number | null, retryAfterS: number | null = null): SendResult => ({
  statusCode,
  body: null,
  durationMs: 12,
  error: statusCode === null ? 'connect ECONNREFUSED' : null,
  retryAfterS,
});

describe('retryInSeconds', () => {
  afterEach(() => jest.restoreAllMocks());

  it('should not retry a delivery the endpoint took, nor one it says is gone', () => {
    for (const statusCode of [200, 201, 204, 299, 410]) {
      expect([statusCode, retryInSeconds(1, answered(statusCode), DELAYS)]).toEqual([statusCode, null]);
    }
  });

  it('should retry any other answer, or none, after the delay of its attempt', () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5); // no jitter
    expect(retryInSeconds(1, answered(500), DELAYS)).toBeCloseTo(60);
    expect(retryInSeconds(2, answered(null), DELAYS)).toBeCloseTo(300);
    expect(retryInSeconds(3, answered(301), DELAYS)).toBeCloseTo(3600);
    expect(retryInSeconds(1, answered(199), DELAYS)).toBeCloseTo(60);
    expect(retryInSeconds(1, answered(300), DELAYS)).toBeCloseTo(60);
  });

  it('should give up once every retry was used', () => {
    expect(retryInSeconds(4, answered(500), DELAYS)).toBeNull();
    expect(retryInSeconds(1, answered(500), [])).toBeNull();
  });

  it('should spread the retries within ±10 % of the delay', () => {
    jest.spyOn(Math, 'random').mockReturnValue(0);
    expect(retryInSeconds(2, answered(500), DELAYS)).toBeCloseTo(270);
    jest.spyOn(Math, 'random').mockReturnValue(0.999_999);
    expect(retryInSeconds(2, answered(500), DELAYS)).toBeCloseTo(330);
  });

  it("should honour a 429's or a 503's Retry-After, up to a day, and no other answer's", () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    expect(retryInSeconds(1, answered(429, 7), DELAYS)).toBe(7);
    expect(retryInSeconds(1, answered(503, 0), DELAYS)).toBe(0);
    expect(retryInSeconds(1, answered(503, 999_999), DELAYS)).toBe(86_400);
    expect(retryInSeconds(1, answered(429, null), DELAYS)).toBeCloseTo(60);
    expect(retryInSeconds(1, answered(500, 7), DELAYS)).toBeCloseTo(60);
    // The last retry is the last, whatever the endpoint asks.
    expect(retryInSeconds(4, answered(429, 7), DELAYS)).toBeNull();
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0 seconds'],
    [3599, '3599 seconds'],
    [3600, '1 hours'],
    [5 * 3600 + 1799, '5 hours'],
    [86_399, '24 hours'],
    [86_400, '1 days'],
    [3 * 86_400, '3 days'],
  ])('should say %d seconds as %s', (seconds, words) => {
    expect(formatDuration(seconds)).toBe(words);
  });
});
