import { ConfigError, loadConfig } from './app-config';

describe('database timeouts configuration', () => {
  it('should default to a 30 s statement timeout, 60 s idle in transaction and a 5 s acquire timeout', () => {
    expect(loadConfig({}).databaseTimeouts).toEqual({
      statementMs: 30_000,
      idleInTransactionMs: 60_000,
      acquireMs: 5_000,
    });
  });

  it('should take each from its environment variable', () => {
    const config = loadConfig({
      DATABASE_STATEMENT_TIMEOUT_MS: '1000',
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0',
      DATABASE_ACQUIRE_TIMEOUT_MS: '250',
    });
    expect(config.databaseTimeouts).toEqual({ statementMs: 1000, idleInTransactionMs: 0, acquireMs: 250 });
  });

  it.each([
    ['DATABASE_STATEMENT_TIMEOUT_MS', '-1'],
    ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 'soon'],
    ['DATABASE_ACQUIRE_TIMEOUT_MS', '0'],
  ])('should refuse %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
