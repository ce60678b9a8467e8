import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The operations of the committed openapi.json, read once: the hostile-input suite walks these instead of a list of
 * its own, so an endpoint added to the document is attacked the day it lands.
 */

/** The subset of JSON Schema the document uses for request bodies. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  additionalProperties?: boolean | Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  nullable?: boolean;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  example?: unknown;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

interface RawOperation {
  operationId: string;
  parameters?: Parameter[];
  security?: unknown[];
  requestBody?: {
    content: Record<string, { schema?: Schema; examples?: Record<string, { value: unknown }> }>;
  };
  responses: Record<string, unknown>;
}

interface Document {
  paths: Record<string, Record<string, RawOperation>>;
  components: { schemas: Record<string, Schema> };
}

export type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';

export interface Operation {
  method: Method;
  /** The templated path, e.g. `/api/v1/subscribers/{id}`. */
  path: string;
  operationId: string;
  pathParams: string[];
  queryParams: Parameter[];
  /** The JSON body schema, `$ref`s resolved lazily by `resolve`; null when the operation takes no body. */
  bodySchema: Schema | null;
  /** The documented request example (`examples.default`), the valid body every mutation starts from. */
  example: unknown;
  /** Whether the operation is a list (a GET whose query takes `limit`). */
  isList: boolean;
}

export const OPENAPI_PATH = join(__dirname, '..', '..', '..', 'openapi.json');

const document = withSchemaExamples(JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as Document);

/**
 * OpenAPI 3.1 writes a schema's example as `examples: [value]` (JSON Schema 2020-12); the suites read `example`, so each
 * schema of this in-memory copy gets its first one as `example` too.
 */
function withSchemaExamples<T>(value: T): T {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(walk);
      return;
    }
    if (!node || typeof node !== 'object') {
      return;
    }
    const schema = node as { example?: unknown; examples?: unknown };
    if (schema.example === undefined && Array.isArray(schema.examples) && schema.examples.length > 0) {
      schema.example = schema.examples[0];
    }
    Object.values(node).forEach(walk);
  };
  walk(value);
  return value;
}

/** A schema with its `$ref` (and a single-entry allOf, as Nest's swagger writes nested DTOs) followed. */
export function resolve(schema: Schema | undefined): Schema {
  let current: Schema = schema ?? {};
  for (let hops = 0; hops < 20; hops++) {
    if (current.$ref) {
      const name = current.$ref.replace('#/components/schemas/', '');
      current = document.components.schemas[name] ?? {};
    } else if (current.allOf?.length === 1) {
      current = current.allOf[0];
    } else if (
      current.anyOf?.length === 2 &&
      current.anyOf.some((alternative) => alternative.type === 'null')
    ) {
      // A nullable reference (3.1): the schema of its value when it is not null.
      current = current.anyOf.find((alternative) => alternative.type !== 'null')!;
    } else {
      return current;
    }
  }
  return current;
}

/** Every operation of the document, in document order. */
export function operations(): Operation[] {
  const all: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!['get', 'post', 'patch', 'delete', 'put'].includes(method) || !raw?.operationId) {
        continue;
      }
      const json = raw.requestBody?.content['application/json'];
      const queryParams = (raw.parameters ?? []).filter((parameter) => parameter.in === 'query');
      all.push({
        method: method as Method,
        path,
        operationId: raw.operationId,
        pathParams: (raw.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        queryParams,
        bodySchema: json?.schema ?? null,
        example: json?.examples?.default?.value,
        isList: method === 'get' && queryParams.some((parameter) => parameter.name === 'limit'),
      });
    }
  }
  return all;
}

/** Every POST, PATCH and PUT: the operations that read a JSON body. */
export function writeOperations(): Operation[] {
  return operations().filter((op) => op.method === 'post' || op.method === 'patch' || op.method === 'put');
}

/** Every DELETE: the operations that remove what their path names. */
export function deleteOperations(): Operation[] {
  return operations().filter((op) => op.method === 'delete');
}

/** Every GET that lists or reads by id (health and info included: they take query strings and headers too). */
export function readOperations(): Operation[] {
  return operations().filter((op) => op.method === 'get');
}
