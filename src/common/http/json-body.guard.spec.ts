import { jsonDeeperThan } from './json-body.guard';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('jsonDeeperThan', () => {
  it('should count arrays and objects alike, up to the bound and past it', () => {
    expect(jsonDeeperThan(bytes('[{"a":[1]}]'), 3)).toBe(false);
    expect(jsonDeeperThan(bytes('[{"a":[[1]]}]'), 3)).toBe(true);
  });

  it('should count depth, not the number of brackets', () => {
    expect(jsonDeeperThan(bytes('[[1],[2],[3],{"a":1},{"b":2}]'), 2)).toBe(false);
  });

  it('should skip brackets inside strings, escaped quotes included', () => {
    expect(jsonDeeperThan(bytes('{"a":"[[[[{{{{"}'), 1)).toBe(false);
    expect(jsonDeeperThan(bytes('{"a":"\\"[[[[","b":"\\\\"}'), 1)).toBe(false);
    expect(jsonDeeperThan(bytes('{"a":"\\\\",  "b":[[1]]}'), 2)).toBe(true);
  });

  it('should not be fooled by multi-byte characters', () => {
    expect(jsonDeeperThan(bytes('{"a":"€[«"}'), 1)).toBe(false);
  });

  it('should scan 300,000 levels without recursion', () => {
    expect(jsonDeeperThan(bytes('['.repeat(300_000) + ']'.repeat(300_000)), 64)).toBe(true);
  });
});
