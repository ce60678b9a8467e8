import { inexactNumber } from './json-numbers';

describe('inexactNumber', () => {
  it('should pass numbers JSON.parse gives back as sent', () => {
    expect(inexactNumber('{"a":1.5,"b":-0,"c":9007199254740991,"d":-9007199254740991,"f":[0.1,2e-5]}')).toBe(
      null,
    );
  });

  it('should name the key of a number beyond the range of a double', () => {
    expect(inexactNumber('{"metadata":{"plan":"x","limit":1e309}}')).toEqual({
      path: 'metadata.limit',
      message: expect.stringContaining('metadata.limit is beyond the range') as string,
    });
    expect(inexactNumber('{"amount":-1E+400}')?.path).toBe('amount');
  });

  it('should refuse whole numbers beyond 2^53 - 1, whatever their form', () => {
    expect(inexactNumber('{"a":{"b":9007199254740993}}')?.path).toBe('a.b');
    expect(inexactNumber('{"a":9007199254740992}')?.path).toBe('a');
    expect(inexactNumber('{"a":1e20}')?.path).toBe('a');
    expect(inexactNumber('{"a":1e308}')?.path).toBe('a');
    expect(inexactNumber('{"a":12345678901234567890.5}')?.path).toBe('a');
  });

  it('should refuse a number that would be read as 0', () => {
    expect(inexactNumber('{"a":1e-400}')?.path).toBe('a');
    expect(inexactNumber('{"a":0e-400,"b":0.0}')).toBe(null);
  });

  it('should count array items and skip digits inside strings and keys', () => {
    expect(inexactNumber('{"allocations":[{"amount":1},{"amount":1e999}]}')?.path).toBe(
      'allocations.1.amount',
    );
    expect(inexactNumber('{"9007199254740993":"1e999","x\\"1e999":"\\"1e999"}')).toBe(null);
    expect(inexactNumber('{"a\\u0062":1e999}')?.path).toBe('ab');
  });
});
