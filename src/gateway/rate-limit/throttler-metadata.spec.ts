import 'reflect-metadata';
import { SkipThrottle, Throttle } from '@nestjs/throttler';
import { THROTTLER_METADATA } from './throttler-metadata';

describe('THROTTLER_METADATA', () => {
  it('names the keys the public Throttle decorator writes', () => {
    const getTracker = () => 'tracker';
    const generateKey = () => 'key';
    class Probe {
      @Throttle({ probe: { limit: 3, ttl: 5000, blockDuration: 7000, getTracker, generateKey } })
      route(): void {}
    }
    const route = Object.getOwnPropertyDescriptor(Probe.prototype, 'route')!.value as object;
    const read = (key: string): unknown => Reflect.getMetadata(`${key}probe`, route);

    expect(read(THROTTLER_METADATA.limit)).toBe(3);
    expect(read(THROTTLER_METADATA.ttl)).toBe(5000);
    expect(read(THROTTLER_METADATA.blockDuration)).toBe(7000);
    expect(read(THROTTLER_METADATA.tracker)).toBe(getTracker);
    expect(read(THROTTLER_METADATA.keyGenerator)).toBe(generateKey);
  });

  it('names the key the public SkipThrottle decorator writes', () => {
    @SkipThrottle()
    class Probe {}

    expect(Reflect.getMetadata(`${THROTTLER_METADATA.skip}default`, Probe)).toBe(true);
  });
});
