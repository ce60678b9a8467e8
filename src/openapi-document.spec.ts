import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The committed contract, as generators and Swagger UI read it (`npm run openapi -- --check` keeps it current). */
type Schema = Record<string, unknown>;
const document = JSON.parse(readFileSync(join(__dirname, '..', 'openapi.json'), 'utf8')) as {
  servers?: { url: string }[];
  tags?: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

interface Operation {
  operationId?: string;
  tags?: string[];
  requestBody?: {
    content: Record<string, { schema: Schema; examples?: Record<string, { value: unknown }> }>;
  };
  responses: Record<
    string,
    { content?: Record<string, { schema: Schema; examples?: Record<string, { value: unknown }> }> }
  >;
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => HTTP_METHODS.includes(method))
    .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, method, operation })),
);

/** Every schema object in the document, with where it is. */
function schemas(): { at: string; schema: Schema }[] {
  const found: { at: string; schema: Schema }[] = [];
  const walk = (value: unknown, at: string, inSchema: boolean): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, `${at}/${index}`, inSchema));
      return;
    }
    if (!value || typeof value !== 'object') {
      return;
    }
    const node = value as Schema;
    if (
      inSchema &&
      ('type' in node || '$ref' in node || 'allOf' in node || 'anyOf' in node || 'oneOf' in node)
    ) {
      found.push({ at, schema: node });
    }
    for (const [key, inner] of Object.entries(node)) {
      // examples are data, not schemas
      if (key === 'example' || key === 'examples') {
        continue;
      }
      walk(inner, `${at}/${key}`, inSchema || key === 'schema' || key === 'schemas');
    }
  };
  walk(document, '#', false);
  return found;
}

function resolve(schema: Schema): Schema {
  const ref = schema.$ref as string | undefined;
  return ref ? resolve(document.components.schemas[ref.replace('#/components/schemas/', '')]) : schema;
}

/** The problems of `value` against `schema`: the subset of JSON Schema the document uses. */
function problems(raw: Schema, value: unknown, at = ''): string[] {
  const schema = resolve(raw);
  if (value === null) {
    const nullable =
      schema.nullable === true ||
      ((schema.anyOf ?? schema.oneOf) as Schema[] | undefined)?.some((s) => resolve(s).nullable === true);
    return nullable ? [] : [`${at || '/'} is null but not nullable`];
  }
  const out: string[] = [];
  for (const part of (schema.allOf as Schema[] | undefined) ?? []) {
    out.push(...problems(part, value, at));
  }
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) {
    const matches = alternatives.filter((s) => problems(s, value, at).length === 0).length;
    if (matches === 0 || (schema.oneOf && matches > 1)) {
      out.push(`${at || '/'} matches ${matches} of its alternatives`);
    }
  }
  if (schema.enum && !(schema.enum as unknown[]).includes(value)) {
    out.push(`${at || '/'} = ${JSON.stringify(value)} is not one of its enum`);
  }
  const type = schema.type as string | undefined;
  const typeOk: Record<string, (v: unknown) => boolean> = {
    string: (v) => typeof v === 'string',
    integer: (v) => Number.isSafeInteger(v),
    number: (v) => typeof v === 'number',
    boolean: (v) => typeof v === 'boolean',
    array: (v) => Array.isArray(v),
    object: (v) => typeof v === 'object' && !Array.isArray(v),
  };
  if (type && !typeOk[type](value)) {
    return [...out, `${at || '/'} = ${JSON.stringify(value)} is not a ${type}`];
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) {
      out.push(`${at} is below its minimum`);
    }
    if (typeof schema.maximum === 'number' && value > schema.maximum) {
      out.push(`${at} is above its maximum`);
    }
  }
  if (typeof value === 'string') {
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) {
      out.push(`${at} is longer than maxLength`);
    }
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) {
      out.push(`${at} is shorter than minLength`);
    }
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, index) => out.push(...problems(schema.items as Schema, item, `${at}/${index}`)));
  }
  if (type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    for (const key of (schema.required as string[] | undefined) ?? []) {
      if (!(key in value)) {
        out.push(`${at}/${key} is required`);
      }
    }
    for (const [key, inner] of Object.entries(value)) {
      if (properties[key]) {
        out.push(...problems(properties[key], inner, `${at}/${key}`));
      } else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        out.push(...problems(schema.additionalProperties as Schema, inner, `${at}/${key}`));
      } else if (schema.properties && !schema.additionalProperties) {
        out.push(`${at}/${key} is not a property of the schema`);
      }
    }
  }
  return out;
}

