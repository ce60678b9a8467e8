import type { DataSourceOptions } from 'typeorm';
import type { DatabaseTimeouts } from '../config/app-config';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { SnakeNamingStrategy } from './snake-naming.strategy';

/**
 * `poolMax` 1 for the embedded database: PGlite is one session, which serves one connection at a time anyway.
 * `timeouts` (the app's; the TypeORM CLI runs migrations without any): statement_timeout and
 * idle_in_transaction_session_timeout are sent as connection parameters, and the pool's wait for a free connection is
 * bounded by `acquireMs` (pg-pool's connectionTimeoutMillis bounds both that wait and opening a connection), and
 * parallel plans are off for the app's connections.
 */
export function dataSourceOptions(url: string, poolMax = 20, timeouts?: DatabaseTimeouts): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: false, // run by initializeDataSource under an advisory lock
    migrationsTransactionMode: 'each',
    synchronize: false,
    namingStrategy: new SnakeNamingStrategy(),
    extra: {
      max: poolMax,
      ...(timeouts && {
        connectionTimeoutMillis: timeouts.acquireMs,
        statement_timeout: timeouts.statementMs,
        idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
        // No parallel plans for the app's statements: 64 requests at once already use every core, and a parallel
        // plan's workers waited on each other (IPC:MessageQueueInternal) instead. The ranked search went from 73 to
        // 217 req/s and its p99 from 7.2 to 1.5 s at 64 connections (docs/performance.md, "the closing runs").
        options: '-c max_parallel_workers_per_gather=0',
      }),
    },
  };
}
