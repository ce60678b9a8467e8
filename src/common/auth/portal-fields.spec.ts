import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PortalView, portalView, PORTAL_VIEWS } from './portal-fields';
import { PORTAL_OPERATIONS } from './portal-policy';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
};

const document = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')) as {
  paths: Record<
    string,
    Record<
      string,
      { operationId?: string; responses: Record<string, { content?: Record<string, { schema: Schema }> }> }
    >
  >;
  components: { schemas: Record<string, Schema> };
};

const byId = new Map(
  Object.values(document.paths)
    .flatMap((item) => Object.values(item))
    .map((operation) => [operation.operationId, operation] as const),
);

/** The schema a property's value (or each item of it) has, $refs followed; null for a scalar. */
function objectSchemaOf(schema: Schema): Schema | null {
  const inner = schema.items ?? schema;
  const ref =
    inner.$ref ??
    [...(inner.allOf ?? []), ...(inner.anyOf ?? []), ...(inner.oneOf ?? [])].find((s) => s.$ref)?.$ref;
  if (ref) {
    return document.components.schemas[ref.split('/').pop()!];
  }
  return inner.properties ? inner : null;
}

/** Every field of the schema, recursively, that the view does not decide (neither shows nor hides), and back. */
function undecided(view: PortalView, schema: Schema, at: string): string[] {
  const properties = schema.properties ?? {};
  const gaps: string[] = [];
  for (const [field, property] of Object.entries(properties)) {
    if (!Object.hasOwn(view, field)) {
      gaps.push(`${at}.${field} (in the schema, not in the view)`);
      continue;
    }
    const rule = view[field];
    const nested = objectSchemaOf(property);
    if (typeof rule === 'object') {
      gaps.push(
        ...(nested ? undecided(rule, nested, `${at}.${field}`) : [`${at}.${field} (a view of a scalar)`]),
      );
    } else if (rule === true && nested) {
      gaps.push(`${at}.${field} (an object shown unviewed)`);
    }
  }
  for (const field of Object.keys(view)) {
    if (!Object.hasOwn(properties, field)) {
      gaps.push(`${at}.${field} (in the view, not in the schema)`);
    }
  }
  return gaps;
}

describe('PORTAL_VIEWS', () => {
  it.each(Object.entries(PORTAL_OPERATIONS))(
    "should name %s's answer as openapi.json documents it",
    (operationId, rule) => {
      const operation = byId.get(operationId)!;
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1];
      if (rule.answer === 'document') {
        expect(Object.keys(success.content ?? {})).toContain('application/pdf');
        return;
      }
      const data = success.content!['application/json'].schema.properties!.data;
      expect((data.items ?? data).$ref).toBe(`#/components/schemas/${rule.answer}`);
    },
  );

  it.each(Object.keys(PORTAL_VIEWS))(
    'should decide every field of %s (shown or hidden), nested ones included',
    (name) => {
      const view: PortalView = PORTAL_VIEWS[name as keyof typeof PORTAL_VIEWS];
      expect(undecided(view, document.components.schemas[name], name)).toEqual([]);
    },
  );
});

describe('portalView', () => {
  const view: PortalView = {
    id: true,
    tags: true,
    secret: false,
    address: { city: true },
    lines: { amount: true },
  };

  it('should keep only the fields the view shows, in lists and nested objects too', () => {
    const record = {
      id: 'x_1',
      secret: 's',
      unknown: 'added later',
      address: { city: 'Springfield', line1: 'hidden' },
      lines: [{ amount: 1, charge_id: 'c' }, { amount: 2 }],
      tags: ['a', 'b'],
    };
    expect(portalView(view, record)).toEqual({
      id: 'x_1',
      address: { city: 'Springfield' },
      lines: [{ amount: 1 }, { amount: 2 }],
      tags: ['a', 'b'],
    });
    expect(portalView(view, [record])).toEqual([expect.not.objectContaining({ secret: 's' })]);
    expect(portalView(view, { id: 'x', address: null })).toEqual({ id: 'x', address: null });
  });

  it('should never show an object under a field shown as it is, nor a field named like an Object method', () => {
    const record = JSON.parse(
      '{"id": {"password": "p"}, "tags": [{"k": 1}], "constructor": 1, "__proto__": {"a": 1}}',
    );
    expect(portalView(view, record)).toEqual({});
  });
});