describe('openapi.json', () => {
  it('should give every object schema properties or additionalProperties (no Record<string, never>)', () => {
    const bare = schemas()
      .filter(({ schema }) => schema.type === 'object' && !schema.allOf)
      .filter(({ schema }) => !schema.properties && schema.additionalProperties === undefined)
      .map(({ at }) => at);
    expect(bare).toEqual([]);
  });

  it('should have no type number but the values of metadata, which may be fractional', () => {
    const numbers = schemas()
      .filter(({ schema }) => schema.type === 'number')
      .map(({ at }) => at)
      .filter((at) => !/\/metadata\/additionalProperties\/anyOf\/\d+$/.test(at));
    expect(numbers).toEqual([]);
  });

  it('should document money as int64 integers up to the largest amount the API accepts', () => {
    const money = ['CreateTransactionDto', 'TransactionDto', 'InvoiceDto', 'LedgerEntryDto'].flatMap((name) =>
      Object.entries(document.components.schemas[name].properties as Record<string, Schema>)
        .filter(([key]) => /amount|total|balance/.test(key))
        .map(([key, schema]) => ({ key, schema })),
    );
    expect(money.length).toBeGreaterThan(8);
    for (const { schema } of money) {
      expect(schema).toMatchObject({ type: 'integer', format: 'int64', maximum: Number.MAX_SAFE_INTEGER });
    }
  });

  it('should name every operation with a unique camelCase verbNoun', () => {
    const ids = operations.map(({ operation }) => operation.operationId ?? '');
    expect(new Set(ids).size).toBe(ids.length);
    const verbs =
      'get|list|create|update|delete|revoke|change|allocate|finalize|void|rotate|test|redeliver|cancel|act';
    for (const id of ids) {
      expect(id).toMatch(new RegExp(`^(${verbs})([A-Z][a-z]+)+$`));
    }
    const byName = Object.fromEntries(operations.map(({ name, operation }) => [name, operation.operationId]));
    expect(byName['GET /api/v1/subscribers/{id}/ledger']).toBe('listSubscriberLedgerEntries');
    expect(byName['POST /api/v1/subscribers']).toBe('createSubscriber');
  });

  it('should list the tags in domain order and a server to try calls against', () => {
    expect(document.tags?.map((tag) => tag.name)).toEqual([
      'Gateway',
      'Subscribers',
      'Billing',
      'Tickets',
      'Provisioning',
      'Network',
      'Automation',
      'Webhooks',
      'Events',
      'Admin',
    ]);
    const used = new Set(operations.flatMap(({ operation }) => operation.tags ?? []));
    expect([...used].every((tag) => document.tags?.some(({ name }) => name === tag))).toBe(true);
    expect(document.servers?.length).toBeGreaterThan(0);
    expect(document.servers?.[0].url).toMatch(/^https?:\/\//);
  });

  it('should make success a constant: true on every 2xx envelope, false on every error envelope', () => {
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const envelope = resolve(response.content?.['application/json']?.schema ?? {});
        const success = resolve((envelope.properties as Record<string, Schema> | undefined)?.success ?? {});
        expect({ name, status, success }).toEqual({
          name,
          status,
          success: expect.objectContaining({ type: 'boolean', enum: [status.startsWith('2')] }),
        });
      }
    }
  });

  it('should give pagination to the meta of lists only', () => {
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const envelope = resolve(response.content?.['application/json']?.schema ?? {});
        const properties = envelope.properties as Record<string, Schema>;
        const meta = resolve(properties.meta);
        const isList = resolve(properties.data ?? {}).type === 'array';
        const metaProperties = meta.properties as Record<string, Schema>;
        expect({ name, status, pagination: 'pagination' in metaProperties }).toEqual({
          name,
          status,
          pagination: isList,
        });
      }
    }
  });

  it('should make every example valid against its own schema', () => {
    const invalid: string[] = [];
    for (const { at, schema } of schemas()) {
      if ('example' in schema) {
        invalid.push(...problems(schema, schema.example).map((problem) => `${at}: ${problem}`));
      }
    }
    for (const { name, operation } of operations) {
      const media = [
        ...Object.values(operation.requestBody?.content ?? {}),
        ...Object.values(operation.responses).flatMap((response) => Object.values(response.content ?? {})),
      ];
      for (const { schema, examples } of media) {
        for (const [key, { value }] of Object.entries(examples ?? {})) {
          invalid.push(...problems(schema, value).map((problem) => `${name} ${key}: ${problem}`));
        }
      }
    }
    expect(invalid).toEqual([]);
  });

  it('should give every POST and PATCH with a body a request example, and none names a billing profile', () => {
    for (const { name, operation } of operations) {
      const body = operation.requestBody?.content['application/json'];
      if (body) {
        expect({ name, examples: Object.keys(body.examples ?? {}) }).toEqual({ name, examples: ['default'] });
      }
    }
    const createSubscriber =
      document.paths['/api/v1/subscribers'].post.requestBody?.content['application/json'];
    expect(createSubscriber?.examples?.default.value).not.toHaveProperty('billing_profile_id');
  });
});
