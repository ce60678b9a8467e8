import type { OpenAPIObject } from '@nestjs/swagger';
import { ERROR_CATALOG, type ErrorCode } from '../errors/error-catalog';

/**
 * What the HTTP pipeline does for every operation, written into the document once here rather than on each
 * controller (issue 27, items 15 to 17): the headers each response carries, the conditional-request parameters and
 * statuses, the body errors of every operation that can carry a body, and request defaults clients can rely on.
 */
type Schema = Record<string, unknown>;
type Media = { schema?: Schema; example?: unknown; examples?: Record<string, { value: unknown }> };
type Response = { description: string; headers?: Record<string, unknown>; content?: Record<string, Media> };
type Operation = {
  'x-if-match'?: boolean;
  'x-request-content'?: Record<string, Media>;
  parameters?: Schema[];
  requestBody?: { content?: Record<string, Media> };
  responses: Record<string, Response>;
  security?: Record<string, string[]>[];
  'x-idempotency'?: boolean;
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** components.headers: each response header the server sends, described once. */
export const RESPONSE_HEADERS: Record<string, Schema> = {
  'X-Request-ID': {
    description:
      'The id of this request: yours when you sent a valid X-Request-ID, else one the server made.',
    required: true,
    schema: { type: 'string', maxLength: 128, examples: ['req_01JD3Z6W3R4T5Y6U7I8O9P0QAB'] },
  },
  RateLimit: {
    description:
      'The budget left in the current window (IETF draft-ietf-httpapi-ratelimit-headers): `"<policy>";r=<remaining>;t=<seconds until reset>`.',
    schema: { type: 'string', maxLength: 200, examples: ['"default";r=99;t=60'] },
  },
  'RateLimit-Policy': {
    description: 'The policy the budget is counted under: `"<policy>";q=<requests>;w=<window seconds>`.',
    schema: { type: 'string', maxLength: 200, examples: ['"default";q=100;w=60'] },
  },
  'X-RateLimit-Limit': {
    description: 'Requests allowed per window (GitHub-style; RateLimit-Policy says the same).',
    schema: { type: 'integer', minimum: 0, examples: [100] },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', minimum: 0, examples: [99] },
  },
  'X-RateLimit-Reset': {
    description: 'When the current window resets, as GitHub sends it: a Unix epoch time in seconds.',
    schema: { type: 'integer', minimum: 0, examples: [1795255260] },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: { type: 'integer', minimum: 0, examples: [30] },
  },
  'Idempotent-Replayed': {
    description:
      'Present (`true`) when this answer is the stored answer to an earlier request with the same X-Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Original-Request-ID': {
    description: 'On a replayed answer: the request id of the request that produced it.',
    schema: { type: 'string', maxLength: 128, examples: ['req_01JD3Z6W3R4T5Y6U7I8O9P0QAB'] },
  },
  'WWW-Authenticate': {
    description:
      'The bearer challenge (RFC 6750): `Bearer` without a token, `Bearer error="invalid_token"` for a bad one, ' +
      '`Bearer error="insufficient_scope", scope="…"` when the token lacks a scope.',
    schema: { type: 'string', maxLength: 500, examples: ['Bearer error="invalid_token"'] },
  },
  ETag: {
    description:
      "The record's entity tag: send it back as If-Match to change the record only if nobody else did, or as If-None-Match to get 304 when it is unchanged.",
    schema: { type: 'string', maxLength: 64, examples: ['"q1tdM8aYVqUJ0m3fW0bX2yYzZPa"'] },
  },
  'Cache-Control': {
    description: '`no-store`: this answer carries a secret that no cache may keep.',
    required: true,
    schema: { type: 'string', enum: ['no-store'] },
  },
};

const CONDITIONAL_PARAMETERS: Record<string, Schema> = {
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'Apply the change only if the record still has this ETag (or any, for `*`); otherwise 412 `precondition_failed` and nothing changes.',
    schema: { type: 'string', maxLength: 1024 },
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'Answer 304 without a body when the record still has one of these ETags (or for `*`).',
    schema: { type: 'string', maxLength: 1024 },
  },
};

/** Responses whose answer carries a secret the client must not let a cache keep. */
const SECRET_RESPONSES = new Set([
  'POST /api/v1/tokens 201',
  'POST /api/v1/webhooks 201',
  'POST /api/v1/webhooks/{id}/rotate-secret 200',
]);

function errorExample(code: ErrorCode) {
  return {
    value: {
      success: false,
      error: { code, message: ERROR_CATALOG[code].description, field: null },
      meta: { request_id: 'req_01JD3Z6W3R4T5Y6U7I8O9P0QAB', api_version: 'v1' },
    },
  };
}

/** Adds error codes to an operation's responses, merged into the status's answer when it is listed already. */
function addErrors(operation: Operation, codes: ErrorCode[]): void {
  for (const code of codes) {
    const status = String(ERROR_CATALOG[code].status);
    const line = `\`${code}\`: ${ERROR_CATALOG[code].description}`;
    const response = (operation.responses[status] ??= {
      description: '',
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelopeDto' }, examples: {} },
      },
    });
    const media = response.content?.['application/json'];
    if (!media || media.examples?.[code]) {
      continue;
    }
    media.examples = { ...(media.examples ?? {}), [code]: errorExample(code) };
    response.description = response.description ? `${response.description}<br>${line}` : line;
  }
}

