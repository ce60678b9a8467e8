import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('should give the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: null,
      redisUrl: null,
      bootstrapToken: null,
      logLevel: 'info',
      rateLimit: { max: 600, windowS: 60 },
      abuse: { authFailuresMax: 20, windowS: 300, blockS: 900 },
    });
    expect(config.webhooks.retryDelaysS).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://localhost'],
    ['API_BOOTSTRAP_TOKEN', 'too-short'],
    ['LOG_LEVEL', 'loud'],
    ['RATE_LIMIT_MAX', '0'],
    ['RATE_LIMIT_WINDOW_S', '-1'],
    ['ABUSE_AUTH_FAILURES_MAX', '1.5'],
    ['ABUSE_WINDOW_S', 'x'],
    ['ABUSE_BLOCK_S', '0'],
    ['TRUST_PROXY', 'maybe'],
    ['WEBHOOK_RETRY_DELAYS_S', '5,,10'],
    ['DATABASE_POOL_MAX', '0'],
  ])('should stop on %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('should read the values it is given', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/isp',
      REDIS_URL: 'redis://cache:6379',
      API_BOOTSTRAP_TOKEN: 'x'.repeat(32),
      RATE_LIMIT_MAX: '10',
      WEBHOOK_RETRY_DELAYS_S: '0.5,2',
      TRUST_PROXY: 'true',
    });
    expect(config).toMatchObject({
      port: 8080,
      databaseUrl: 'postgres://u@db:5432/isp',
      redisUrl: 'redis://cache:6379',
      bootstrapToken: 'x'.repeat(32),
      rateLimit: { max: 10, windowS: 60 },
      trustProxy: true,
    });
    expect(config.webhooks.retryDelaysS).toEqual([0.5, 2]);
  });
});
