import fc from 'fast-check';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import {
  addEntries,
  allPaths,
  fromValue,
  type JsonNode,
  nested,
  nestedText,
  objectPaths,
  pathName,
  type PathStep,
  raw,
  remove,
  toJsonText,
  update,
} from './json-text';
import { resolve, type Schema } from './openapi-operations';

/**
 * The hostile bodies of issue 18 item 1 for one POST/PATCH, as a fast-check arbitrary: schema-aware mutations of the
 * operation's valid example (wrong types and null in every field, huge and empty strings, deep nesting, unicode edge
 * cases, numbers JavaScript cannot hold, prototype keys, duplicate and extra keys, missing fields) and transport
 * variants of a whole request (content types, charsets, invalid UTF-8, compressed bodies, empty and truncated JSON).
 * Each carries a label naming the kind and the field, so a failure reads as a reproduction.
 */
export interface HostileRequest {
  /** What was done, e.g. `wrong-type lines[0].quantity` or `transport gzip`. */
  label: string;
  headers: Record<string, string>;
  /** The exact bytes sent; null sends no body at all. */
  body: Buffer | null;
  /** Send the body with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean;
  /** The JSON text meant, when sent as plain `application/json`: a 2xx for it must be a body the document allows. */
  json?: string;
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** Values of every JSON type but the right one, including the ones validators trip on (null, NaN-ish strings). */
const WRONG_TYPES: string[] = [
  'null',
  'true',
  'false',
  '0',
  '-1',
  '1.5',
  '""',
  '" "',
  '"x"',
  '"null"',
  '"true"',
  '"1"',
  '"NaN"',
  '"Infinity"',
  '[]',
  '[null]',
  '[[]]',
  '{}',
  '{"a":1}',
  '[{}]',
  '"2026-02-30"',
  '"9999-99-99T99:99:99Z"',
  '"sub_00000000000000000000000000"',
  '"ten_00000000000000000000000000"',
];

/** Numbers past what a double holds exactly or at all, written as JSON text. */
const HOSTILE_NUMBERS: string[] = [
  '9007199254740993',
  '-9007199254740993',
  '9007199254740992',
  '18446744073709551616',
  '9223372036854775808',
  '-9223372036854775809',
  '2147483648',
  '-2147483649',
  '123456789012345678901234567890123456789012345678901234567890',
  '1e309',
  '-1e309',
  '1E400',
  '1e308',
  '-1e308',
  '5e-324',
  '1e-400',
  '-0',
  '0.1',
  '4999.000000000001',
  '0.30000000000000004',
  '1.7976931348623157e308',
];

/** Strings that break naive handling: lone surrogates, NUL, BOM, bidi overrides, combining marks, emoji, U+FFFF. */
const UNICODE_EDGES: string[] = [
  '\ud800',
  '\udfff',
  'a\ud800b',
  '\udc00\ud800',
  '\u0000',
  'a\u0000b',
  '\ufeff',
  '\u202etxt.exe',
  'e\u0301\u0301\u0301\u0301',
  '\u{1F4A9}',
  '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}',
  '\uffff',
  '\ufffe',
  '\u2028\u2029',
  '\u0085',
  '\t\r\n',
  '\u00a0',
  'İ',
  'ß'.repeat(300),
  '\\',
  '"; DROP TABLE subscribers; --',
  "' OR '1'='1",
  '%00',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '../../etc/passwd',
];

/** Keys that reach Object.prototype or a class's constructor when merged carelessly. */
const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  '__defineGetter__',
  'hasOwnProperty',
  'toString',
  'valueOf',
];
const POLLUTION =
  '{"polluted":"yes","admin":true,"scopes":["*"],"tenant_id":"ten_00000000000000000000000000"}';

/** Any UTF-16 code unit, lone surrogates included (fast-check's own units never produce those). */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));

const str = (text: string): JsonNode => raw(JSON.stringify(text));

/** A string of exactly `bytes` ASCII characters: 1,000,000 fits under the 1 MiB limit, 1,100,000 does not. */
const hugeString = (length: number): JsonNode => raw(`"${'a'.repeat(length)}"`);

const hostileString: fc.Arbitrary<JsonNode> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...UNICODE_EDGES).map(str) },
  { weight: 3, arbitrary: fc.string({ unit: anyCodeUnit, maxLength: 40 }).map(str) },
  { weight: 2, arbitrary: fc.constantFrom('', ' ', '   ', '\n').map(str) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 256, maxLength: 5000 }).map(str) },
  { weight: 1, arbitrary: fc.constantFrom(1_000_000, 70_000, 1_100_000).map(hugeString) },
  { weight: 1, arbitrary: fc.constantFrom(...UNICODE_EDGES).map((edge) => str(edge.repeat(2000))) },
);