/** The record a 2xx answer carries, when it is one object (not a list): what the ETag interceptor tags. */
function answersOneRecord(response: Response, document: OpenAPIObject): boolean {
  const schema = response.content?.['application/json']?.schema;
  const data = (schema?.properties as Record<string, Schema> | undefined)?.data;
  if (!data) {
    return false;
  }
  const ref = typeof data.$ref === 'string' ? data.$ref.split('/').pop()! : null;
  const resolved = ref ? (document.components?.schemas?.[ref] as Schema | undefined) : data;
  return !!resolved && resolved.type !== 'array';
}

function sortResponses(operation: Operation): void {
  operation.responses = Object.fromEntries(
    Object.entries(operation.responses).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/**
 * A 405 answers a method a path lacks, so no operation of the document can list it: it is described once here and
 * named in info.description (the exception filter asks Express' routing table, allowed-methods.ts).
 */
const METHOD_NOT_ALLOWED: Response = {
  description:
    '`method_not_allowed`: the path exists, but not with this method. `Allow` lists the methods it takes ' +
    '(GET brings HEAD). Sent without a token check, like a 404.',
  headers: {
    Allow: {
      description: 'The methods this path takes, comma-separated.',
      required: true,
      schema: { type: 'string', maxLength: 100, example: 'GET, HEAD, PATCH' },
    },
    'X-Request-ID': header('X-Request-ID'),
  },
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/ErrorEnvelopeDto' },
      example: errorExample('method_not_allowed').value,
    },
  },
};

/**
 * The conventions every operation follows, written into the document: the errors any request may meet, the
 * conditional request headers, and the response headers (request id, rate limit budget, ETag, idempotency).
 */
export function documentResponses(document: OpenAPIObject): OpenAPIObject {
  const components = (document.components ??= {}) as Record<string, unknown>;
  components.headers = { ...(components.headers ?? {}), ...RESPONSE_HEADERS };
  components.parameters = { ...(components.parameters ?? {}), ...CONDITIONAL_PARAMETERS };
  components.responses = { ...(components.responses ?? {}), MethodNotAllowed: METHOD_NOT_ALLOWED };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (operation) {
        documentOperation(document, path, method, operation);
      }
    }
  }
  return document;
}

/** What decides the headers of an operation's responses. */
interface HeaderTraits {
  path: string;
  method: (typeof METHODS)[number];
  operation: Operation;
  /** It answers the budget headers (it may answer 429). */
  rateLimited: boolean;
  /** A write on a record that answers the record (its ETag). */
  answersTarget: boolean;
}

