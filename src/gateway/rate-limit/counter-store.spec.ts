import { performance } from 'node:perf_hooks';
import { type Counter, type CounterStore, MemoryCounterStore } from './counter-store';
import { CounterThrottlerStorage } from './counter-throttler.storage';

/**
 * `(now + 60000) - now` is 60000.00000000012 for this `now` (about one in sixteen readings of performance.now() round
 * so): a first hit then said its 60 s window reset in 61 s (RateLimit t=61, Retry-After 61), and the rate-limit e2e
 * suite failed now and then on it.
 */
const ROUNDS_UP = 993463.8357574128;

describe('MemoryCounterStore', () => {
  let store: MemoryCounterStore;
  beforeEach(() => {
    store = new MemoryCounterStore();
    jest.spyOn(performance, 'now').mockReturnValue(ROUNDS_UP);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
  });

  it('should never leave more of a window than the window, on the hit that opens it', async () => {
    expect(ROUNDS_UP + 60_000 - ROUNDS_UP).toBeGreaterThan(60_000); // the rounding this guards against
    await expect(store.hit('k', 60_000)).resolves.toEqual({ count: 1, resetMs: 60_000 });
    await expect(store.get('k')).resolves.toEqual({ count: 1, resetMs: 60_000 });
  });

  it('should never leave more than the ttl of a counter it was told to set', async () => {
    await store.set('blocked', 900_000);
    const counter = await store.get('blocked');
    expect(counter!.resetMs).toBeLessThanOrEqual(900_000);
  });

  it('should count down the window as time passes and open a new one after it', async () => {
    await store.hit('k', 60_000);
    jest.spyOn(performance, 'now').mockReturnValue(ROUNDS_UP + 59_000.5);
    const second = await store.hit('k', 60_000);
    expect(second.count).toBe(2);
    expect(second.resetMs).toBeCloseTo(999.5, 6);
    jest.spyOn(performance, 'now').mockReturnValue(ROUNDS_UP + 60_000);
    await expect(store.hit('k', 60_000)).resolves.toMatchObject({ count: 1 });
  });
});

describe('CounterThrottlerStorage', () => {
  function storageAnswering(counter: Counter): CounterThrottlerStorage {
    const store: CounterStore = {
      hit: () => Promise.resolve(counter),
      get: () => Promise.resolve(counter),
      set: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    return new CounterThrottlerStorage(store);
  }

  it.each([
    [60_000.00000000012, 60],
    [60_000, 60],
    [59_000.1, 60],
    [59_000, 59],
    [0.4, 1],
    [0, 1],
  ])(
    'should say a window with %p ms left resets in %p s (1 to the window, whole seconds up)',
    async (left, seconds) => {
      const record = await storageAnswering({ count: 1, resetMs: left }).increment('key', 60_000, 3);
      expect(record.timeToExpire).toBe(seconds);
      expect(record.timeToBlockExpire).toBe(seconds);
    },
  );
});
