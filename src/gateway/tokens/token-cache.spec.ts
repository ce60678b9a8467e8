import type { ApiToken } from './api-token.entity';
import { TokenCache } from './token-cache';

const token = { id: 'tok_1' } as ApiToken;

describe('TokenCache', () => {
  it('should answer from memory within the TTL', async () => {
    const cache = new TokenCache(10_000);
    const load = jest.fn().mockResolvedValue(token);
    await cache.get('h', load);
    await cache.get('h', load);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('should load again after forget', async () => {
    const cache = new TokenCache(10_000);
    const load = jest.fn().mockResolvedValue(token);
    await cache.get('h', load);
    cache.forget('h');
    await cache.get('h', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('should not keep the answer of a lookup that was under way when the token was forgotten', async () => {
    const cache = new TokenCache(10_000);
    let release: (value: ApiToken) => void = () => undefined;
    const slow = cache.get('h', () => new Promise<ApiToken>((resolve) => (release = resolve)));
    cache.forget('h');
    release(token);
    await slow;
    const load = jest.fn().mockResolvedValue(null);
    expect(await cache.get('h', load)).toBeNull();
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('should not cache at all with a TTL of 0', async () => {
    const cache = new TokenCache(0);
    const load = jest.fn().mockResolvedValue(token);
    await cache.get('h', load);
    await cache.get('h', load);
    expect(load).toHaveBeenCalledTimes(2);
  });
});
