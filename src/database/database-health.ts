import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** The readiness probe's question to the database: does it answer a statement on a pooled connection? */
@Injectable()
export class DatabaseHealth {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Throws when the database is unreachable or the pool has no connection within the acquire timeout. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }
}
