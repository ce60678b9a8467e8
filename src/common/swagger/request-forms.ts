import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * A request body that takes exactly one of several forms (allocate: invoices, the balance, or a strategy) is one
 * class for the validation pipe, but a `oneOf` in the document, so that a generated client refuses a body mixing two
 * forms or naming none (issue 27, item 18). Each form names the properties it requires; every other property of the
 * class is `false` in it (JSON Schema: never present), which openapi-typescript and hey-api type as `?: never`.
 */
type Schema = Record<string, unknown>;

export interface RequestForm {
  /** The schema name clients see, e.g. `AllocateToBalance`. */
  name: string;
  description: string;
  /** The properties this form is made of, all required. */
  properties: string[];
}

const FORMS = new Map<string, RequestForm[]>();

/** Declares the forms of a body class; the class's schema becomes a `oneOf` of them (splitRequestForms). */
export function ApiRequestForms(forms: RequestForm[]): ClassDecorator {
  return (target) => {
    FORMS.set(target.name, forms);
  };
}

/** Replaces each schema declared with ApiRequestForms by a `oneOf` of its forms, after @nestjs/swagger built it. */
export function splitRequestForms(document: OpenAPIObject): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  for (const [name, forms] of FORMS) {
    const whole = schemas[name];
    if (!whole) {
      continue;
    }
    const properties = (whole.properties ?? {}) as Record<string, Schema>;
    for (const form of forms) {
      schemas[form.name] = {
        type: 'object',
        description: form.description,
        required: form.properties,
        properties: Object.fromEntries(
          Object.entries(properties).map(([key, property]) => [
            key,
            form.properties.includes(key) ? property : false,
          ]),
        ),
      };
    }
    schemas[name] = {
      description: typeof whole.description === 'string' ? whole.description : undefined,
      oneOf: forms.map((form) => ({ $ref: `#/components/schemas/${form.name}` })),
    };
    if (schemas[name].description === undefined) {
      delete schemas[name].description;
    }
  }
  return document;
}
