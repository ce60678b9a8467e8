import type { DataSource } from 'typeorm';

/**
 * Checksums of every table of the public schema, to prove that a refused request changed no row (issue 18 item 1).
 *
 * One statement reads every table: per table `count:md5` of its rows (each row as jsonb, minus the columns below,
 * hashed and sorted, so row order on disk does not matter). Cheap to skip: `pg_current_snapshot()` only moves when a
 * transaction that holds a transaction id ends (one that wrote, or tried to), so when it has not moved since the last
 * checksum the tables cannot have changed and the last checksum still holds.
 */

/**
 * Columns that change on requests that are refused, legitimately. api_tokens.last_used_at is refreshed (at most once
 * a minute) by any authenticated request, refused or not: the token was used. Nothing else is excluded: rate limits
 * and abuse counters live in memory or Redis, idempotency keys are stored only with a successful answer, and the
 * suite's app runs with its workers (webhooks, provisioning, notifications) and scheduler off, so no table changes
 * by itself.
 */
export const EXCLUDED_COLUMNS: Record<string, string[]> = {
  api_tokens: ['last_used_at'],
};

export type Checksums = Record<string, string>;

export class TableChecksums {
  private tables: string[] = [];
  private last: { snapshot: string; sums: Checksums } | null = null;
  private statement = '';

  constructor(private readonly dataSource: DataSource) {}

  async init(): Promise<void> {
    const rows = await this.dataSource.query<Array<{ name: string }>>(
      `SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    this.tables = rows.map((row) => row.name);
    this.statement = this.tables
      .map((table) => {
        const minus = (EXCLUDED_COLUMNS[table] ?? []).map((column) => ` - '${column}'`).join('');
        const quoted = `"${table.replace(/"/g, '""')}"`;
        return `SELECT '${table}' AS name, count(*)::text || ':' || coalesce(md5(string_agg(h, '' ORDER BY h)), '') AS sum
                  FROM (SELECT md5((to_jsonb(t)${minus})::text) AS h FROM ${quoted} t) s`;
      })
      .join(' UNION ALL ');
  }

  /** The tables checksummed (every base table of the public schema at init). */
  get names(): string[] {
    return this.tables;
  }

  /** The checksum of every table now (reusing the last one when no transaction has ended since). */
  async current(): Promise<Checksums> {
    const snapshot = await this.snapshot();
    if (this.last && this.last.snapshot === snapshot) {
      return this.last.sums;
    }
    const rows = await this.dataSource.query<Array<{ name: string; sum: string }>>(this.statement);
    const sums = Object.fromEntries(rows.map((row) => [row.name, row.sum]));
    // Taken again after: if a transaction ended while the checksum ran, the next call recomputes.
    this.last = { snapshot: await this.snapshot(), sums };
    if (this.last.snapshot !== snapshot) {
      this.last = null;
    }
    return sums;
  }

  /**
   * Waits until two checksums 150 ms apart agree: work a successful request started (a bill run) has settled. A test
   * clock's accepted advance walks its days (a bill run and a day of dunning each) for longer than that, with pauses
   * between its steps: it is waited for to its end first (at most `advanceLimitMs`).
   */
  async settled(limitMs = 20_000, advanceLimitMs = 300_000): Promise<Checksums> {
    const advancesEnd = Date.now() + advanceLimitMs;
    while ((await this.advancing()) && Date.now() < advancesEnd) {
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const deadline = Date.now() + limitMs;
    let previous = await this.current();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      const now = await this.current();
      if (changedTables(previous, now).length === 0 || Date.now() > deadline) {
        return now;
      }
      previous = now;
    }
  }

  /** Whether a test clock is advancing (its advance goes on in the background). */
  private async advancing(): Promise<boolean> {
    const rows = await this.dataSource.query<Array<{ n: number }>>(
      "SELECT count(*)::int AS n FROM test_clocks WHERE status = 'advancing'",
    );
    return rows[0].n > 0;
  }

  private async snapshot(): Promise<string> {
    const rows = await this.dataSource.query<Array<{ s: string }>>('SELECT pg_current_snapshot()::text AS s');
    return rows[0].s;
  }
}

/** The tables whose checksum differs between two readings. */
export function changedTables(before: Checksums, after: Checksums): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((name) => before[name] !== after[name]).sort();
}
