import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { requestContext } from '../common/request-context';

/**
 * The one way a request changes data: one transaction. When the request carries an idempotency key, the key is
 * claimed inside that same transaction, so the effect and the claim commit together or not at all.
 */
@Injectable()
export class TransactionRunner {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      const idempotency = requestContext.get()?.idempotency;
      if (idempotency) await idempotency.claim(manager);
      return work(manager);
    });
  }
}
