import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * @nestjs/swagger writes OpenAPI 3.0 schemas (`nullable`, `example`, boolean `exclusiveMinimum`), even when told the
 * document is 3.1 (setOpenAPIVersion only changes the version string). This pass, the last one, turns them into
 * OpenAPI 3.1 / JSON Schema 2020-12 so that every JSON Schema validator reads them as meant (docs/decisions.md,
 * "OpenAPI 3.1"), and names the types as clients read them (`SubscriberDto` → `Subscriber`).
 */
type Schema = Record<string, unknown>;

const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_VALUES = ['items', 'additionalProperties', 'not', 'contains', 'if', 'then', 'else'];

/** Rewrites one schema and everything nested in it, in place. */
export function toJsonSchema2020(schema: Schema): Schema {
  if (typeof schema !== 'object' || schema === null) {
    return schema; // a boolean schema (`false`: never present, request-forms.ts) has nothing to convert
  }
  for (const key of SCHEMA_MAPS) {
    const map = schema[key] as Record<string, Schema> | undefined;
    for (const inner of Object.values(map ?? {})) {
      toJsonSchema2020(inner);
    }
  }
  for (const key of SCHEMA_LISTS) {
    for (const inner of (schema[key] as Schema[] | undefined) ?? []) {
      toJsonSchema2020(inner);
    }
  }
  for (const key of SCHEMA_VALUES) {
    const inner = schema[key];
    if (inner && typeof inner === 'object') {
      toJsonSchema2020(inner as Schema);
    }
  }
  if ('example' in schema) {
    schema.examples = [schema.example];
    delete schema.example;
  }
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (schema[exclusive] === true) {
      schema[exclusive] = schema[bound];
      delete schema[bound];
    } else if (schema[exclusive] === false) {
      delete schema[exclusive];
    }
  }
  const nullable = schema.nullable === true;
  delete schema.nullable;
  if (!nullable) {
    return schema;
  }
  // A nullable reference: 3.0's `nullable` beside `allOf: [$ref]` reaches no validator; 3.1 says "this or null".
  const allOf = schema.allOf as Schema[] | undefined;
  const ref =
    typeof schema.$ref === 'string'
      ? { $ref: schema.$ref }
      : allOf?.length === 1 && typeof allOf[0].$ref === 'string'
        ? allOf[0]
        : null;
  if (ref) {
    delete schema.$ref;
    delete schema.allOf;
    delete schema.type; // `type: object` beside the union would refuse the null it allows
    schema.anyOf = [ref, { type: 'null' }];
    return schema;
  }
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) {
    if (!union.some((branch) => branch.type === 'null')) {
      union.push({ type: 'null' });
    }
    return schema;
  }
  if (typeof schema.type === 'string') {
    schema.type = [schema.type, 'null'];
  } else if (Array.isArray(schema.type) && !schema.type.includes('null')) {
    schema.type = [...(schema.type as string[]), 'null'];
  }
  // A nullable enum lists null among its values, or no validator lets null through.
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) {
    schema.enum = [...(schema.enum as unknown[]), null];
  }
  return schema;
}

/** Every schema object of the document outside components.schemas: parameters, headers, bodies, responses. */
function visitSchemas(value: unknown, visit: (schema: Schema) => void, parentKey = ''): void {
  if (Array.isArray(value)) {
    value.forEach((item) => visitSchemas(item, visit));
    return;
  }
  if (!value || typeof value !== 'object' || parentKey === 'example' || parentKey === 'examples') {
    return;
  }
  for (const [key, inner] of Object.entries(value as Schema)) {
    if (key === 'schema' && inner && typeof inner === 'object') {
      visit(inner as Schema);
    } else if (key === 'schemas' && parentKey === 'components') {
      for (const schema of Object.values(inner as Record<string, Schema>)) {
        visit(schema);
      }
    } else {
      visitSchemas(inner, visit, key);
    }
  }
}

/** `CreatedSubscriberDto` → `CreatedSubscriber`: the name a client sees, unless another schema has it already. */
export function clientName(name: string, taken: Set<string>): string {
  const stripped = name.replace(/Dto$/, '');
  return stripped !== name && stripped.length > 0 && !taken.has(stripped) ? stripped : name;
}

function renameSchemas(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  const taken = new Set(Object.keys(schemas));
  const renames = new Map<string, string>();
  for (const name of Object.keys(schemas)) {
    const renamed = clientName(name, taken);
    if (renamed !== name) {
      renames.set(name, renamed);
      taken.add(renamed);
    }
  }
  document.components!.schemas = Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => [renames.get(name) ?? name, schema]),
  );
  const rewrite = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(rewrite);
      return;
    }
    if (!value || typeof value !== 'object') {
      return;
    }
    const node = value as Schema;
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/components/schemas/')) {
      const name = node.$ref.slice('#/components/schemas/'.length);
      node.$ref = `#/components/schemas/${renames.get(name) ?? name}`;
    }
    Object.values(node).forEach(rewrite);
  };
  rewrite(document);
}

export function toOpenApi31(document: OpenAPIObject): OpenAPIObject {
  document.openapi = '3.1.0';
  visitSchemas(document, toJsonSchema2020);
  renameSchemas(document);
  return document;
}
