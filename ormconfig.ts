import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source-options';

/** The DataSource the TypeORM CLI uses (npm run migration:generate / migration:run), on DATABASE_URL. */
const url = process.env.DATABASE_URL;
if (!url) {
  throw new Error(
    'DATABASE_URL is required for the TypeORM CLI, e.g. postgres://postgres@127.0.0.1:5432/test',
  );
}

export default new DataSource(dataSourceOptions(url));
