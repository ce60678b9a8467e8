import { StartupError } from '../common/startup-error';
import { describeConnectionError, probeDatabase } from './database-probe';

const URL = 'postgres://isp:s3cret@db.internal:6543/isp';

function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('describeConnectionError', () => {
  it.each([
    [
      'ECONNREFUSED',
      'connect ECONNREFUSED 10.0.0.5:6543',
      /^Cannot reach the database at db\.internal:6543 \(ECONNREFUSED\): check that PostgreSQL is running/,
    ],
    [
      'ENOTFOUND',
      'getaddrinfo ENOTFOUND db.internal',
      /^Cannot resolve the database host in DATABASE_URL \(db\.internal:6543, ENOTFOUND\)/,
    ],
    [
      '28P01',
      'password authentication failed for user "isp"',
      /^The database at db\.internal:6543 refused user "isp": password authentication failed.*Check the user and password/,
    ],
    [
      '3D000',
      'database "isp" does not exist',
      /^The database "isp" does not exist at db\.internal:6543: create it, or fix its name/,
    ],
    [
      '',
      'Connection terminated due to connection timeout',
      /^The database at db\.internal:6543 did not answer within 10 s/,
    ],
  ])(
    'should say where it tried and what to check for %s, in one line and without the password',
    (code, message, expected) => {
      const described = describeConnectionError(URL, pgError(code, message));
      expect(described).toBeInstanceOf(StartupError);
      expect(described?.message).toMatch(expected);
      expect(described?.message).not.toContain('\n');
      expect(described?.message).not.toContain('s3cret');
    },
  );

  it('should leave an unexpected error alone (it keeps its stack)', () => {
    expect(describeConnectionError(URL, new TypeError('boom'))).toBeNull();
  });

  it('should name the socket file of a socket URL', () => {
    const described = describeConnectionError(
      'postgres://postgres@%2Fvar%2Frun%2Fpg:5432/x',
      pgError('ENOENT', 'x'),
    );
    expect(described?.message).toContain('/var/run/pg/.s.PGSQL.5432');
  });
});

describe('probeDatabase', () => {
  it('should stop with one line naming host:port when nothing listens there', async () => {
    await expect(probeDatabase('postgres://postgres@127.0.0.1:1/x')).rejects.toThrow(
      /^Cannot reach the database at 127\.0\.0\.1:1 \(ECONNREFUSED\)/,
    );
  });
});
