import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { DatabaseTimeouts } from '../config/app-config';
import { dataSourceOptions } from './data-source-options';
import { guardHungConnections } from './hung-connection-guard';
import { detectSharedSession } from './prepared-query';
import { TransactionRunner } from './transaction-runner';

// Any constant: instances booting together take turns applying migrations instead of racing on CREATE TABLE.
const MIGRATION_LOCK_ID = 7_340_021;

export async function initializeDataSource(
  url: string,
  poolMax: number,
  timeouts?: DatabaseTimeouts,
): Promise<DataSource> {
  await migrate(url, poolMax === 1);
  const dataSource = await new DataSource(dataSourceOptions(url, poolMax, timeouts)).initialize();
  if (timeouts && timeouts.statementMs > 0) {
    guardHungConnections(dataSource, timeouts.statementMs + timeouts.acquireMs);
  }
  try {
    await detectSharedSession(dataSource);
    return dataSource;
  } catch (error) {
    await dataSource.destroy().catch(() => undefined);
    throw error;
  }
}

/**
 * Migrations run on a data source of their own, without the app's timeouts: an index built on a large table, or the
 * wait for another instance's migrations, may outlast a request's statement_timeout.
 */
export async function migrate(url: string, alone: boolean): Promise<void> {
  // Alone (embedded, where one process owns the database, on one connection) no lock is needed, nor could it be held
  // while the migrations run on that same connection.
  const dataSource = await new DataSource(dataSourceOptions(url, alone ? 1 : 2)).initialize();
  try {
    if (alone) {
      await dataSource.runMigrations({ transaction: 'each' });
      return;
    }
    const runner = dataSource.createQueryRunner();
    try {
      await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
      await runner.release();
    }
  } finally {
    await dataSource.destroy();
  }
}

/** TypeORM on the given Postgres URL (a real server, or the embedded PGlite socket); migrations run on start. */
@Module({})
export class DatabaseModule {
  static forRoot(url: string, poolMax = 20, timeouts?: DatabaseTimeouts): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [TransactionRunner],
      exports: [TransactionRunner],
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...dataSourceOptions(url, poolMax, timeouts), retryAttempts: 0 }), // fail fast, real error
          dataSourceFactory: () => initializeDataSource(url, poolMax, timeouts),
        }),
      ],
    };
  }
}
