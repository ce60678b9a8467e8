/**
 * The metadata keys @nestjs/throttler's decorators (Throttle, SkipThrottle) write, each followed by the throttler's
 * name. The package keeps them in a file it does not export (dist/throttler.constants), so they are spelled here;
 * throttler-metadata.spec.ts applies the public decorators and fails if an upgrade renames one.
 */
export const THROTTLER_METADATA = {
  limit: 'THROTTLER:LIMIT',
  ttl: 'THROTTLER:TTL',
  blockDuration: 'THROTTLER:BLOCK_DURATION',
  tracker: 'THROTTLER:TRACKER',
  keyGenerator: 'THROTTLER:KEY_GENERATOR',
  skip: 'THROTTLER:SKIP',
} as const;