/** One operation's errors any request may meet, its conditional request parameters, and its responses' headers. */
function documentOperation(
  document: OpenAPIObject,
  path: string,
  method: (typeof METHODS)[number],
  operation: Operation,
): void {
  const writes = method !== 'get';
  const onRecord = /\{[^}]+\}/.test(path);
  // Every request that carries a body is read by JsonBodyGuard: 415, 413 and 400 invalid_json apply to all.
  if (writes) {
    addErrors(operation, ['invalid_json', 'payload_too_large', 'unsupported_media_type']);
  }
  // Every operation refuses a query parameter it does not declare (400 invalid_query), the probes included.
  addErrors(operation, ['invalid_query']);
  // The liveness and readiness probes skip the rate limit (@SkipThrottle), so they send no budget headers.
  const rateLimited = '429' in operation.responses && !path.startsWith('/health');
  const oneRecordRead =
    method === 'get' && Object.values(operation.responses).some((r) => answersOneRecord(r, document));
  // If-Match is declared where the service compares it (@HonoursIfMatch), not on every write under a record.
  const conditionalWrite = operation['x-if-match'] === true;
  delete operation['x-if-match'];
  // A streamed upload's media types, each with its own schema and example (ApiRequestContent).
  if (operation['x-request-content']) {
    operation.requestBody = { ...operation.requestBody, content: operation['x-request-content'] };
    delete operation['x-request-content'];
  }
  const answersTarget = onRecord && (method === 'patch' || method === 'put' || method === 'post');
  if (oneRecordRead) {
    operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/IfNoneMatch' }];
    operation.responses['304'] = {
      description: 'Not Modified: the record still has the ETag named in If-None-Match; no body.',
      headers: { ETag: header('ETag'), 'X-Request-ID': header('X-Request-ID') },
    };
  }
  if (conditionalWrite) {
    operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/IfMatch' }];
    addErrors(operation, ['precondition_failed']);
  }
  // Every authenticated request reads its token from the database, so a pool or statement timeout or a deadlock
  // retried out (transaction-runner.ts) answers 503 with Retry-After on any of them.
  if (operation.security?.some((requirement) => 'bearer' in requirement) ?? true) {
    addErrors(operation, ['service_unavailable']);
  }
  const traits: HeaderTraits = { path, method, operation, rateLimited, answersTarget };
  for (const [status, response] of Object.entries(operation.responses)) {
    response.headers = responseHeaders(document, traits, status, response);
  }
  sortResponses(operation);
}

/** The headers of one response: the request id always, and those its status and operation call for. */
function responseHeaders(
  document: OpenAPIObject,
  { path, method, operation, rateLimited, answersTarget }: HeaderTraits,
  status: string,
  response: Response,
): Record<string, unknown> {
  const headers: Record<string, unknown> = {
    ...(response.headers ?? {}),
    'X-Request-ID': header('X-Request-ID'),
  };
  if (rateLimited && status !== '304') {
    for (const name of [
      'RateLimit',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ]) {
      headers[name] = header(name);
    }
  }
  if (status === '429' || status === '503') {
    headers['Retry-After'] = header('Retry-After');
  }
  if (status === '401' || status === '403') {
    headers['WWW-Authenticate'] = header('WWW-Authenticate');
  }
  if (status.startsWith('2')) {
    if (method === 'post' && operation['x-idempotency'] !== false) {
      headers['Idempotent-Replayed'] = header('Idempotent-Replayed');
      headers['Original-Request-ID'] = header('Original-Request-ID');
    }
    if (answersOneRecord(response, document) && (method === 'get' || answersTarget)) {
      headers.ETag = header('ETag');
    }
    if (SECRET_RESPONSES.has(`${method.toUpperCase()} ${path} ${status}`)) {
      headers['Cache-Control'] = header('Cache-Control');
    }
  }
  return headers;
}

/**
 * A default on a request property is a promise the server applies it: openapi-typescript (default flags) then types
 * the property as always present, so a create body without it no longer compiles, and on a PATCH the promise is false
 * (an absent field is left unchanged). The default is said in the description instead; a PATCH body states none.
 */
export function moveRequestDefaultsToDescriptions(document: OpenAPIObject): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  const bodies = new Map<string, boolean>(); // schema name → used by a PATCH
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      const ref = operation?.requestBody?.content?.['application/json']?.schema?.$ref;
      if (typeof ref === 'string') {
        const name = ref.split('/').pop()!;
        bodies.set(name, (bodies.get(name) ?? false) || method === 'patch');
      }
    }
  }
  for (const [name, patch] of bodies) {
    for (const property of Object.values((schemas[name]?.properties ?? {}) as Record<string, Schema>)) {
      if (!('default' in property)) {
        continue;
      }
      const value = property.default;
      delete property.default;
      const said = typeof property.description === 'string' ? property.description : '';
      if (!patch && !/default/i.test(said)) {
        property.description = `${said}${said ? ' ' : ''}Default: \`${JSON.stringify(value)}\`.`;
      }
    }
  }
  return document;
}
