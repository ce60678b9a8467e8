import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * Formats and lengths of the strings the validation layer does not see (answers, path ids, headers), derived in one
 * pass so that they cannot drift (issue 27, item 14): a response property takes the format, pattern and maximum
 * length of the request property of the same name (what was accepted is what is stored and read back); a timestamp
 * (`*_at`, or an ISO 8601 example) is `date-time`, a day is `date`; an id is at most 64 characters (what newId()
 * makes and decodeCursor accepts). Runs on the 3.0 schemas, before toOpenApi31.
 */
type Schema = Record<string, unknown>;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** Longest ISO 8601 instant the API reads or writes: `2026-11-21T10:00:00.000+05:30`. */
const TIMESTAMP_MAX = 35;
export const ID_MAX = 64;
const MAX_BY_FORMAT: Record<string, number> = {
  'date-time': TIMESTAMP_MAX,
  date: 10,
  email: 254,
  ipv4: 15,
  ipv6: 45,
  uri: 2048,
};
const COPIED = ['format', 'pattern', 'maxLength'] as const;

/**
 * Strings the server writes itself (no request sets them), with the longest it writes: each bound by the code that
 * makes the value. Keyed by property (or parameter) name.
 */
const SERVER_WRITTEN_MAX: Record<string, number> = {
  api_version: 8, // `v1`
  message: 1000, // an error message: a sentence or two of the catalog plus the offending value, clipped
  field: 200, // a dotted path of a request field
  next_cursor: 512, // what starting_after accepts back
  last4: 4,
  prefix: 16, // `isk_` plus a few characters of the token
  token: 128, // isk_ plus 43 base64url characters
  secret: 128, // NAS secrets (8–128) and whsec_ webhook secrets
  tenant_slug: 63,
  slug: 63,
  header: 64, // the name of an HTTP header
  tenant_header: 64,
  scheme: 32,
  per: 32,
  headers: 64,
  scopes: 64,
  docs: 2048,
  events: 2048,
  health: 2048,
  openapi: 2048,
  status: 32, // a state or a ticket filter value
  priority: 32,
  type: 100, // an event type or a pattern of event types
  event_type: 100,
  triggers: 100,
  emits: 100,
  changes: 100, // names of changed fields
  checks: 200, // a health check's state
  last_error: 2000,
  error: 2000, // why a webhook attempt failed
  response_body: 2048, // the first bytes of a receiver's answer (MAX_KEPT_BYTES)
  disabled_reason: 500,
  void_reason: 500,
  radius_username: 129, // `<tenant slug or id>/<pppoe_username>`: 64 + 1 + 64
  request_id: 128, // yours (X-Request-ID, up to 128 characters) or ours (req_…)
  username: 253, // RADIUS User-Name as the NAS reported it
  terminate_cause: 64,
  framed_ip: 45,
  nas_ip: 45,
  tags: 50, // TAG_LIMITS.maxLength, which IsTags checks in a validator of its own
};

/**
 * The longest string a bounded regular expression matches (`^[a-z0-9][a-z0-9-]{1,62}$` → 63), or undefined when it
 * is unbounded (`*`, `+`, `{n,}`) or uses what this reading does not follow (groups, alternation, back-references).
 */
export function patternMaxLength(pattern: string): number | undefined {
  if (/[|()]/.test(pattern.replace(/\\./g, ''))) {
    return undefined;
  }
  const atom = /\\.|\[(?:\\.|[^\]])*\]|[^\\[]/y;
  let total = 0;
  let at = 0;
  const body = pattern.replace(/^\^/, '').replace(/\$$/, '');
  while (at < body.length) {
    atom.lastIndex = at;
    const match = atom.exec(body);
    if (!match) {
      return undefined;
    }
    at += match[0].length;
    const quantifier = /^(?:\{(\d+)(,(\d*))?\}|[?*+])/.exec(body.slice(at));
    let times = 1;
    if (quantifier) {
      at += quantifier[0].length;
      if (quantifier[0] === '?') {
        times = 1;
      } else if (quantifier[0] === '*' || quantifier[0] === '+' || quantifier[3] === '') {
        return undefined;
      } else {
        times = Number(quantifier[3] ?? quantifier[1]);
      }
    }
    total += times;
  }
  return total;
}

function isString(schema: Schema): boolean {
  return schema.type === 'string' && schema.enum === undefined && schema.const === undefined;
}

function isId(name: string): boolean {
  return name === 'id' || name.endsWith('_id') || name === 'starting_after' || name === 'rule';
}

