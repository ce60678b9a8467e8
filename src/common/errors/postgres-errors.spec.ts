import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from './postgres-errors';

function pgError(code: string, message = 'failed'): Error {
  return Object.assign(new Error(message), { code });
}

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a statement cancelled by statement_timeout', pgError('57014')],
    ['a session ended by idle_in_transaction_session_timeout', pgError('25P03')],
    ['a server shutting down', pgError('57P01')],
    ['a server out of connections', pgError('53300')],
    ['a broken connection', pgError('08006')],
    ['a refused connection', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    [
      'a Unix socket whose file went with its server (ENOENT, any connect/read/write system error)',
      Object.assign(pgError('ENOENT', 'connect ENOENT /tmp/.s.PGSQL.5432'), { syscall: 'connect' }),
    ],
    [
      'a socket the server stopped reading (EPIPE on write)',
      Object.assign(pgError('EPIPE', 'write EPIPE'), { syscall: 'write' }),
    ],
    ['no pooled connection in time', new Error('timeout exceeded when trying to connect')],
    ['a connection the server ended', new Error('Connection terminated unexpectedly')],
    [
      'any of these wrapped by TypeORM',
      new QueryFailedError('SELECT 1', [], pgError('57014', 'canceling statement due to statement timeout')),
    ],
  ])('should be true for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', pgError('23505')],
    ['a check violation', pgError('23514')],
    ['a plain bug', new TypeError('x is undefined')],
    ['a file system error of the app', Object.assign(pgError('ENOENT', 'open x.json'), { syscall: 'open' })],
    ['a non-error', 'timeout exceeded when trying to connect'],
  ])('should be false for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
