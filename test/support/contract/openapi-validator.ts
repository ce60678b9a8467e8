import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The committed openapi.json as a validator of real answers (issue 27, "Proof in CI"): an answer's status must be
 * listed for its operation (method + path template), its JSON body must match that status's schema (Ajv, JSON Schema
 * 2020-12 with ajv-formats), and every response header the document declares `required` must be present (and match
 * its schema). A JSON answer on a path the document does not describe must be the error envelope. The same compiled
 * document validates request bodies for the hostile-input suite (`requestBodyProblems`).
 *
 * It reads the OpenAPI 3.1 form and tolerates the 3.0 one: `nullable: true` is rewritten to the 3.1 spelling
 * (`type: [t, 'null']`, or `anyOf: [schema, {type: 'null'}]` where there is no type) before compiling.
 */

export const OPENAPI_PATH = join(__dirname, '..', '..', '..', 'openapi.json');

type Json = Record<string, unknown>;

interface HeaderObject {
  required?: boolean;
  schema?: Json;
  $ref?: string;
}

interface ResponseObject {
  $ref?: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema?: Json }>;
}

interface OperationObject {
  operationId?: string;
  responses?: Record<string, ResponseObject>;
  requestBody?: { content?: Record<string, { schema?: Json }> };
}

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components?: {
    schemas?: Record<string, Json>;
    headers?: Record<string, HeaderObject>;
    responses?: Record<string, ResponseObject>;
  };
}

/** What the validator needs of an answer, whatever client received it. */
export interface ContractExchange {
  method: string;
  /** Absolute URL or path (a query string is ignored). */
  url: string;
  status: number;
  /** Response headers, names in any case. */
  headers: Record<string, unknown>;
  /** The body text, when the client kept it. */
  text?: string;
  /** The parsed body, used when `text` is absent. */
  body?: unknown;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const SCHEMA_BASE = 'openapi.json';
/**
 * The documentation itself (Swagger UI and the served document) and the customer portal's static pages (/portal/,
 * docs/portal.md): not part of the API the document describes.
 */
const DOCUMENTATION_PATH = /^\/(docs|portal)(\/|$|-)/;

/** OpenAPI's own schema keywords that JSON Schema does not know: annotations here, nothing to check. */
const OPENAPI_KEYWORDS = ['example', 'xml', 'externalDocs', 'discriminator', 'x-enumNames'];

/**
 * A copy of a schema in the 3.1 form Ajv 2020 compiles: 3.0's `nullable` rewritten, `$ref`s to components pointed
 * at the compiled definitions.
 */
function normalize(node: unknown): unknown {
  if (Array.isArray(node)) {
    return node.map(normalize);
  }
  if (node === null || typeof node !== 'object') {
    return node;
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$ref' && typeof value === 'string') {
      out.$ref = value.replace(/^#\/components\/schemas\//, `${SCHEMA_BASE}#/$defs/`);
    } else if (key === 'properties' || key === 'patternProperties' || key === '$defs') {
      // Property names are names, not keywords: `nullable` or `example` may well be one.
      out[key] = Object.fromEntries(
        Object.entries(value as Json).map(([name, inner]) => [name, normalize(inner)]),
      );
    } else if (key !== 'nullable') {
      out[key] = normalize(value);
    }
  }
  if ((node as Json).nullable !== true) {
    return out;
  }
  if (typeof out.type === 'string' || Array.isArray(out.type)) {
    const types: unknown[] = Array.isArray(out.type) ? out.type : [out.type];
    out.type = types.includes('null') ? types : [...types, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) {
      out.enum = [...(out.enum as unknown[]), null];
    }
    return out;
  }
  return { anyOf: [out, { type: 'null' }] };
}

function createAjv(schemas: Record<string, Json>): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  addFormats(ajv);
  for (const keyword of OPENAPI_KEYWORDS) {
    ajv.addKeyword({ keyword });
  }
  ajv.addSchema({ $id: SCHEMA_BASE, $defs: normalize(schemas) as Json });
  return ajv;
}

function pathOf(url: string): string {
  const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').split(/[?#]/)[0] || '/';
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

function headerValue(headers: Record<string, unknown>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted && value !== undefined) {
      return Array.isArray(value)
        ? value.join(', ')
        : typeof value === 'string'
          ? value
          : JSON.stringify(value);
    }
  }
  return undefined;
}