/** The string constraints each request-body property declares, by property name. */
function requestConstraints(document: OpenAPIObject): Map<string, Schema> {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  const found = new Map<string, Schema>();
  const bodyNames = new Set<string>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, { requestBody?: unknown }>)) {
      // Only the request bodies' own references: a response schema is not what a request enforces.
      const refs = JSON.stringify(operation?.requestBody ?? {}).match(
        /#\/components\/schemas\/[A-Za-z0-9]+/g,
      );
      refs?.forEach((ref) => bodyNames.add(ref.split('/').pop()!));
    }
  }
  for (const name of Object.keys(schemas).filter(
    (key) => bodyNames.has(key) || /^(Create|Update)[A-Z]/.test(key),
  )) {
    for (const [property, raw] of Object.entries(
      (schemas[name].properties ?? {}) as Record<string, Schema>,
    )) {
      const schema = raw.type === 'array' ? (raw.items as Schema) : raw;
      if (!schema || !isString(schema)) {
        continue;
      }
      // Requests of different resources share names (a ticket's and a webhook's description): an answer's property
      // claims only what every request of that name enforces, i.e. the loosest length and an agreed format.
      const known = found.get(property);
      if (!known) {
        found.set(property, Object.fromEntries(COPIED.map((key) => [key, schema[key]])));
        continue;
      }
      for (const key of COPIED) {
        if (key === 'maxLength') {
          const lengths = [known[key], schema[key]];
          known[key] = lengths.includes(undefined) ? undefined : Math.max(...(lengths as number[]));
        } else if (known[key] !== schema[key]) {
          known[key] = undefined;
        }
      }
    }
  }
  return found;
}

function complete(schema: Schema, name: string, fromRequests: Map<string, Schema>): void {
  if (schema.type === 'array' && schema.items) {
    complete(schema.items as Schema, name, fromRequests);
    return;
  }
  if (!isString(schema)) {
    return;
  }
  const example = typeof schema.example === 'string' ? schema.example : '';
  if (schema.format === undefined) {
    // `starting_after` ends like a time filter but is a cursor (an id), never a date.
    const timeFilter = /_(gte|lt|before|after)$/.test(name) && !isId(name);
    if (name.endsWith('_at') || TIMESTAMP.test(example) || timeFilter) {
      schema.format = 'date-time';
    } else if (DAY.test(example) || name === 'date' || name.endsWith('_date')) {
      schema.format = 'date';
    }
  }
  const known = fromRequests.get(name) ?? {};
  for (const key of COPIED) {
    if (schema[key] === undefined && known[key] !== undefined && !(key === 'format' && schema.pattern)) {
      schema[key] = known[key];
    }
  }
  if (schema.maxLength === undefined) {
    const byFormat = typeof schema.format === 'string' ? MAX_BY_FORMAT[schema.format] : undefined;
    const byPattern = typeof schema.pattern === 'string' ? patternMaxLength(schema.pattern) : undefined;
    if (byPattern !== undefined) {
      schema.maxLength = byPattern;
    } else if (byFormat !== undefined) {
      schema.maxLength = byFormat;
    } else if (SERVER_WRITTEN_MAX[name] !== undefined) {
      schema.maxLength = SERVER_WRITTEN_MAX[name];
    } else if (isId(name)) {
      schema.maxLength = ID_MAX;
    }
  }
}

function completeObject(schema: Schema, fromRequests: Map<string, Schema>): void {
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    complete(property, name, fromRequests);
    const values = property.additionalProperties;
    if (values && typeof values === 'object' && (values as Schema).type === 'string') {
      complete(values as Schema, name, fromRequests);
    }
    if (property.properties) {
      completeObject(property, fromRequests);
    }
    const items = property.items as Schema | undefined;
    if (items?.properties) {
      completeObject(items, fromRequests);
    }
  }
}

export function completeStringFormats(document: OpenAPIObject): OpenAPIObject {
  const fromRequests = requestConstraints(document);
  for (const schema of Object.values((document.components?.schemas ?? {}) as Record<string, Schema>)) {
    completeObject(schema, fromRequests);
  }
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, { parameters?: Schema[] }>)) {
      for (const parameter of operation?.parameters ?? []) {
        if (parameter.schema && typeof parameter.name === 'string') {
          const name = parameter.in === 'path' && parameter.name !== 'rule' ? 'id' : parameter.name;
          // A filter checks only what its own query DTO says (`?email=` matches text; it is not an address check).
          complete(parameter.schema as Schema, name, new Map());
          const schema = parameter.schema as Schema;
          if (parameter.in === 'query' && isString(schema) && schema.minLength === undefined) {
            schema.minLength = 1; // the validation pipe refuses a parameter sent empty
          }
        }
      }
      for (const response of Object.values(
        (operation as { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> })
          ?.responses ?? {},
      )) {
        const inline = response.content?.['application/json']?.schema;
        if (inline?.properties) {
          completeObject(inline, fromRequests);
        }
      }
    }
  }
  return document;
}
