import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { operations, resolve, type Operation, type Schema } from './openapi-operations';
import { changedTables, EXCLUDED_COLUMNS, type Checksums } from './table-checksum';

/**
 * Helpers of the security suite (issue 18 item 6): checksums of one tenant's rows, the shapes of record ids, and the
 * request fields of openapi.json that take a URL the server will call.
 */

/** A record id this API issues: a prefix and a ULID (`sub_01JD…`). Names shared by every tenant (a rule) are not. */
export const RECORD_ID = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/;

/** A documented example of a record id (the examples' ULIDs are not all Crockford base32: `sub_01JD…0QAB`). */
const EXAMPLE_ID = /^[a-z]+_[0-9A-Z]{26}$/;

/** An id of the same kind as `id` that no record has. */
export function ghostOf(id: string): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const tail = [...randomBytes(26)].map((byte) => alphabet[byte % 32]).join('');
  return `${id.slice(0, id.indexOf('_') + 1)}0${tail.slice(1)}`;
}

/**
 * Checksums of every row one tenant owns: rows of tables with a `tenant_id` column, its `tenants` row, the RADIUS
 * rows of its usernames (`<slug>/…`) and FreeRADIUS clients of its NAS addresses; tables that belong to no tenant
 * (event consumers, daily usage) are taken whole. Another tenant's successful requests do not move them; a request that changes one of them does.
 */
export class TenantRows {
  private statement = '';

  constructor(
    private readonly dataSource: DataSource,
    private readonly tenantId: string,
    private readonly slug: string,
  ) {}

  async init(): Promise<void> {
    const rows = await this.dataSource.query<Array<{ name: string; columns: string[] }>>(
      `SELECT c.table_name AS name, array_agg(c.column_name::text) AS columns
         FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.table_name <> 'migrations'
        GROUP BY c.table_name ORDER BY c.table_name`,
    );
    this.statement = rows
      .map(({ name, columns }) => {
        const where = columns.includes('tenant_id')
          ? 'tenant_id = $1'
          : name === 'tenants'
            ? 'id = $1'
            : columns.includes('username')
              ? 'username LIKE $2'
              : columns.includes('nasname')
                ? 'nasname IN (SELECT ip FROM nas_devices WHERE tenant_id = $1)'
                : 'true';
        const minus = (EXCLUDED_COLUMNS[name] ?? []).map((column) => ` - '${column}'`).join('');
        return `SELECT '${name}' AS name, count(*)::text || ':' || coalesce(md5(string_agg(h, '' ORDER BY h)), '') AS sum
                  FROM (SELECT md5((to_jsonb(t)${minus})::text) AS h FROM "${name}" t WHERE ${where}) s`;
      })
      .join(' UNION ALL ');
  }

  async current(): Promise<Checksums> {
    const rows = await this.dataSource.query<Array<{ name: string; sum: string }>>(this.statement, [
      this.tenantId,
      `${this.slug.replace(/[\\%_]/g, (c) => `\\${c}`)}/%`,
    ]);
    return Object.fromEntries(rows.map((row) => [row.name, row.sum]));
  }

  /** Waits until the rows have not moved for `quietMs` (work a request started, a delivery or an order, is done). */
  async settled(quietMs = 1_000, limitMs = 30_000): Promise<Checksums> {
    const deadline = Date.now() + limitMs;
    let previous = await this.current();
    let quietSince = Date.now();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const now = await this.current();
      if (changedTables(previous, now).length > 0) {
        quietSince = Date.now();
        previous = now;
      } else if (Date.now() - quietSince >= quietMs) {
        return now;
      }
      if (Date.now() > deadline) {
        throw new Error(`tenant ${this.tenantId}: rows still changing after ${limitMs} ms`);
      }
    }
  }
}

/** A request field that takes a URL: where in which operation's body. */
export interface UrlField {
  op: Operation;
  /** Dotted path inside the body, e.g. `url` or `delivery.callback_url`. */
  path: string;
}

/** Fields named like a URL (url, uri, callback, endpoint, href) or of a URL format, in every request body schema. */
export function urlFields(): UrlField[] {
  const found: UrlField[] = [];
  const walk = (op: Operation, schema: Schema | undefined, path: string[], depth: number) => {
    const resolved = resolve(schema);
    if (depth > 8) {
      return;
    }
    for (const variant of [...(resolved.oneOf ?? []), ...(resolved.anyOf ?? []), ...(resolved.allOf ?? [])]) {
      walk(op, variant, path, depth + 1);
    }
    for (const [name, property] of Object.entries(resolved.properties ?? {})) {
      const inner = resolve(property);
      if (/url|uri|callback|endpoint|href/i.test(name) || /^(uri|url|iri)/.test(inner.format ?? '')) {
        found.push({ op, path: [...path, name].join('.') });
      }
      walk(op, property, [...path, name], depth + 1);
    }
  };
  for (const op of operations()) {
    if (op.bodySchema) {
      walk(op, op.bodySchema, [], 0);
    }
  }
  return found;
}

