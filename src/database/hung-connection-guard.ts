import type { Pool, PoolClient } from 'pg';
import type { DataSource } from 'typeorm';

/** The one member of TypeORM's PostgresDriver used here (its pool), declared locally: the driver is not exported. */
interface PostgresPoolDriver {
  master: Pool;
}

type Query = (...args: unknown[]) => unknown;

/**
 * statement_timeout is enforced by the server: a server that hangs (a stopped or frozen process, a network path gone
 * with the socket left open) never enforces it, and a statement sent on a pooled connection would wait as long as the
 * hang. A statement not answered within `limitMs` ends its connection instead: it fails with "Connection terminated
 * unexpectedly" (503 service_unavailable), the server rolls the session's transaction back once it sees the socket
 * closed, and the pool opens a fresh connection for the next request. Nothing half-done goes back to the pool.
 * Covers both ways statements reach a client: TypeORM's promises and pool.query's callbacks (preparedQuery).
 */
export function guardHungConnections(dataSource: DataSource, limitMs: number): void {
  const pool = (dataSource.driver as unknown as PostgresPoolDriver).master;
  const guarded = new WeakSet<PoolClient>();
  pool.on('acquire', (client: PoolClient) => {
    if (guarded.has(client)) {
      return;
    }
    guarded.add(client);
    const query = (client.query as Query).bind(client);
    const socket = (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream;
    (client as unknown as { query: Query }).query = (...args: unknown[]) => {
      const timer = setTimeout(() => socket.destroy(), limitMs);
      timer.unref();
      const done = () => clearTimeout(timer);
      const last = args.length - 1;
      if (typeof args[last] === 'function') {
        const callback = args[last] as (...results: unknown[]) => void;
        args[last] = (...results: unknown[]) => {
          done();
          callback(...results);
        };
        return query(...args);
      }
      const pending = query(...args);
      if (pending instanceof Promise) {
        pending.then(done, done);
      } else {
        done();
      }
      return pending;
    };
  });
}
