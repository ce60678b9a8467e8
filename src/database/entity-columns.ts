import { getMetadataArgsStorage } from 'typeorm';
import { SnakeNamingStrategy } from './snake-naming.strategy';

/** A column of an entity: its property and the column the data source names for it. */
export interface EntityColumn<T> {
  property: keyof T & string;
  column: string;
  /** The column's SQL type as declared (`text` when the decorator leaves it to reflection; `text[]` for an array). */
  type: string;
}

const naming = new SnakeNamingStrategy();

/**
 * An entity's columns in declaration order, read from its decorators and named by the data source's naming strategy,
 * so hand-built SQL (prepared statements built once at load time, before any connection) lists exactly the columns
 * the entity, and therefore the migration drift check, knows. For entities without embedded or inherited columns.
 */
export function entityColumns<T>(entity: new () => T): readonly EntityColumn<T>[] {
  let columns = read.get(entity) as readonly EntityColumn<T>[] | undefined;
  if (!columns) {
    columns = readColumns(entity);
    read.set(entity, columns);
  }
  return columns;
}

/** entityColumns' answers, per entity: its decorators ran when its class was defined, and never change. */
const read = new WeakMap<object, readonly object[]>();

function readColumns<T>(entity: new () => T): readonly EntityColumn<T>[] {
  return (
    getMetadataArgsStorage()
      .filterColumns(entity)
      // A column the database fills (insert: false, e.g. events.tx_id) is not one hand-built INSERTs list.
      .filter((args) => args.options.insert !== false)
      .map((args) => ({
        property: args.propertyName as keyof T & string,
        column: naming.columnName(args.propertyName, args.options.name, []),
        type:
          (typeof args.options.type === 'string' ? args.options.type : 'text') +
          (args.options.array ? '[]' : ''),
      }))
  );
}

/**
 * The entity of a row that hand-built SQL answered (a RETURNING, a join), its columns named as the data source names
 * them, each read at `prefix` + its name: the columns of entityColumns.
 */
export function entityFromRow<T extends object>(
  entity: new () => T,
  row: Readonly<Record<string, unknown>>,
  prefix = '',
): T {
  const values = Object.fromEntries(
    entityColumns(entity).map((column) => [column.property, row[prefix + column.column]]),
  );
  return Object.assign(new entity(), values as Partial<T>);
}

/**
 * A multi-row INSERT of an entity's rows from one JSON parameter (`jsonb_to_recordset`): one statement and one
 * parameter however many rows, where a query builder's VALUES list binds one parameter per column and row. `params`
 * answers the statement's one parameter for the rows (properties as the entity names them).
 */
export function recordsetInsert<T>(
  entity: new () => T,
  table: string,
): {
  sql: string;
  at: (placeholder: string, computed?: Readonly<Record<string, string>>) => string;
  params: (rows: readonly T[]) => [string];
} {
  const columns = entityColumns(entity);
  const names = columns.map((column) => column.column).join(', ');
  const definition = columns.map((column) => `${column.column} ${column.type}`).join(', ');
  const at = (placeholder: string, computed: Readonly<Record<string, string>> = {}) =>
    `INSERT INTO ${table} (${names}) ` +
    `SELECT ${columns.map((column) => computed[column.column] ?? column.column).join(', ')} ` +
    `FROM jsonb_to_recordset(${placeholder}::jsonb) AS x(${definition})`;
  return {
    sql: at('$1'),
    /**
     * The same INSERT with its JSON parameter at `placeholder` (a CTE of a larger statement, SqlParams.add), and SQL
     * expressions for the `computed` columns instead of the rows' values (`{ next_attempt_at: 'now()' }`).
     */
    at,
    params: (rows) => [
      JSON.stringify(
        rows.map((row) => Object.fromEntries(columns.map((column) => [column.column, row[column.property]]))),
      ),
    ],
  };
}
