import { performance } from 'node:perf_hooks';
import type { ApiToken } from './api-token.entity';

const MAX_ENTRIES = 10_000;

/**
 * Remembers token lookups for a few seconds, so an authenticated request costs no query for its token. Unknown
 * tokens are remembered too (a flood of bad tokens must not become a flood of queries). Revocation in this process
 * forgets the token at once; other instances see it within the TTL. Expiry is checked on every use by the caller.
 */
export class TokenCache {
  private readonly entries = new Map<string, { token: ApiToken | null; until: number }>();
  private readonly pending = new Map<string, Promise<ApiToken | null>>();
  /** Bumped by forget(): a lookup that started before it must not put its (stale) answer back. */
  private readonly generations = new Map<string, number>();

  constructor(private readonly ttlMs: number) {}

  async get(hash: string, load: () => Promise<ApiToken | null>): Promise<ApiToken | null> {
    if (this.ttlMs === 0) {
      return load();
    }
    // A TTL is elapsed time, not a date: the monotonic clock, which a moved wall clock (or a test's Clock) leaves alone.
    const now = performance.now();
    const hit = this.entries.get(hash);
    if (hit && hit.until > now) {
      return hit.token;
    }
    const generation = this.generations.get(hash) ?? 0;
    // Concurrent misses for one token share one query.
    let loading = this.pending.get(hash);
    if (!loading) {
      loading = load().finally(() => this.pending.delete(hash));
      this.pending.set(hash, loading);
    }
    const token = await loading;
    if ((this.generations.get(hash) ?? 0) !== generation) {
      return token;
    }
    if (this.entries.size >= MAX_ENTRIES) {
      this.entries.clear();
    }
    this.entries.set(hash, { token, until: now + this.ttlMs });
    return token;
  }

  forget(hash: string): void {
    this.entries.delete(hash);
    this.pending.delete(hash);
    this.generations.set(hash, (this.generations.get(hash) ?? 0) + 1);
  }
}
