/** The casts a placeholder is given in this code base's SQL (`$3::text[]`). */
export type SqlCast =
  | 'text'
  | 'text[]'
  | 'int'
  | 'integer'
  | 'bigint'
  | 'bigint[]'
  | 'timestamptz[]'
  | 'float8'
  | 'boolean'
  | 'date'
  | 'timestamptz'
  | 'json'
  | 'jsonb';

/**
 * The parameters of one SQL statement, numbered in the order they are added: `add(value)` appends a value and answers
 * its placeholder (`$1`, `$2`, …), so a statement put together from fragments (a write, its idempotency claim, its
 * event and the event's fan-out; a list's filters) never counts `$n` by hand, and each fragment adds its own values
 * where it writes their placeholders. A placeholder may be written more than once. `values` is what the driver is
 * handed: `manager.query(sql, params.values)`, `preparedQuery(manager, statement, params.values)`.
 * docs/architecture.md, "Data mechanisms".
 */
export class SqlParams {
  private readonly added: unknown[] = [];

  /** Appends `value`; answers its placeholder, with `::cast` when given. */
  add(value: unknown, cast?: SqlCast): string {
    this.added.push(value);
    const placeholder = `$${this.added.length}`;
    return cast ? `${placeholder}::${cast}` : placeholder;
  }

  /** Appends each of `values` in order; answers their placeholders joined by `, ` (a VALUES row, an IN list). */
  list(values: readonly unknown[]): string {
    return values.map((value) => this.add(value)).join(', ');
  }

  /** The values added so far, in placeholder order. */
  get values(): unknown[] {
    return [...this.added];
  }

  /** How many values were added (the last placeholder's number). */
  get size(): number {
    return this.added.length;
  }
}
