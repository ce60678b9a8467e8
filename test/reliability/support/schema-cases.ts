import { fromValue, type JsonNode, pathName, type PathStep, raw, remove, toJsonText } from './json-text';
import { setAt, type HostileRequest } from './hostile-bodies';
import { resolve, type Schema } from './openapi-operations';

/**
 * The hostile bodies every POST/PATCH gets for certain (issue 27 item 5), derived from its request schema in
 * openapi.json rather than from its example: every property the schema declares (each alternative of a
 * oneOf/anyOf, nested object and array-item properties, a key of a free-form map) gets `null`, its removal, values of
 * every wrong JSON type, and the extremes of its type (numbers past 2^53 and 1e309, bounds ± 1, empty and over-long
 * strings, dates in years 0000, 0001, 9999 and 10000). A property or operation added to the document is covered
 * without editing the suite. Every case is sent (about 2,200 for the whole document).
 */

export type SchemaCase = HostileRequest;

const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** Where the document does not (yet) say `format: date`, a date is recognised by its name or its example. */
const DATE_NAME = /(^|_)(date|day|as_of|from|to|since|until|starts?|ends?)$/;
const DATE_TIME_NAME = /(^|_)at$/;

const DATES = [
  '0000-01-01',
  '0001-01-01',
  '0099-12-31',
  '1899-12-31',
  '9999-12-31',
  '10000-01-01',
  '+010000-01-01',
];
const DATE_EXTRAS = ['2026-02-30', '2026-13-01', '-000001-01-01', '2026-1-1', '20261201'];
const DATE_TIMES = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
  '10000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00.000Z',
  '2026-02-30T00:00:00Z',
  '2026-01-01T00:00:00+99:00',
];
const HUGE_NUMBERS = [
  '1e309',
  '-1e309',
  '9007199254740993',
  '-9007199254740993',
  '9007199254740992',
  '1e400',
];

/** The non-null alternatives of a union (or the schema itself), each with `$ref`s followed. */
export function alternatives(schema: Schema | undefined): Schema[] {
  const resolved = resolve(schema);
  const union = resolved.oneOf ?? resolved.anyOf;
  if (!union) {
    return [resolved];
  }
  return union
    .map((alternative) => resolve(alternative))
    .filter((alternative) => !(alternative.type === 'null' && !alternative.properties))
    .flatMap((alternative) => alternatives(alternative));
}

function typesOf(schema: Schema): string[] {
  const declared = ([] as string[]).concat(schema.type ?? []).filter((type) => type !== 'null');
  if (declared.length > 0) {
    return declared;
  }
  if (schema.properties || schema.additionalProperties) {
    return ['object'];
  }
  if (schema.items) {
    return ['array'];
  }
  if (schema.enum) {
    return [
      ...new Set(schema.enum.filter((v) => v !== null).map((v) => (Array.isArray(v) ? 'array' : typeof v))),
    ];
  }
  return [];
}

type DateKind = 'date' | 'date-time' | null;

function dateKind(name: string, schema: Schema): DateKind {
  if (schema.format === 'date' || schema.format === 'date-time') {
    return schema.format;
  }
  const first = (schema as { examples?: unknown[] }).examples?.[0] ?? schema.example;
  const example = typeof first === 'string' ? first : '';
  if (/^\d{4}-\d{2}-\d{2}T/.test(example) || DATE_TIME_NAME.test(name)) {
    return 'date-time';
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(example) || DATE_NAME.test(name)) {
    return 'date';
  }
  return null;
}

/** A valid-looking value of a schema, for building a body of a union alternative the example does not show. */
export function sampleOf(schema: Schema | undefined, name = '', depth = 0): unknown {
  const [resolved] = alternatives(schema);
  if (!resolved || depth > 6) {
    return null;
  }
  // 3.1 schemas carry `examples` (a list); 3.0 ones `example`.
  const examples = (resolved as { examples?: unknown[] }).examples;
  if (Array.isArray(examples) && examples.length > 0) {
    return examples[0];
  }
  if (resolved.example !== undefined) {
    return resolved.example;
  }
  if (resolved.enum?.length) {
    return resolved.enum.find((value) => value !== null) ?? null;
  }
  const type = typesOf(resolved)[0];
  switch (type) {
    case 'object':
      return Object.fromEntries(
        (resolved.required ?? []).map((key) => [key, sampleOf(resolved.properties?.[key], key, depth + 1)]),
      );
    case 'array':
      return [sampleOf(resolved.items, name, depth + 1)];
    case 'integer':
    case 'number':
      return Math.max(1, resolved.minimum ?? 1);
    case 'boolean':
      return true;
    case 'string': {
      const kind = dateKind(name, resolved);
      return kind === 'date' ? '2026-12-01' : kind === 'date-time' ? '2026-12-01T00:00:00.000Z' : 'x';
    }
    default:
      return null;
  }
}