const hostileValue: fc.Arbitrary<JsonNode> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WRONG_TYPES).map(raw) },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS).map(raw) },
  { weight: 4, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(fromValue) },
  {
    weight: 1,
    arbitrary: fc
      .double()
      .filter(Number.isFinite)
      .map((n) => raw(JSON.stringify(n))),
  },
  { weight: 1, arbitrary: fc.bigInt().map((n) => raw(n.toString())) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(2, 10, 63, 64, 65, 300), fc.constantFrom<'object' | 'array'>('object', 'array'))
      .map(([depth, shape]) => nested(depth, raw('1'), shape)),
  },
);

/**
 * The paths a mutation aims at: every path of the example (root excluded), plus every property the schema declares
 * that the example leaves out (optional fields are attacked too), down to nested objects and array items.
 */
export function fieldPaths(example: JsonNode, schema: Schema | null): PathStep[][] {
  const paths = allPaths(example).filter((path) => path.length > 0);
  const seen = new Set(paths.map((path) => JSON.stringify(path)));
  const walk = (node: Schema | undefined, prefix: PathStep[], depth: number): void => {
    const resolved = resolve(node);
    if (depth > 4) {
      return;
    }
    if (resolved.items) {
      walk(resolved.items, [...prefix, 0], depth + 1);
    }
    for (const [key, property] of Object.entries(resolved.properties ?? {})) {
      const path = [...prefix, key];
      if (!seen.has(JSON.stringify(path))) {
        seen.add(JSON.stringify(path));
        paths.push(path);
      }
      walk(property, path, depth + 1);
    }
  };
  if (schema) {
    walk(schema, [], 0);
  }
  return paths;
}

/** A copy with the value at `path` set, creating the key (and empty parents) when the example lacks them. */
export function setAt(node: JsonNode, path: PathStep[], value: JsonNode): JsonNode {
  if (path.length === 0) {
    return value;
  }
  const [step, ...rest] = path;
  if (node.kind === 'object') {
    const key = String(step);
    const existing = node.entries.find(([name]) => name === key)?.[1];
    const child = existing ?? (typeof rest[0] === 'number' ? fromValue([]) : fromValue({}));
    const next = setAt(child, rest, value);
    return existing
      ? { kind: 'object', entries: node.entries.map(([name, inner]) => [name, name === key ? next : inner]) }
      : { kind: 'object', entries: [...node.entries, [key, next]] };
  }
  if (node.kind === 'array' && typeof step === 'number') {
    const items = [...node.items];
    const child = items[step] ?? (typeof rest[0] === 'number' ? fromValue([]) : fromValue({}));
    items[Math.min(step, items.length)] = setAt(child, rest, value);
    return { kind: 'array', items };
  }
  return value === node ? node : setAt(fromValue({}), path, value);
}

function jsonRequest(label: string, text: string | Buffer, headers: Record<string, string> = JSON_HEADERS) {
  return {
    label,
    headers,
    body: Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'),
    json: Buffer.isBuffer(text) || headers !== JSON_HEADERS ? undefined : text,
  };
}

