import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options';
import { detectSharedSession } from './prepared-query';
import { TransactionRunner } from './transaction-runner';

// Any constant: instances booting together take turns applying migrations instead of racing on CREATE TABLE.
const MIGRATION_LOCK_ID = 7_340_021;

export async function initializeDataSource(url: string, poolMax: number): Promise<DataSource> {
  const dataSource = await new DataSource(dataSourceOptions(url, poolMax)).initialize();
  await detectSharedSession(dataSource);
  // With one connection (embedded, where one process owns the database) no lock is needed, nor could it be held
  // while the migrations run on that same connection.
  if (poolMax === 1) {
    try {
      await dataSource.runMigrations({ transaction: 'each' });
      return dataSource;
    } catch (error) {
      await dataSource.destroy().catch(() => undefined);
      throw error;
    }
  }
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await dataSource.runMigrations({ transaction: 'each' });
    return dataSource;
  } catch (error) {
    await runner.release().catch(() => undefined);
    await dataSource.destroy().catch(() => undefined);
    throw error;
  } finally {
    if (!runner.isReleased) {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
      await runner.release();
    }
  }
}

/** TypeORM on the given Postgres URL (a real server, or the embedded PGlite socket); migrations run on start. */
@Module({})
export class DatabaseModule {
  static forRoot(url: string, poolMax = 20): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [TransactionRunner],
      exports: [TransactionRunner],
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...dataSourceOptions(url, poolMax), retryAttempts: 0 }), // fail fast with the real error
          dataSourceFactory: () => initializeDataSource(url, poolMax),
        }),
      ],
    };
  }
}
