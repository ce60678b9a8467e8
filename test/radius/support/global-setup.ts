import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options';

/**
 * The RADIUS suite runs on a real Postgres (DATABASE_URL), which FreeRADIUS reads too; the API's migrations create
 * FreeRADIUS's tables there before any suite starts a FreeRADIUS on them.
 */
export default async function globalSetup(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new Error(
      'the RADIUS suite needs DATABASE_URL=postgres://… (FreeRADIUS cannot read the embedded database)',
    );
  }
  const dataSource = new DataSource(dataSourceOptions(url, 2));
  await dataSource.initialize();
  try {
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
