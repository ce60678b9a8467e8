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

/** The WHERE of a keyset page (its conditions, created range and cursor), its parameters, the limit's placeholder. */
function pageWhere(list: RenderedList, conditions: Condition[], query: PageQueryDto) {
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
  return { text: conditionsSql(params, all), params, limit, prepared };
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
  const { text: where, params, limit, prepared } = pageWhere(list, conditions, query);
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

/**
 * `text` (an SQL text expression, NULL allowed) as a CSV text field, as csv-write's csvField writes a string: empty
 * for NULL; neutralised (a leading `'`, quoted) when it starts with `=`, `+`, `-`, `@`, tab or CR; quoted when it
 * holds `"`, `,`, CR or LF. For the records of a RenderedCsv.
 */
export function csvTextSql(text: string): string {
  const quoted = (prefix: string) => `'"${prefix}' || replace(${text}, '"', '""') || '"'`;
  return (
    `CASE WHEN ${text} IS NULL THEN '' WHEN ${text} ~ '^[-=+@\\t\\r]' THEN ${quoted("''")} ` +
    `WHEN ${text} ~ '[",\\r\\n]' THEN ${quoted('')} ELSE ${text} END`
  );
}

/**
 * A list's rows as CSV records rendered by Postgres (renderedCsvPage): the SQL of one row's record (its fields
 * comma-separated, ending with CRLF) and of whether that record is, byte for byte, the one csv-write gives for the
 * row's JSON item (false sends the page back to the JSON path, see ExportPage).
 */
export interface RenderedCsv {
  record: string;
  exact: string;
}

/**
 * The most UTF-8 bytes of records gathered into one string of a CSV page (one more record may end it): as a V8
 * string at most twice that (two bytes a character), under the collector's regular-object size (128 KiB), so it
 * is allocated young and dies young (docs/performance.md, "Peak RSS against old-space growth").
 */
export const CSV_CHUNK_BYTES = 32 * 1024;

/** A keyset page rendered as CSV text: its records in chunks of about CSV_CHUNK_BYTES. */
export interface CsvPage {
  chunks: string[];
  /** False: some record is not what csv-write would write; render this page from its JSON items instead. */
  exact: boolean;
  next_cursor: string | null;
}

/**
 * The keyset page of renderedPage (the same conditions, order and cursor), its rows as CSV records rendered by
 * Postgres and answered as a few rows of text, each at most CSV_CHUNK_BYTES and a record, then a last row with
 * whether more follow and the cursor. For the exports: no row becomes an object in the app, and no string of the
 * page is large enough to be allocated outside the young generation.
 */
export async function renderedCsvPage(
  manager: EntityManager,
  list: RenderedList,
  csv: RenderedCsv,
  conditions: Condition[],
  query: PageQueryDto,
): Promise<CsvPage> {
  const a = list.alias;
  const { text: where, params, limit, prepared } = pageWhere(list, conditions, query);
  const order = `${a}.created_at DESC, ${a}.id DESC`;
  const text =
    `WITH p AS (SELECT q.record, q.exact, q.n, q.cursor_at, q.cursor_id, ` +
    `(sum(octet_length(q.record)) OVER (ORDER BY q.n ROWS UNBOUNDED PRECEDING) - 1) / ${CSV_CHUNK_BYTES} AS chunk ` +
    `FROM (SELECT ${csv.record} AS record, ${csv.exact} AS exact, row_number() OVER (ORDER BY ${order}) AS n, ` +
    `${isoTimestampSql(`${a}.created_at`)} AS cursor_at, ${a}.id AS cursor_id ` +
    `FROM ${list.table} ${a} WHERE ${where} ORDER BY ${order} LIMIT ${limit} + 1) q) ` +
    `SELECT p.chunk, string_agg(p.record, '' ORDER BY p.n) AS csv, bool_and(p.exact) AS exact, ` +
    `NULL::boolean AS has_more, NULL::text AS cursor_at, NULL::text AS cursor_id FROM p WHERE p.n <= ${limit} GROUP BY p.chunk ` +
    `UNION ALL SELECT NULL, NULL, NULL, count(*) > ${limit}, max(p.cursor_at) FILTER (WHERE p.n = ${limit}), ` +
    `max(p.cursor_id) FILTER (WHERE p.n = ${limit}) FROM p ORDER BY 1 NULLS LAST`;
  const rows = await preparedQuery<{
    chunk: string | null;
    csv: string | null;
    exact: boolean | null;
    has_more: boolean | null;
    cursor_at: string | null;
    cursor_id: string | null;
  }>(manager, statementFor({ ...list, name: `${list.name}_csv` }, text, prepared), params.values);
  const last = rows[rows.length - 1];
  const chunks = rows.slice(0, -1);
  return {
    chunks: chunks.map((row) => row.csv ?? ''),
    exact: chunks.every((row) => row.exact === true),
    next_cursor:
      last.has_more && last.cursor_at && last.cursor_id
        ? encodeCursor(new Date(last.cursor_at), last.cursor_id)
        : null,
  };
}