/** `body` with the value at a dotted path replaced (objects on the way made when missing). */
export function withValue(
  body: Record<string, unknown>,
  path: string,
  value: unknown,
): Record<string, unknown> {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let node = copy;
  for (const key of keys.slice(0, -1)) {
    node[key] = typeof node[key] === 'object' && node[key] !== null ? node[key] : {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
  return copy;
}

/** A request field that names a record by id (its documented example is one): where, and the id's prefix. */
export interface IdField {
  op: Operation;
  /** Dotted path; `name[]` is an array of objects, e.g. `allocations[].invoice_id`. */
  path: string;
  /** `sub_`, `inv_`…: the prefix of the documented example. */
  prefix: string;
}

/** Every body field of the document whose example is a record id. */
export function idFields(): IdField[] {
  const found: IdField[] = [];
  const walk = (op: Operation, schema: Schema | undefined, path: string[], depth: number) => {
    const resolved = resolve(schema);
    if (depth > 8) {
      return;
    }
    for (const [name, property] of Object.entries(resolved.properties ?? {})) {
      const inner = resolve(property);
      const example = typeof inner.example === 'string' ? inner.example : '';
      if (EXAMPLE_ID.test(example)) {
        found.push({
          op,
          path: [...path, name].join('.'),
          prefix: example.slice(0, example.indexOf('_') + 1),
        });
      }
      if (inner.items) {
        walk(op, inner.items, [...path, `${name}[]`], depth + 1);
      } else {
        walk(op, property, [...path, name], depth + 1);
      }
    }
    // Each form of a union (allocate's three) declares its own properties.
    for (const alternative of [...(resolved.oneOf ?? []), ...(resolved.anyOf ?? [])]) {
      walk(op, alternative, path, depth + 1);
    }
  };
  for (const op of operations()) {
    if (op.bodySchema) {
      walk(op, op.bodySchema, [], 0);
    }
  }
  return found;
}

/** The documented examples of an object schema's properties: `{invoice_id: 'inv_…', amount: 2500}`. */
export function exampleObject(schema: Schema | undefined, only?: string[]): Record<string, unknown> {
  const resolved = resolve(schema);
  const object: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(resolved.properties ?? {})) {
    const example = resolve(property).example;
    if (example !== undefined && (!only || only.includes(name))) {
      object[name] = example;
    }
  }
  return object;
}

/**
 * `body` with `value` at an IdField's path. A path through an array (`allocations[].invoice_id`) becomes an array of
 * one object: the item's documented example with the id in it.
 */
export function withId(
  body: Record<string, unknown>,
  field: IdField,
  value: string,
): Record<string, unknown> {
  const copy = structuredClone(body);
  let node = copy;
  let schema = resolve(field.op.bodySchema ?? undefined);
  const keys = field.path.split('.');
  for (const key of keys.slice(0, -1)) {
    const name = key.replace(/\[\]$/, '');
    const property = resolve(schema.properties?.[name]);
    if (key.endsWith('[]')) {
      const item = exampleObject(property.items);
      node[name] = [item];
      node = item;
      schema = resolve(property.items);
    } else {
      node[name] = typeof node[name] === 'object' && node[name] !== null ? node[name] : {};
      node = node[name] as Record<string, unknown>;
      schema = property;
    }
  }
  node[keys[keys.length - 1]] = value;
  return copy;
}

/**
 * When a refusal's message names a value of one of the body's enum fields that the body does not hold ("plan_id
 * applies to change_plan only", "refund_of is only for refunds"), the body with that field set to it; else null. So
 * a field that only counts in one mode of the operation is tried in that mode.
 */
export function bodyForMode(
  op: Operation,
  body: Record<string, unknown>,
  message: string,
): Record<string, unknown> | null {
  const properties = resolve(op.bodySchema ?? undefined).properties ?? {};
  for (const [name, property] of Object.entries(properties)) {
    for (const value of resolve(property).enum ?? []) {
      if (typeof value === 'string' && value.length >= 4 && body[name] !== value && message.includes(value)) {
        return { ...body, [name]: value };
      }
    }
  }
  return null;
}