/** Ajv's errors as one readable line each: where, what, and the offending value (cut). */
export function formatAjvErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((error) => {
    const at = error.instancePath || '(root)';
    const params = JSON.stringify(error.params);
    return `${at} ${error.message ?? error.keyword} ${params.length > 160 ? `${params.slice(0, 160)}…` : params}`;
  });
}

interface CompiledRoute {
  template: string;
  pattern: RegExp;
  /** Literal segments first: `/subscribers/search` wins over `/subscribers/{id}`. */
  params: number;
}

export class OpenApiContract {
  private readonly ajv: Ajv2020;
  private readonly routes: CompiledRoute[];
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly envelopeRef: string;

  constructor(readonly document: OpenApiDocument) {
    this.ajv = createAjv(document.components?.schemas ?? {});
    this.routes = Object.keys(document.paths)
      .map((template) => {
        const source = template
          .split('/')
          .map((segment) =>
            /^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/');
        return { template, pattern: new RegExp(`^${source}$`), params: (template.match(/\{/g) ?? []).length };
      })
      .sort((a, b) => a.params - b.params);
    const names = Object.keys(document.components?.schemas ?? {});
    const envelope =
      names.find((name) => name === 'ErrorEnvelope') ?? names.find((n) => n === 'ErrorEnvelopeDto');
    if (!envelope) {
      throw new Error('openapi.json declares no ErrorEnvelope schema');
    }
    this.envelopeRef = `${SCHEMA_BASE}#/$defs/${envelope}`;
  }

  static load(path = OPENAPI_PATH): OpenApiContract {
    return new OpenApiContract(JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument);
  }

  /** The path template of the document that `url` falls under, or null. */
  templateFor(url: string): string | null {
    const path = pathOf(url);
    return this.routes.find((route) => route.pattern.test(path))?.template ?? null;
  }

  /** The problems of one answer against the document; empty when it conforms. */
  check(exchange: ContractExchange): string[] {
    const method = exchange.method.toLowerCase();
    const template = this.templateFor(exchange.url);
    const item = template ? this.document.paths[template] : undefined;
    const operation = item?.[method] ?? (method === 'head' ? item?.get : undefined);
    const contentType = headerValue(exchange.headers, 'content-type') ?? '';
    const isJson = /^application\/([\w.+-]*\+)?json\b/i.test(contentType);
    if (!operation || !HTTP_METHODS.includes(method)) {
      return this.checkUndocumented(exchange, template, isJson);
    }
    const listed = operation.responses ?? {};
    const key = [String(exchange.status), `${String(exchange.status)[0]}XX`, 'default'].find(
      (k) => k in listed,
    );
    if (!key) {
      return [`status ${exchange.status} is not listed (listed: ${Object.keys(listed).join(', ')})`];
    }
    const response = this.resolveResponse(listed[key]);
    const problems = this.checkHeaders(exchange, response, `${method} ${template} ${key}`);
    if (method === 'head' || exchange.status === 204 || exchange.status === 304) {
      return problems;
    }
    const declared = response.content ?? {};
    const jsonType = Object.keys(declared).find((type) => /^application\/([\w.+-]*\+)?json$/i.test(type));
    const text = this.bodyText(exchange);
    if (!isJson) {
      if (jsonType && text !== '') {
        problems.push(`content-type ${JSON.stringify(contentType)}, the document says ${jsonType}`);
      }
      return problems;
    }
    if (!jsonType) {
      problems.push(
        `a JSON body the document does not declare (declared: ${Object.keys(declared).join(', ') || 'no content'})`,
      );
      return problems;
    }
    const schema = declared[jsonType].schema;
    if (!schema) {
      return problems;
    }
    return [...problems, ...this.validateJson(`${method} ${template} ${key}`, schema, text, exchange.body)];
  }

  /**
   * Ajv's complaints about a request body for `method` + `template` (empty: valid; null: the operation declares no
   * JSON body). For the hostile-input suite: a 2xx for a body with complaints is the server accepting what the
   * document forbids.
   */
  requestBodyProblems(method: string, template: string, body: unknown): string[] | null {
    const operation = this.document.paths[template]?.[method.toLowerCase()];
    const content = operation?.requestBody?.content ?? {};
    const jsonType = Object.keys(content).find((type) => /^application\/([\w.+-]*\+)?json$/i.test(type));
    const schema = jsonType ? content[jsonType].schema : undefined;
    if (!schema) {
      return null;
    }
    const validate = this.compile(`request ${method} ${template}`, schema);
    return validate(body) ? [] : formatAjvErrors(validate.errors);
  }

  /** Ajv's complaints about `value` against any schema of the document (a parameter's, say). */
  schemaProblems(key: string, schema: Json, value: unknown): string[] {
    const validate = this.compile(key, schema);
    return validate(value) ? [] : formatAjvErrors(validate.errors);
  }

  private checkUndocumented(exchange: ContractExchange, template: string | null, isJson: boolean): string[] {
    const where = template
      ? `${exchange.method.toUpperCase()} is not an operation of ${template}`
      : 'no path';
    if (!isJson) {
      // Swagger UI's HTML and assets, Node's own bare refusals: nothing the document describes.
      return [];
    }
    if (exchange.status < 400) {
      return DOCUMENTATION_PATH.test(pathOf(exchange.url))
        ? []
        : [`${where} of the document matches, yet it answered ${exchange.status}`];
    }
    return this.validateJson(
      `undocumented ${where}`,
      { $ref: this.envelopeRef },
      this.bodyText(exchange),
      exchange.body,
    );
  }

  private checkHeaders(exchange: ContractExchange, response: ResponseObject, where: string): string[] {
    const problems: string[] = [];
    for (const [name, declared] of Object.entries(response.headers ?? {})) {
      const header = this.resolveHeader(declared);
      const value = headerValue(exchange.headers, name);
      if (value === undefined) {
        if (header.required) {
          problems.push(`required header ${name} is missing`);
        }
        continue;
      }
      if (header.schema) {
        const validate = this.compile(`${where} header ${name}`, header.schema);
        const typed = this.headerTyped(value, header.schema);
        if (!validate(typed)) {
          problems.push(
            `header ${name}: ${JSON.stringify(value)} ${formatAjvErrors(validate.errors).join('; ')}`,
          );
        }
      }
    }
    return problems;
  }

  /** A header's text as the type its schema names (headers are strings on the wire). */
  private headerTyped(value: string, schema: Json): unknown {
    const resolved: Json = schema.$ref ? {} : schema;
    const types = ([] as unknown[]).concat(resolved.type ?? []);
    if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(value.trim())) {
      return Number(value);
    }
    if (types.includes('boolean') && /^(true|false)$/.test(value)) {
      return value === 'true';
    }
    return value;
  }

  private validateJson(key: string, schema: Json, text: string, parsed: unknown): string[] {
    let body: unknown = parsed;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        return [`the body is not JSON: ${JSON.stringify(text.slice(0, 80))}`];
      }
    }
    const validate = this.compile(key, schema);
    return validate(body) ? [] : formatAjvErrors(validate.errors);
  }

  private bodyText(exchange: ContractExchange): string {
    if (typeof exchange.text === 'string') {
      return exchange.text;
    }
    if (exchange.body === undefined || exchange.body === null) {
      return '';
    }
    if (Buffer.isBuffer(exchange.body)) {
      return exchange.body.toString('utf8');
    }
    return typeof exchange.body === 'object' && Object.keys(exchange.body).length === 0
      ? ''
      : JSON.stringify(exchange.body);
  }

  private compile(key: string, schema: Json): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(normalize(schema) as Json);
      this.compiled.set(key, validate);
    }
    return validate;
  }

  private resolveResponse(response: ResponseObject): ResponseObject {
    let current = response;
    for (let hops = 0; current.$ref && hops < 10; hops++) {
      current = this.document.components?.responses?.[current.$ref.split('/').pop() ?? ''] ?? {};
    }
    return current;
  }

  private resolveHeader(header: HeaderObject): HeaderObject {
    let current = header;
    for (let hops = 0; current.$ref && hops < 10; hops++) {
      current = this.document.components?.headers?.[current.$ref.split('/').pop() ?? ''] ?? {};
    }
    return current;
  }
}

let shared: OpenApiContract | undefined;

/** The committed document, compiled once per test file. */
export function openApiContract(): OpenApiContract {
  shared ??= OpenApiContract.load();
  return shared;
}
