import fc from 'fast-check';

/**
 * Hostile query strings and path ids for the GET routes of issue 18 item 1: crafted cursors (base64url JSON with
 * out-of-range timestamps, hostile ids, wrong shapes), repeated and bracketed parameters, prototype names, huge and
 * malformed values, and path ids that are long, unicode, `..`, `%00` or encoded slashes. Strings returned here are
 * already URL text (percent-encoded where meant, raw where the raw byte is the attack).
 */

const cursorOf = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Timestamps JavaScript parses but Postgres cannot store, or neither can, or that only look like timestamps. */
const HOSTILE_INSTANTS = [
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '+275760-09-13T00:00:00.001Z',
  '-004714-11-23T00:00:00.000Z',
  '-000001-01-01T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
  '1970-01-01T00:00:00.000Z',
  '2026-02-30T00:00:00.000Z',
  '2026-01-01T25:61:61Z',
  '8640000000000000',
  '-8640000000000001',
  'Infinity',
  'NaN',
  '',
  '2026-01-01',
  '1e309',
  '0',
];

const HOSTILE_IDS = [
  '',
  ' ',
  'x'.repeat(64),
  'x'.repeat(65),
  'x'.repeat(10_000),
  "sub_' OR 1=1 --",
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\u{1F4A9}',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  '%',
  '\\',
  'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz',
];

/** Cursors: out-of-range instants with plausible ids, hostile ids, and every wrong shape of the payload. */
export const hostileCursor: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(...HOSTILE_INSTANTS),
      fc.constantFrom(...HOSTILE_IDS, 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB'),
    )
    .map(([instant, id]) => cursorOf([instant, id])),
  fc
    .tuple(fc.date({ noInvalidDate: true }), fc.string({ maxLength: 70 }))
    .map(([date, id]) => cursorOf([date.toISOString(), id])),
  fc
    .constantFrom<unknown>(
      [],
      [1, 2],
      ['2026-01-01T00:00:00.000Z'],
      ['2026-01-01T00:00:00.000Z', 'a', 'b'],
      ['2026-01-01T00:00:00.000Z', null],
      [null, null],
      [1e308, 'x'],
      { __proto__: null, createdAt: '2026-01-01', id: 'x' },
      JSON.parse('{"__proto__":{"polluted":true}}'),
      'string',
      null,
      1e308,
      [['2026-01-01T00:00:00.000Z', 'x']],
    )
    .map(cursorOf),
  fc.constantFrom(
    '',
    '=',
    '====',
    '%00',
    '!!!!',
    'a'.repeat(512),
    'a'.repeat(513),
    'a'.repeat(8000),
    '%ff%fe',
    '..',
  ),
  fc.jsonValue({ maxDepth: 3 }).map(cursorOf),
  fc.string({ unit: 'binary', maxLength: 60 }).map((text) => Buffer.from(text).toString('base64url')),
);

/** A value for a query parameter, encoded as it will be sent. */
export const hostileQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '0',
    '-1',
    '1',
    '100',
    '101',
    '1.5',
    '1e309',
    '1e2',
    '0x10',
    '9007199254740993',
    '-9223372036854775809',
    'NaN',
    'Infinity',
    'true',
    'false',
    'null',
    'undefined',
    '[]',
    '{}',
    '%00',
    '%',
    '%zz',
    '%ff',
    '%c0%af',
    '%ed%a0%80',
    '%F0%9F%92%A9',
    'a%00b',
    '2026-02-30',
    '2026-02-30T00:00:00Z',
    '%2B275760-09-13T00:00:00.000Z',
    '-271821-04-20T00:00:00.000Z',
    '0000-01-01T00:00:00Z',
    '99999-01-01T00:00:00Z',
    '2026-01-01T00:00:00.000Z',
    'sub_00000000000000000000000000',
    "'%20OR%201=1--",
    '__proto__',
    'constructor',
  ),
  fc.constantFrom(...HOSTILE_INSTANTS).map(encodeURIComponent),
  hostileCursor,
  fc.string({ unit: 'binary', maxLength: 40 }).map(encodeURIComponent),
  fc.integer({ min: 100, max: 12_000 }).map((n) => 'a'.repeat(n)),
);

const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  '__proto__[polluted]',
  'constructor[prototype][polluted]',
  'hasOwnProperty',
  'toString',
  'valueOf',
  '__defineGetter__',
];

/**
 * A whole query string (without `?`) for a GET whose documented parameters are `names`: documented names with
 * hostile values, repeated names, bracketed forms (`a[]=1&a[b]=2`), prototype names and unknown names.
 */
export function hostileQueryString(names: string[]): fc.Arbitrary<string> {
  const known = names.length > 0 ? fc.constantFrom(...names) : fc.constant('limit');
  const anyName = fc.oneof(
    { weight: 5, arbitrary: known },
    { weight: 2, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
    {
      weight: 1,
      arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }).map(encodeURIComponent),
    },
  );
  const pair: fc.Arbitrary<string> = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(anyName, hostileQueryValue).map(([name, value]) => `${name}=${value}`) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(known, hostileQueryValue, hostileQueryValue)
        .map(([name, a, b]) => `${name}=${a}&${name}=${b}`),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          known,
          hostileQueryValue,
          fc.constantFrom('[]', '[b]', '[0]', '[__proto__]', '[][]', '[b][c]', '.b'),
        )
        .map(([name, value, bracket]) => `${name}${bracket}=${value}&${name}[]=1&${name}[b]=2`),
    },
    { weight: 1, arbitrary: known },
    { weight: 1, arbitrary: known.map((name) => `${name}=`) },
    { weight: 1, arbitrary: fc.constantFrom('&&&', '=', '==', '&=&', '%', '?', '#x', ';', 'a=1;b=2') },
    { weight: 1, arbitrary: fc.constant(`starting_after=${cursorOf(['2026-01-01T00:00:00.000Z', 'x'])}`) },
    { weight: 1, arbitrary: hostileCursor.map((cursor) => `starting_after=${cursor}`) },
  );
  // Under Node's 16 KB header limit with room for the path and headers: past it Node answers 431 itself, which the
  // suite's oversized-request case covers once instead of on every list.
  return fc
    .array(pair, { minLength: 1, maxLength: 5 })
    .map((pairs) => pairs.join('&'))
    .filter((query) => query.length <= 12_000);
}

/** A hostile value for a path parameter, as URL text. */
export const hostilePathId: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '%2e%2e',
    '%2E%2E%2F%2E%2E',
    '..%2f..%2fetc%2fpasswd',
    '%2F',
    '%5C',
    '%00',
    'sub_%00',
    '%',
    '%zz',
    '%ff',
    '%c0%af',
    '%ed%a0%80',
    '%F0%9F%92%A9',
    '%20',
    '%0d%0aX-Injected:%201',
    '__proto__',
    'constructor',
    'prototype',
    'hasOwnProperty',
    'undefined',
    'null',
    'NaN',
    '-1',
    '0',
    '1e309',
    '9007199254740993',
    "sub_'%20OR%201=1--",
    'sub_00000000000000000000000000',
    'ten_00000000000000000000000000',
    'tok_00000000000000000000000000',
    encodeURIComponent('é'),
    encodeURIComponent('\u{1F4A9}'),
    encodeURIComponent('\u202e'),
    'x'.repeat(65),
    'x'.repeat(2000),
    'x'.repeat(12_000),
    'a;b',
    'a,b',
    '~',
    "'",
    '%22',
    '*',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 70 }).map(encodeURIComponent),
  fc.integer({ min: 65, max: 10_000 }).map((n) => 'x'.repeat(n)),
);
