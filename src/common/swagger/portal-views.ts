import type { OpenAPIObject } from '@nestjs/swagger';
import { type PortalView, PORTAL_VIEWS } from '../auth/portal-fields';

type Schema = {
  $ref?: string;
  description?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
};

/** The components.schemas name a property's value (or each item of it) is, or null for a scalar. */
function refOf(property: Schema): string | null {
  const inner = property.items ?? property;
  const ref =
    inner.$ref ??
    [...(inner.allOf ?? []), ...(inner.anyOf ?? []), ...(inner.oneOf ?? [])].find((s) => s.$ref)?.$ref;
  return ref ? ref.split('/').pop()! : null;
}

/**
 * The records a portal session reads (PORTAL_VIEWS, docs/portal.md) say what its answers leave out: those fields are
 * not `required` (an operator's answer still has them) and the schema's description names them. Runs on the 3.1
 * document, whose schema names are the ones PORTAL_VIEWS uses.
 */
export function documentPortalViews(document: OpenAPIObject): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  const done = new Set<string>();
  const visit = (name: string, view: PortalView): void => {
    const schema = schemas[name];
    if (!schema?.properties || done.has(name)) {
      return;
    }
    done.add(name);
    const hidden: string[] = [];
    for (const [field, property] of Object.entries(schema.properties)) {
      const rule = Object.hasOwn(view, field) ? view[field] : false;
      const nested = refOf(property);
      if (rule === false) {
        hidden.push(field);
      } else if (rule !== true && nested) {
        visit(nested, rule);
      }
    }
    if (hidden.length > 0) {
      schema.required = schema.required?.filter((field) => !hidden.includes(field));
      schema.description =
        `${schema.description ?? ''} A portal session's answer (docs/portal.md) leaves out ${hidden.join(', ')}.`.trim();
    }
  };
  for (const [name, view] of Object.entries(PORTAL_VIEWS)) {
    visit(name, view);
  }
  return document;
}
