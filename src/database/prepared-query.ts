import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';

/** The one member of TypeORM's PostgresDriver used here (its pool), declared locally: the driver is not exported. */
interface PostgresPoolDriver {
  master: Pool;
}

/**
 * Data sources on PGlite: there every connection of the socket is the same single session, so a name prepared by
 * one connection is already taken for the next (a pool replacing an idle connection, an app restarted on the same
 * database). Statements run unnamed there.
 */
const sharedSessions = new WeakSet<DataSource>();

/** Called once a data source is up: tells a PGlite server from a real Postgres by its version string. */
export async function detectSharedSession(dataSource: DataSource): Promise<void> {
  const [row]: { version: string }[] = await dataSource.query('SELECT version() AS version');
  if (row.version.includes('PGlite')) {
    sharedSessions.add(dataSource);
  }
}

/** A statement of the hot paths, prepared once per connection under its name. */
export interface PreparedStatement {
  /**
   * Unique per text: a connection keeps each name's plan for as long as it lives. Null runs it unnamed, planned for
   * each call's values (a statement whose best plan depends on them).
   */
  name: string | null;
  /**
   * Names every column it reads or returns, never `SELECT *` or `RETURNING *`: a kept plan whose result gains a
   * column (a migration of a rolling deploy) fails with `cached plan must not change result type`.
   */
  text: string;
}

/**
 * Runs a named prepared statement straight through `pg`, on the manager's transaction when it has one, else on a
 * pooled connection. Postgres parses and plans the statement once per connection instead of on every request, and
 * TypeORM's per-query work (a query runner per call, logging hooks) is skipped. Failures are raised as TypeORM's
 * QueryFailedError, like every other query's. On PGlite (detectSharedSession) the statement runs unnamed.
 */
export async function preparedQuery<R extends QueryResultRow>(
  manager: EntityManager,
  statement: PreparedStatement,
  values: unknown[],
): Promise<R[]> {
  const connection: Pool | PoolClient = manager.queryRunner
    ? ((await manager.queryRunner.connect()) as PoolClient)
    : (manager.connection.driver as unknown as PostgresPoolDriver).master;
  try {
    const name = sharedSessions.has(manager.connection) ? undefined : (statement.name ?? undefined);
    const result = await connection.query<R>({ name, text: statement.text, values });
    return result.rows;
  } catch (error) {
    throw new QueryFailedError(statement.text, values, error as Error);
  }
}
