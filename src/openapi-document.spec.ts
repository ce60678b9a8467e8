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
    // OpenAPI 3.1: null is allowed by a type list naming it, or by a union with a null branch.
    const allowsNull = (s: Schema) => s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null'));
    const nullable =
      allowsNull(schema) ||
      ((schema.anyOf ?? schema.oneOf) as Schema[] | undefined)?.some((s) => allowsNull(resolve(s)));
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
  const type = (Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type) as
    string | undefined;
  const typeOk: Record<string, (v: unknown) => boolean> = {
    string: (v) => typeof v === 'string',
    integer: (v) => Number.isSafeInteger(v),
    number: (v) => typeof v === 'number',
    boolean: (v) => typeof v === 'boolean',
    array: (v) => Array.isArray(v),
    object: (v) => typeof v === 'object' && !Array.isArray(v),
    null: (v) => v === null, // the null branch of a nullable reference (anyOf [$ref, {type: null}])
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

/** A response that is a document (a PDF), not the JSON envelope. */
function isDocument(response: { content?: Record<string, unknown> }): boolean {
  return response.content !== undefined && !('application/json' in response.content);
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
    const money = ['CreateTransaction', 'Transaction', 'Invoice', 'LedgerEntry'].flatMap((name) =>
      Object.entries(document.components.schemas[name].properties as Record<string, Schema>)
        .filter(([key]) => /amount|total|balance/.test(key))
        .map(([key, schema]) => ({ key, schema })),
    );
    expect(money.length).toBeGreaterThan(8);
    for (const { schema } of money) {
      // A nullable amount (null until it applies, as amount_written_off) is ["integer", "null"] in 3.1.
      const { type, ...rest } = schema;
      expect([type].flat().filter((each) => each !== 'null')).toEqual(['integer']);
      expect(rest).toMatchObject({ format: 'int64', maximum: Number.MAX_SAFE_INTEGER });
    }
  });

  it('should name every operation with a unique camelCase verbNoun', () => {
    const ids = operations.map(({ operation }) => operation.operationId ?? '');
    expect(new Set(ids).size).toBe(ids.length);
    const verbs =
      'get|list|create|update|delete|revoke|change|allocate|finalize|void|writeOff|rotate|test|redeliver|cancel|act|preview|advance|export';
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
      'Imports',
      'Tickets',
      'Provisioning',
      'Network',
      'Automation',
      'Webhooks',
      'Notifications',
      'Events',
      'Exports',
      'Test clocks',
      'Portal',
      'Admin',
    ]);
    const used = new Set(operations.flatMap(({ operation }) => operation.tags ?? []));
    expect([...used].every((tag) => document.tags?.some(({ name }) => name === tag))).toBe(true);
    // The committed document names no host: a variable a client sets (the served one names its own origin).
    expect(document.servers).toEqual([
      expect.objectContaining({
        url: '{base_url}',
        variables: { base_url: expect.objectContaining({ default: 'http://localhost:3000' }) },
      }),
    ]);
  });

  it('should make success a constant: true on every 2xx envelope, false on every error envelope', () => {
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses).filter(
        ([s, r]) => s !== '304' && !isDocument(r),
      )) {
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

  it('should give pagination to the meta of paged lists only (not /event-types nor /automation/rules)', () => {
    const whole = [
      'GET /api/v1/event-types',
      'GET /api/v1/automation/rules',
      'GET /api/v1/notification-templates',
    ];
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses).filter(
        ([s, r]) => s !== '304' && !isDocument(r),
      )) {
        const envelope = resolve(response.content?.['application/json']?.schema ?? {});
        const properties = envelope.properties as Record<string, Schema>;
        const meta = resolve(properties.meta);
        const isList = resolve(properties.data ?? {}).type === 'array' && !whole.includes(name);
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
      for (const example of (schema.examples as unknown[] | undefined) ?? []) {
        invalid.push(...problems(schema, example).map((problem) => `${at}: ${problem}`));
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

  it('should be OpenAPI 3.1 with no 3.0 keyword left: nullable refs are anyOf [ref, null], nullable enums list null', () => {
    expect((document as { openapi?: string }).openapi).toBe('3.1.0');
    const leftovers = schemas()
      .filter(
        ({ schema }) =>
          'nullable' in schema || 'example' in schema || typeof schema.exclusiveMinimum === 'boolean',
      )
      .map(({ at }) => at);
    expect(leftovers).toEqual([]);
    const subscriber = document.components.schemas.Subscriber.properties as Record<string, Schema>;
    expect(subscriber.address).toMatchObject({
      anyOf: [{ $ref: '#/components/schemas/Address' }, { type: 'null' }],
    });
    expect(subscriber.address).not.toHaveProperty('type');
    expect(subscriber.suspension_reason).toMatchObject({
      type: ['string', 'null'],
      enum: expect.arrayContaining([null]),
    });
    const from = (document.components.schemas.StatusChange.properties as Record<string, Schema>).from;
    expect(from.enum).toContain(null);
  });

  it('should name types as clients read them, without the server class suffix Dto', () => {
    const names = Object.keys(document.components.schemas);
    expect(names.filter((name) => name.endsWith('Dto'))).toEqual([]);
    expect(names).toEqual(expect.arrayContaining(['Subscriber', 'CreatedSubscriber', 'ErrorEnvelope']));
    expect(JSON.stringify(document)).not.toMatch(/#\/components\/schemas\/\w+Dto"/);
  });

  it('should list 400 invalid_json, 413 and 415 on every operation that can carry a body', () => {
    for (const { name, method, operation } of operations.filter(({ method }) => method !== 'get')) {
      const examples = (status: string) =>
        Object.keys(operation.responses[status]?.content?.['application/json']?.examples ?? {});
      expect({ name, codes: [...examples('400'), ...examples('413'), ...examples('415')] }).toEqual({
        name,
        codes: expect.arrayContaining(['invalid_json', 'payload_too_large', 'unsupported_media_type']),
      });
      expect(method).not.toBe('get');
    }
  });

  it('should declare the headers each response carries', () => {
    const get = document.paths['/api/v1/subscribers/{id}'].get as Operation & {
      responses: Record<string, { headers?: Record<string, unknown> }>;
    };
    expect(Object.keys(get.responses['200'].headers ?? {})).toEqual(
      expect.arrayContaining(['X-Request-ID', 'ETag', 'RateLimit', 'RateLimit-Policy', 'X-RateLimit-Reset']),
    );
    expect(Object.keys(get.responses['429'].headers ?? {})).toContain('Retry-After');
    expect(Object.keys(get.responses['401'].headers ?? {})).toContain('WWW-Authenticate');
    expect(Object.keys(get.responses)).toContain('304');
    const created = document.paths['/api/v1/webhooks'].post as {
      responses: Record<string, { headers?: object }>;
    };
    expect(Object.keys(created.responses['201'].headers ?? {})).toEqual(
      expect.arrayContaining(['Cache-Control', 'Idempotent-Replayed', 'Original-Request-ID']),
    );
    const patch = document.paths['/api/v1/subscribers/{id}'].patch as { responses: Record<string, unknown> };
    expect(Object.keys(patch.responses)).toContain('412');
  });

  it('should put no default on a request body property (openapi-typescript would make it required)', () => {
    const bodies = new Set(
      operations.flatMap(({ operation }) => {
        const ref = operation.requestBody?.content['application/json']?.schema.$ref as string | undefined;
        return ref ? [ref.split('/').pop()!] : [];
      }),
    );
    const withDefault = [...bodies].flatMap((name) =>
      Object.entries((document.components.schemas[name].properties ?? {}) as Record<string, Schema>)
        .filter(([, property]) => 'default' in property)
        .map(([key]) => `${name}.${key}`),
    );
    expect(withDefault).toEqual([]);
  });

  it('should give every timestamp format date-time, every day format date, and limits the server enforces', () => {
    const untyped = schemas()
      .filter(
        ({ at, schema }) => /_at$|\/(created|occurred)_(gte|lt)\b/.test(at) && schema.type !== undefined,
      )
      .filter(({ schema }) => schema.format !== 'date-time')
      .map(({ at }) => at);
    expect(untyped).toEqual([]);
    const property = (schema: string, key: string) =>
      (document.components.schemas[schema].properties as Record<string, Schema>)[key];
    expect(property('UpdateSubscriber', 'full_name')).toMatchObject({ maxLength: 200 });
    expect(property('CreateSubscriber', 'email')).toMatchObject({ format: 'email' });
    expect(property('Subscriber', 'email')).toMatchObject({ format: 'email' });
    expect(property('CreateTenant', 'slug')).toMatchObject({
      pattern: '^[a-z0-9][a-z0-9-]{1,62}$',
      maxLength: 63,
    });
    expect(property('CreateInvoice', 'currency')).toMatchObject({ pattern: '^[A-Z]{3}$', maxLength: 3 });
    expect(property('CreateInvoice', 'due_date')).toMatchObject({ format: 'date' });
    expect(property('CreateWebhook', 'url')).toMatchObject({ format: 'uri' });
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

  it('should describe every operation in its own words (not its summary) and every schema', () => {
    const bare = operations
      .map(({ name, operation }) => ({ name, ...(operation as { summary?: string; description?: string }) }))
      .filter(
        ({ summary, description }) =>
          !description?.trim() || description.replace(/\.$/, '') === (summary ?? '').replace(/\.$/, ''),
      )
      .map(({ name }) => name);
    expect(bare).toEqual([]);
    const undescribed = Object.entries(document.components.schemas)
      .filter(([, schema]) => typeof schema.description !== 'string' || schema.description.trim() === '')
      .map(([name]) => name);
    expect(undescribed).toEqual([]);
  });

  it("should make allocate's three forms a oneOf whose forms exclude each other, so {} and a mix match none", () => {
    const body = document.paths['/api/v1/transactions/{transaction_id}/allocate'].post.requestBody!;
    const allocate = resolve(body.content['application/json'].schema);
    const forms = (allocate.oneOf as Schema[]).map(resolve);
    expect(forms.map((form) => form.required)).toEqual([['allocations'], ['target', 'amount'], ['strategy']]);
    for (const form of forms) {
      const own = form.required as string[];
      const properties = form.properties as Record<string, Schema | boolean>;
      // every property of another form is `false` (never present): a generated client types it `?: never`
      for (const [key, property] of Object.entries(properties)) {
        expect([key, property === false]).toEqual([key, !own.includes(key)]);
      }
    }
    const matching = (value: Record<string, unknown>) =>
      forms.filter(
        (form) =>
          Object.entries(value).every(
            ([key]) => (form.properties as Record<string, unknown>)[key] !== false,
          ) && (form.required as string[]).every((key) => key in value),
      ).length;
    expect(matching({})).toBe(0);
    expect(matching({ strategy: 'oldest_first', target: 'balance' })).toBe(0);
    expect(matching({ strategy: 'oldest_first', amount: 5 })).toBe(0);
    expect(matching({ target: 'balance', amount: 5 })).toBe(1);
  });

  it('should require Event.data and describe each webhook delivery with its signature headers and typed data', () => {
    expect(document.components.schemas.Event.required).toContain('data');
    const webhooks = (document as unknown as { webhooks: Record<string, { post: Operation & Schema }> })
      .webhooks;
    const types = (resolve({ $ref: '#/components/schemas/EventType' }).properties as Record<string, Schema>)
      .type.enum as string[];
    expect(Object.keys(webhooks).sort()).toEqual([...types].filter((t) => t !== null).sort());
    const invoicePaid = webhooks['invoice.paid'].post;
    const headers = (invoicePaid.parameters as Schema[]).filter((p) => p.required).map((p) => p.name);
    expect(headers).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    const payload = resolve(invoicePaid.requestBody!.content['application/json'].schema);
    expect(payload.required).toEqual(['id', 'type', 'created_at', 'data']);
    const data = (payload.properties as Record<string, Schema>).data;
    expect(data.required).toEqual(['object']);
    expect((data.properties as Record<string, Schema>).object.$ref).toBe('#/components/schemas/Invoice');
    const subscriber = resolve(
      webhooks['subscriber.status_changed'].post.requestBody!.content['application/json'].schema,
    );
    expect(Object.keys((subscriber.properties as Record<string, Schema>).data.properties as object)).toEqual(
      expect.arrayContaining(['object', 'from', 'to', 'reason', 'changed_fields']),
    );
  });

  it('should declare If-Match and 412 only on writes whose service compares it', () => {
    const ifMatch = (operation: Operation) =>
      ((operation as { parameters?: Schema[] }).parameters ?? []).some(
        (p) => p.$ref === '#/components/parameters/IfMatch',
      );
    // writes under a record that never call assertIfMatch: declaring it would promise a check that is not made
    for (const [path, method] of [
      ['/api/v1/subscribers/{id}/services', 'post'],
      ['/api/v1/webhooks/{id}/test', 'post'],
      ['/api/v1/ticket-settings', 'patch'],
      ['/api/v1/automation/rules/{rule}', 'patch'],
      ['/api/v1/tokens/{id}', 'delete'],
      ['/api/v1/webhook-deliveries/{id}/redeliver', 'post'],
    ]) {
      const operation = document.paths[path][method];
      expect([path, method, ifMatch(operation), '412' in operation.responses]).toEqual([
        path,
        method,
        false,
        false,
      ]);
    }
    expect(ifMatch(document.paths['/api/v1/subscribers/{id}'].patch)).toBe(true);
    expect(ifMatch(document.paths['/api/v1/transactions/{transaction_id}/allocate'].post)).toBe(true);
  });

  it('should list 503 service_unavailable with Retry-After on every operation that reads the database', () => {
    const missing = operations
      .filter(({ name }) => name !== 'GET /api/v1' && name !== 'GET /health/live')
      .filter(({ operation }) => {
        const answer = operation.responses['503'] as { headers?: Record<string, unknown> } | undefined;
        return !answer?.headers?.['Retry-After'];
      })
      .map(({ name }) => name);
    expect(missing).toEqual([]);
    const components = document.components as unknown as { responses: Record<string, { headers: object }> };
    expect(Object.keys(components.responses.MethodNotAllowed.headers)).toContain('Allow');
  });

  it('should type byte counters as int64 and the starting_after cursor as an id, not a date-time', () => {
    for (const name of ['Session', 'UsageDay', 'UsageTotal']) {
      const properties = document.components.schemas[name].properties as Record<string, Schema>;
      expect([name, properties.bytes_in.format, properties.bytes_out.format]).toEqual([
        name,
        'int64',
        'int64',
      ]);
    }
    const cursors = operations.flatMap(({ operation }) =>
      ((operation as { parameters?: Schema[] }).parameters ?? []).filter((p) => p.name === 'starting_after'),
    );
    expect(cursors.length).toBeGreaterThan(10);
    expect(cursors.filter((p) => (p.schema as Schema).format !== undefined)).toEqual([]);
  });

  it('should make Cache-Control: no-store a required header of the three answers that show a secret', () => {
    const headers = document.components as unknown as { headers: Record<string, { required?: boolean }> };
    expect(headers.headers['Cache-Control'].required).toBe(true);
    for (const [path, status] of [
      ['/api/v1/tokens', '201'],
      ['/api/v1/webhooks', '201'],
      ['/api/v1/webhooks/{id}/rotate-secret', '200'],
    ]) {
      const answer = document.paths[path].post.responses[status] as { headers?: Record<string, unknown> };
      expect([path, Object.keys(answer.headers ?? {})]).toEqual([
        path,
        expect.arrayContaining(['Cache-Control']),
      ]);
    }
  });

  it('should describe every property whose meaning its name does not give, wherever it appears', () => {
    // status, metadata, external_id, money (minor units of which currency, what it includes), any enum and any
    // timestamp but created_at/updated_at (when it is set, when null): a one-line description each.
    const NEEDS_DESCRIPTION = [
      'status',
      'metadata',
      'external_id',
      'amount',
      'total',
      'amount_due',
      'amount_paid',
      'balance',
      'balance_after',
      'allocated_amount',
      'unallocated_amount',
      'refunded_amount',
      'price',
      'unit_amount',
      'open_invoices_due',
      'unallocated_credit',
    ];
    const isEnum = (schema: Schema) =>
      [schema, schema.items as Schema | undefined, ...((schema.anyOf as Schema[] | undefined) ?? [])].some(
        (s) => Array.isArray(s?.enum),
      );
    const needsDescription = (name: string, schema: Schema) =>
      NEEDS_DESCRIPTION.includes(name) ||
      (name.endsWith('_at') && name !== 'created_at' && name !== 'updated_at') ||
      isEnum(schema);
    const seen = new Set<string>();
    const undescribed: string[] = [];
    const walk = (schema: unknown, at: string): void => {
      if (!schema || typeof schema !== 'object') {
        return;
      }
      const node = schema as Schema;
      for (const [name, property] of Object.entries((node.properties as Record<string, unknown>) ?? {})) {
        // `false`: a property a oneOf form forbids, not one it carries.
        if (!property || typeof property !== 'object') {
          continue;
        }
        seen.add(name);
        if (needsDescription(name, property as Schema) && !(property as Schema).description) {
          undescribed.push(`${at}.${name}`);
        }
        walk(property, `${at}.${name}`);
      }
      walk(node.items, `${at}[]`);
      for (const key of ['allOf', 'anyOf', 'oneOf']) {
        ((node[key] as unknown[] | undefined) ?? []).forEach((part) => walk(part, at));
      }
    };
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      walk(schema, name);
    }
    expect(undescribed).toEqual([]);
    // Every listed name is a property of the document, so the list checks something.
    expect(NEEDS_DESCRIPTION.filter((name) => !seen.has(name))).toEqual([]);
  });
});