/** Schema-aware mutations of the example: one hostile change at one field, or at every object level. */
function mutations(example: JsonNode, schema: Schema | null): fc.Arbitrary<HostileRequest> {
  const fields = fieldPaths(example, schema);
  const objects = objectPaths(example);
  const keyed = fields.filter((path) => typeof path[path.length - 1] === 'string');
  const field = fields.length > 0 ? fc.constantFrom(...fields) : fc.constant<PathStep[]>(['x']);
  const objectAt = fc.constantFrom(...objects);
  const existingKey = keyed.length > 0 ? fc.constantFrom(...keyed) : fc.constant<PathStep[]>(['x']);
  const arbitraries: Array<fc.WeightedArbitrary<HostileRequest>> = [
    {
      weight: 30,
      arbitrary: fc
        .tuple(field, hostileValue)
        .map(([path, value]) =>
          jsonRequest(`value ${pathName(path)}`, toJsonText(setAt(example, path, value))),
        ),
    },
    {
      weight: 6,
      arbitrary: fc
        .tuple(field, fc.constantFrom(...HOSTILE_NUMBERS))
        .map(([path, number]) =>
          jsonRequest(
            `number ${pathName(path)}=${number.slice(0, 24)}`,
            toJsonText(setAt(example, path, raw(number))),
          ),
        ),
    },
    {
      weight: 6,
      arbitrary: field.map((path) =>
        jsonRequest(`null ${pathName(path)}`, toJsonText(setAt(example, path, raw('null')))),
      ),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          field,
          fc.constantFrom(10, 62, 63, 64, 65, 1000, 100_000),
          fc.constantFrom<'object' | 'array'>('object', 'array'),
        )
        .map(([path, depth, shape]) =>
          jsonRequest(
            `deep ${pathName(path)} ${shape}x${depth}`,
            toJsonText(setAt(example, path, raw(nestedText(depth, '"x"', shape)))),
          ),
        ),
    },
    {
      weight: 6,
      arbitrary: fc
        .tuple(
          objectAt,
          fc.constantFrom(...PROTOTYPE_KEYS),
          fc.constantFrom(POLLUTION, '{"prototype":' + POLLUTION + '}', 'null', '"x"', '1'),
        )
        .map(([path, key, value]) =>
          jsonRequest(
            `prototype-key ${pathName(path)}.${key}`,
            toJsonText(addEntries(example, path, [[key, raw(value)]])),
          ),
        ),
    },
    {
      weight: 5,
      arbitrary: fc.tuple(existingKey, hostileValue, fc.boolean()).map(([path, value, hostileFirst]) => {
        const key = String(path[path.length - 1]);
        const parent = path.slice(0, -1);
        // Both orders: which of the two a parser keeps decides whether validation saw the hostile one.
        const withDuplicate = hostileFirst
          ? update(example, parent, (old) =>
              old.kind === 'object' ? { kind: 'object', entries: [[key, value], ...old.entries] } : old,
            )
          : addEntries(example, parent, [[key, value]]);
        return jsonRequest(`duplicate-key ${pathName(path)}`, toJsonText(withDuplicate));
      }),
    },
    {
      weight: 5,
      arbitrary: fc
        .tuple(objectAt, fc.string({ unit: anyCodeUnit, minLength: 0, maxLength: 20 }), hostileValue)
        .map(([path, key, value]) =>
          jsonRequest(`extra-field ${pathName(path)}`, toJsonText(addEntries(example, path, [[key, value]]))),
        ),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(objectAt, fc.integer({ min: 50, max: 5000 })).map(([path, count]) =>
        jsonRequest(
          `many-fields ${pathName(path)} x${count}`,
          toJsonText(
            addEntries(
              example,
              path,
              Array.from({ length: count }, (_, i): [string, JsonNode] => [`f${i}`, raw(String(i))]),
            ),
          ),
        ),
      ),
    },
    {
      weight: 4,
      arbitrary: existingKey.map((path) =>
        jsonRequest(`missing ${pathName(path)}`, toJsonText(remove(example, path))),
      ),
    },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(
          '[]',
          '[{}]',
          'null',
          '"text"',
          '0',
          'true',
          '{}',
          '1e309',
          `[${toJsonText(example)}]`,
          `{"data":${toJsonText(example)}}`,
          nestedText(65, '1', 'array'),
          nestedText(64, '1', 'object'),
          nestedText(200_000, '1', 'array'),
          `{${'"a":1,'.repeat(100_000)}"b":2}`,
        )
        .map((text) => jsonRequest(`whole-body ${text.slice(0, 30)}`, text)),
    },
  ];
  return fc.oneof(...arbitraries);
}

/** Invalid UTF-8 byte sequences: a stray continuation, an overlong slash, an encoded surrogate, 0xFF, a cut-off. */
const INVALID_UTF8: Buffer[] = [
  Buffer.from([0xff]),
  Buffer.from([0xfe, 0xff]),
  Buffer.from([0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xc3, 0x28]),
];

const CONTENT_TYPES: Array<string | null> = [
  null,
  '',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  'application/jsonx',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/vnd.api+json',
  'APPLICATION/JSON',
  'application/json;',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json; charset="utf-8"',
  'application/json; charset=utf8',
  'application/json; charset=utf-16',
  'application/json; charset=utf-16le',
  'application/json; charset=iso-8859-1',
  'application/json; charset=us-ascii',
  'application/json; charset=',
  'application/json; charset=nope',
  'application/json; boundary=x; charset=utf-8',
  'application/json, text/plain',
  '*/*',
  'application/*',
  'application/json\u0000',
  `application/json; x=${'a'.repeat(4000)}`,
];

const ENCODINGS: Record<string, (bytes: Buffer) => Buffer> = {
  gzip: (bytes) => gzipSync(bytes),
  'x-gzip': (bytes) => gzipSync(bytes),
  deflate: (bytes) => deflateSync(bytes),
  'deflate (raw, no zlib header)': (bytes) => deflateRawSync(bytes),
  br: (bytes) => brotliCompressSync(bytes),
};

