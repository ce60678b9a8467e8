import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * Conventions applied to the generated document after @nestjs/swagger built it, so that no controller repeats them
 * (each checked by `npm run lint:openapi`): a description for every parameter and an example of every 2xx envelope.
 */

type Schema = Record<string, unknown>;
type Operation = {
  parameters?: Schema[];
  responses?: Record<string, { content?: Record<string, Schema> }>;
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function operations(document: OpenAPIObject): [path: string, operation: Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = (item as Record<string, Operation | undefined>)[method];
      return operation ? [[path, operation] as [string, Operation]] : [];
    }),
  );
}

/** `webhook-deliveries` → `webhook delivery`: the record a path segment holds. */
function singular(segment: string): string {
  return segment.replace(/-/g, ' ').replace(/ies$/, 'y').replace(/s$/, '');
}

/**
 * Path ids and query filters say what they are unless a DTO said it: a path parameter is the id of the record of
 * the collection before it; a query parameter of a list is an exact-match filter.
 */
export function describeParameters(document: OpenAPIObject): OpenAPIObject {
  for (const [path, operation] of operations(document)) {
    for (const parameter of operation.parameters ?? []) {
      if (typeof parameter.name !== 'string') {
        continue;
      }
      // A list filter that takes several values takes them comma-separated (common/validation/comma-list.ts).
      if (parameter.in === 'query' && (parameter.schema as Schema | undefined)?.type === 'array') {
        Object.assign(parameter, { style: 'form', explode: false });
      }
      if (parameter.description) {
        continue;
      }
      const segments = path.split('/');
      const at = segments.indexOf(`{${parameter.name}}`);
      if (parameter.in === 'path' && at > 0) {
        parameter.description = `The id of the ${singular(segments[at - 1])}.`;
      } else if (parameter.in === 'query') {
        parameter.description = `Only records whose \`${parameter.name}\` is this value.`;
      }
    }
  }
  return document;
}

/** An example value for a schema, built from the `example`s its properties declare (the first branch of a union). */
export function exampleOf(schema: Schema | undefined, document: OpenAPIObject, depth = 0): unknown {
  if (!schema || depth > 16) {
    return undefined;
  }
  if (schema.example !== undefined) {
    return schema.example;
  }
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return exampleOf(document.components?.schemas?.[name] as Schema | undefined, document, depth + 1);
  }
  for (const union of ['allOf', 'oneOf', 'anyOf']) {
    const branches = schema[union] as Schema[] | undefined;
    if (branches?.length) {
      return union === 'allOf'
        ? Object.assign({}, ...branches.map((branch) => exampleOf(branch, document, depth + 1)))
        : exampleOf(branches[0], document, depth + 1);
    }
  }
  // A nullable field without an example of its own shows null: the state a fresh record is in (no suspension_reason).
  if (schema.nullable === true) {
    return null;
  }
  if (Array.isArray(schema.enum)) {
    return schema.enum[0];
  }
  if (schema.type === 'array') {
    const item = exampleOf(schema.items as Schema | undefined, document, depth + 1);
    return item === undefined ? [] : [item];
  }
  if (schema.type === 'object' || schema.properties) {
    const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>)
      .map(([name, property]) => [name, exampleOf(property, document, depth + 1)] as const)
      .filter(([, value]) => value !== undefined);
    return Object.fromEntries(properties);
  }
  return schema.nullable ? null : undefined;
}

/** Every 2xx JSON answer shows a whole envelope, so Swagger UI and mock servers show what a call returns. */
export function addSuccessExamples(document: OpenAPIObject): OpenAPIObject {
  for (const [, operation] of operations(document)) {
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const media = response.content?.['application/json'];
      if (!status.startsWith('2') || !media || media.example !== undefined || media.examples !== undefined) {
        continue;
      }
      media.example = exampleOf(media.schema as Schema | undefined, document);
    }
  }
  return document;
}