/** JSON texts of values of every JSON type but `types`. */
function wrongTypes(types: string[]): string[] {
  const byType: Record<string, string[]> = {
    string: ['"1"', '""'],
    integer: ['7', '1.5'],
    number: ['7'],
    boolean: ['true'],
    object: ['{}'],
    array: ['[]', '[null]'],
  };
  const accepts = (type: string) =>
    types.includes(type) || (type === 'integer' && types.includes('number')) || types.length === 0;
  // The order puts the commonest confusion first: a string where a number goes, a number where a string goes.
  const order = types.includes('string')
    ? ['integer', 'boolean', 'object', 'array', 'number']
    : ['string', 'boolean', 'object', 'array', 'integer', 'number'];
  return order.filter((type) => !accepts(type)).flatMap((type) => byType[type]);
}

/** JSON texts of the extremes of a property's type: bounds ± 1, huge numbers, empty and long strings, odd dates. */
function extremes(name: string, schema: Schema, types: string[]): string[] {
  const out: string[] = [];
  if (types.includes('integer') || types.includes('number')) {
    out.push(...HUGE_NUMBERS, '0', '-1', '-0');
    if (schema.minimum !== undefined) {
      out.push(String(schema.minimum - 1));
    }
    if (schema.maximum !== undefined) {
      out.push(String(schema.maximum + 1));
    }
    if (types.includes('integer')) {
      out.push('1.5', '1.0000000000000002');
    }
  }
  if (types.includes('string')) {
    out.push(
      '""',
      '" "',
      JSON.stringify('\u0000'),
      JSON.stringify('\ud800'),
      JSON.stringify('x'.repeat(10_001)),
    );
    if (schema.maxLength !== undefined) {
      out.push(JSON.stringify('x'.repeat(schema.maxLength + 1)));
    }
    if (schema.enum) {
      const first = String(schema.enum.find((value) => typeof value === 'string') ?? 'x');
      out.push(JSON.stringify(first.toUpperCase()), JSON.stringify(` ${first}`), '"not_a_value"');
    }
    const kind = dateKind(name, schema);
    if (kind === 'date') {
      out.push(...[...DATES, ...DATE_EXTRAS, ...DATE_TIMES.slice(0, 1)].map((date) => JSON.stringify(date)));
    } else if (kind === 'date-time') {
      out.push(...[...DATE_TIMES, ...DATES.slice(0, 2)].map((date) => JSON.stringify(date)));
    }
  }
  if (types.includes('array')) {
    out.push(`[${Array.from({ length: 1001 }, () => 'null').join(',')}]`);
  }
  return out;
}

interface Target {
  /** Where the property sits in the body. */
  path: PathStep[];
  schema: Schema;
  /** The body the cases start from: valid for the alternative that declares the property. */
  base: JsonNode;
  /** `alt 2 ` when the body schema's root is a union, so a label says which form was attacked. */
  form: string;
}

/** Every property of `schema` below `path`, depth first, unions and array items included. */
function collect(
  schema: Schema | undefined,
  path: PathStep[],
  base: JsonNode,
  form: string,
  out: Target[],
  depth: number,
) {
  if (depth > 5) {
    return;
  }
  for (const alternative of alternatives(schema)) {
    if (alternative.items) {
      out.push({ path: [...path, 0], schema: alternative.items, base, form });
      collect(alternative.items, [...path, 0], base, form, out, depth + 1);
    }
    for (const [key, property] of Object.entries(alternative.properties ?? {})) {
      out.push({ path: [...path, key], schema: property, base, form });
      collect(property, [...path, key], base, form, out, depth + 1);
    }
    if (alternative.additionalProperties && typeof alternative.additionalProperties === 'object') {
      out.push({ path: [...path, 'rel_key'], schema: alternative.additionalProperties, base, form });
    }
  }
}

/** Whether the example is a body of this alternative: every key declared, every required key present. */
function fits(example: unknown, alternative: Schema): boolean {
  if (example === null || typeof example !== 'object' || Array.isArray(example)) {
    return false;
  }
  const keys = Object.keys(example);
  const declared = Object.keys(alternative.properties ?? {});
  return (
    keys.every((key) => declared.includes(key)) &&
    (alternative.required ?? []).every((key) => keys.includes(key))
  );
}

/**
 * Every deterministic case of one operation. `example` is the valid body (real ids filled in); for a union root each
 * alternative starts from the example when it fits, else from a body built of the alternative's required properties.
 */
