import { EntityManager } from 'typeorm';
import { RenderedPage } from '../common/envelope/envelope';
import { decodeCursor, encodeCursor, type PageQueryDto } from '../common/pagination';
import { preparedQuery, type PreparedStatement } from './prepared-query';
import { SqlParams } from './sql-params';

/**
 * `expression` (a timestamptz) as JSON text renders a Date: `toISOString()`'s form, in UTC with milliseconds.
 * For the item expressions of renderedPage.
 */
export function isoTimestampSql(expression: string): string {
  return `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** A condition of a rendered list: SQL whose each `?` stands for the next of `values` (numbered by SqlParams). */
export interface Condition {
  sql: string;
  values: unknown[];
  /**
   * An equality on a prefix of the list's (…, created_at, id) index: its plan does not depend on the value. A page
   * whose conditions all are is a prepared statement; any other is planned for its values on each call.
   */
  indexed?: boolean;
}

/**
 * `column` is one of `values` (a filter given as a comma list): `IN (…)`, which Postgres reads as `=` for one value, so
 * a one-value filter keeps the plan of an equality on the list's index.
 */
export function oneOf(column: string, values: readonly unknown[]): Condition {
  return { sql: `${column} IN (${values.map(() => '?').join(', ')})`, values: [...values] };
}

/** A list rendered by Postgres: its table under an alias, and the SQL of one item's JSON. */
export interface RenderedList {
  /** Names its prepared statements. */
  name: string;
  table: string;
  alias: string;
  /**
   * One item's JSON: the response DTO's fields, field for field, with json_build_object (timestamps with
   * isoTimestampSql).
   */
  item: string;
}

/** `conditions` joined by AND, each `?` the placeholder of its next value, added to `params`. */
export function conditionsSql(params: SqlParams, conditions: Condition[]): string {
  return conditions
    .map((condition) => {
      const values = condition.values[Symbol.iterator]();
      return condition.sql.replace(/\?/g, () => params.add(values.next().value));
    })
    .join(' AND ');
}

/** Prepared statements by text: one name per distinct set of conditions a list was asked with. */
const renderedStatements = new Map<string, PreparedStatement>();

function statementFor(list: RenderedList, text: string, prepared: boolean): PreparedStatement {
  if (!prepared) {
    return { name: null, text };
  }
  let statement = renderedStatements.get(text);
  if (!statement) {
    statement = { name: `${list.name}_${renderedStatements.size}`, text };
    renderedStatements.set(text, statement);
  }
  return statement;
}

/**
 * The keyset page with its items rendered as JSON by Postgres, in one prepared statement that answers one row: the
 * page's items as one JSON array (text, so `pg` parses nothing of it), whether more follow, and the last item's
 * cursor. The app builds no object per row and serialises nothing again: the envelope splices the array in. For the
 * long lists, where parsing rows, mapping them and serialising them again was most of a page's cost. Newest first.
 */
export async function renderedPage(
  manager: EntityManager,
  list: RenderedList,
  conditions: Condition[],
  query: PageQueryDto,
): Promise<RenderedPage> {
  const a = list.alias;
  const prepared = conditions.every((condition) => condition.indexed);
  const all = [...conditions];
  if (query.created_gte) {
    all.push({ sql: `${a}.created_at >= ?`, values: [new Date(query.created_gte)] });
  }
  if (query.created_lt) {
    all.push({ sql: `${a}.created_at < ?`, values: [new Date(query.created_lt)] });
  }
  if (query.starting_after) {
    const cursor = decodeCursor(query.starting_after);
    all.push({ sql: `(${a}.created_at, ${a}.id) < (?, ?)`, values: [cursor.createdAt, cursor.id] });
  }
  const params = new SqlParams();
  const limit = params.add(query.limit, 'int');
  const where = conditionsSql(params, all);
  const order = `${a}.created_at DESC, ${a}.id DESC`;
  const text =
    `SELECT coalesce(json_agg(p.item ORDER BY p.n) FILTER (WHERE p.n <= ${limit}), '[]')::text AS items, ` +
    `count(*) > ${limit} AS has_more, ` +
    `max(p.cursor_at) FILTER (WHERE p.n = ${limit}) AS cursor_at, max(p.cursor_id) FILTER (WHERE p.n = ${limit}) AS cursor_id ` +
    `FROM (SELECT ${list.item} AS item, row_number() OVER (ORDER BY ${order}) AS n, ` +
    `${isoTimestampSql(`${a}.created_at`)} AS cursor_at, ${a}.id AS cursor_id ` +
    `FROM ${list.table} ${a} WHERE ${where} ORDER BY ${order} LIMIT ${limit} + 1) p`;
  const [row] = await preparedQuery<{
    items: string;
    has_more: boolean;
    cursor_at: string | null;
    cursor_id: string | null;
  }>(manager, statementFor(list, text, prepared), params.values);
  return new RenderedPage(row.items, {
    limit: query.limit,
    has_more: row.has_more,
    next_cursor:
      row.has_more && row.cursor_at && row.cursor_id
        ? encodeCursor(new Date(row.cursor_at), row.cursor_id)
        : null,
  });
}