/** Whole-request variants: the example (or a hostile body) sent with odd headers, bytes or framing. */
function transport(example: JsonNode): fc.Arbitrary<HostileRequest> {
  const valid = Buffer.from(toJsonText(example), 'utf8');
  const text = valid.toString('utf8');
  const variants: Array<fc.WeightedArbitrary<HostileRequest>> = [
    {
      weight: 6,
      arbitrary: fc.constantFrom(...CONTENT_TYPES).map((type): HostileRequest => ({
        label: `content-type ${JSON.stringify(type)}`,
        headers: type === null ? {} : { 'Content-Type': type },
        body: valid,
      })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom('utf-16le', 'latin1').map((encoding) => ({
        label: `body ${encoding} declared utf-16`,
        headers: { 'Content-Type': 'application/json; charset=utf-16' },
        body: Buffer.from(text, encoding as BufferEncoding),
      })),
    },
    {
      weight: 4,
      arbitrary: fc.tuple(fc.constantFrom(...INVALID_UTF8), fc.nat()).map(([bad, position]) => {
        // Inside a string where there is one (the first quote after `position`), else at the very start.
        const quotes = [...text.matchAll(/":"/g)].map((match) => match.index + 3);
        const at = quotes.length > 0 ? quotes[position % quotes.length] : 0;
        return {
          label: `invalid-utf8 ${bad.toString('hex')} at ${at}`,
          headers: JSON_HEADERS,
          body: Buffer.concat([valid.subarray(0, at), bad, valid.subarray(at)]),
        };
      }),
    },
    {
      weight: 5,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...Object.keys(ENCODINGS)),
          fc.constantFrom('valid', 'bomb', 'not-json', 'deep'),
        )
        .map(([name, content]) => {
          const plain =
            content === 'valid'
              ? valid
              : content === 'bomb'
                ? Buffer.from(`{"a":"${' '.repeat(20 * 1024 * 1024)}"}`)
                : content === 'deep'
                  ? Buffer.from(nestedText(1000, '1', 'array'))
                  : Buffer.from('{"a":');
          const header = name.startsWith('deflate') ? 'deflate' : name;
          return {
            label: `content-encoding ${name} (${content})`,
            headers: { ...JSON_HEADERS, 'Content-Encoding': header },
            body: ENCODINGS[name](plain),
          };
        }),
    },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(
          'gzip',
          'deflate',
          'br',
          'identity',
          'compress',
          'zstd',
          'x-unknown',
          'gzip, gzip',
          'GZIP',
          '',
        )
        .map((encoding) => ({
          label: `content-encoding ${JSON.stringify(encoding)} on a plain body`,
          headers: { ...JSON_HEADERS, 'Content-Encoding': encoding },
          body: valid,
        })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom('no body', 'empty body', 'empty chunked', 'whitespace').map((kind) => ({
        label: `empty ${kind}`,
        headers: JSON_HEADERS,
        body: kind === 'no body' ? null : kind === 'whitespace' ? Buffer.from('  \n ') : Buffer.alloc(0),
        chunked: kind === 'empty chunked',
      })),
    },
    {
      weight: 5,
      arbitrary: fc.integer({ min: 0, max: Math.max(0, valid.length - 1) }).map((cut) => ({
        label: `truncated at ${cut}/${valid.length}`,
        headers: JSON_HEADERS,
        body: valid.subarray(0, cut),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({
        label: 'chunked valid body',
        headers: JSON_HEADERS,
        body: valid,
        chunked: true,
      }),
    },
    {
      weight: 4,
      arbitrary: fc
        .constantFrom(
          `\ufeff${text}`,
          `${text}garbage`,
          `${text}${text}`,
          `${text},`,
          `/* c */${text}`,
          text.replace(/"/g, "'"),
          text.replace(/}$/, ',}'),
          text.replace(/:(\d+)/, ':NaN'),
          text.replace(/:(\d+)/, ':Infinity'),
          text.replace(/:(\d+)/, ':0x10'),
          text.replace(/:(\d+)/, ':+1'),
          text.replace(/:(\d+)/, ':01'),
          text.replace(/"/, '"\\x41'),
          text.replace(/"/, '"\\ud800'),
          text.replace(/"/, '"\\u00'),
          text.replace(/"/, '"\t'),
          `\u0000${text}`,
        )
        .map((body) => ({
          label: `malformed ${body.slice(0, 30)}`,
          headers: JSON_HEADERS,
          body: Buffer.from(body),
        })),
    },
  ];
  return fc.oneof(...variants);
}

/**
 * The arbitrary of one POST/PATCH's hostile requests: 3 in 4 are schema-aware mutations of the example, 1 in 4
 * transport variants. `example` is the valid body with real ids filled in (or `{}` for an operation without one).
 */
export function hostileRequests(example: unknown, schema: Schema | null): fc.Arbitrary<HostileRequest> {
  const tree = fromValue(example ?? {});
  return fc.oneof(
    { weight: 3, arbitrary: mutations(tree, schema) },
    { weight: 1, arbitrary: transport(tree) },
  );
}