export function schemaCases(example: unknown, schema: Schema | null): SchemaCase[] {
  if (!schema) {
    return [];
  }
  const targets: Target[] = [];
  const root = alternatives(schema);
  root.forEach((alternative, index) => {
    const form = root.length > 1 ? `alt${index + 1} ` : '';
    const body = fits(example, alternative) || root.length === 1 ? example : sampleOf(alternative);
    collect(alternative, [], fromValue(body ?? {}), form, targets, 0);
  });
  const cases: SchemaCase[] = [];
  const seen = new Set<string>();
  const push = (label: string, node: JsonNode) => {
    const text = toJsonText(node);
    if (!seen.has(text)) {
      seen.add(text);
      cases.push({ label, headers: JSON_HEADERS, body: Buffer.from(text, 'utf8'), json: text });
    }
  };
  for (const target of targets) {
    const name = pathName(target.path);
    const key = String(target.path[target.path.length - 1]);
    const [first] = alternatives(target.schema);
    const types = [...new Set(alternatives(target.schema).flatMap(typesOf))];
    // The property present with a valid value, so its removal and siblings' cases start from a body that has it.
    const present = setAt(target.base, target.path, fromValue(sampleOf(target.schema, key)));
    push(`null ${target.form}${name}`, setAt(target.base, target.path, raw('null')));
    push(`removed ${target.form}${name}`, remove(present, target.path));
    for (const text of wrongTypes(types)) {
      push(`wrong-type ${target.form}${name}=${text}`, setAt(target.base, target.path, raw(text)));
    }
    for (const text of extremes(key, first ?? {}, types)) {
      push(`extreme ${target.form}${name}=${text.slice(0, 24)}`, setAt(target.base, target.path, raw(text)));
    }
  }
  return cases;
}

/** One hostile query string for a GET: `name=value` (URL text), and the value as the document would type it. */
export interface QueryCase {
  label: string;
  query: string;
  /** The parameter and its value as sent (decoded), to check a 2xx against the parameter's schema. */
  parameter?: { name: string; value: string; schema: Schema };
  /** A parameter the operation does not declare: a 2xx means it was ignored. */
  undeclared?: string;
}

/**
 * Every documented query parameter of a GET gets an empty value, `null`, a value of the wrong type and the extremes
 * of its type (dates in years 0000 to 10000, 2^53 + 1, 1e309, bounds ± 1, an over-long string); the operation gets
 * an undeclared parameter and a repeated one.
 */
export function queryCases(parameters: Array<{ name: string; schema?: Schema }>): QueryCase[] {
  const cases: QueryCase[] = [
    { label: 'query undeclared rel_unknown', query: 'rel_unknown=1', undeclared: 'rel_unknown' },
    { label: 'query undeclared expand', query: 'expand=subscriber', undeclared: 'expand' },
  ];
  for (const { name, schema } of parameters) {
    const [first] = alternatives(schema);
    const types = [...new Set(alternatives(schema).flatMap(typesOf))];
    const values = new Set<string>(['', 'null', 'undefined', '[]', '{}']);
    if (!types.includes('string') || first?.enum || first?.format) {
      values.add('x');
    }
    if (!types.includes('integer') && !types.includes('number')) {
      values.add('7');
    }
    for (const text of extremes(name, first ?? {}, types)) {
      const value = text.startsWith('"') ? (JSON.parse(text) as string) : text;
      // Under Node's 16 KiB header limit: past it Node answers 431 itself, which the malformed-request case covers.
      values.add(value.length > 10_000 ? value.slice(0, 5_000) : value);
    }
    for (const value of values) {
      let encoded: string;
      try {
        encoded = encodeURIComponent(value);
      } catch {
        // A lone surrogate has no UTF-8 form to put in a URL; the generated query strings send its raw bytes.
        continue;
      }
      cases.push({
        label: `query ${name}=${value.slice(0, 30)}`,
        query: `${encodeURIComponent(name)}=${encoded}`,
        parameter: { name, value, schema: schema ?? {} },
      });
    }
    cases.push({ label: `query ${name} twice`, query: `${name}=1&${name}=2` });
  }
  return cases;
}

/** A query value as the document types it (query text is a string on the wire); null when it cannot be that type. */
export function typedQueryValue(value: string, schema: Schema): unknown {
  const types = [...new Set(alternatives(schema).flatMap(typesOf))];
  if (types.includes('string') || types.length === 0) {
    return value;
  }
  if (
    (types.includes('integer') || types.includes('number')) &&
    /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value)
  ) {
    return Number(value);
  }
  if (types.includes('boolean') && (value === 'true' || value === 'false')) {
    return value === 'true';
  }
  if (types.includes('array')) {
    return value.split(',');
  }
  return value;
}
