import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { WriteScope } from '../common/request-context';

/** The unit of work's transaction: its manager for the repositories, its scope, and what to do once it commits. */
export class Tx {
  constructor(
    readonly manager: EntityManager,
    readonly scope: WriteScope,
    private readonly commitHooks: (() => void)[] = [],
  ) {}

  /** The same transaction under another scope (its events name that actor); hooks run on the same commit. */
  withScope(scope: WriteScope): Tx {
    return new Tx(this.manager, scope, this.commitHooks);
  }

  /**
   * Runs `work` inside a savepoint: if it throws, what it wrote is rolled back and the transaction goes on (the
   * error is rethrown for the caller to record).
   */
  async savepoint<T>(name: string, work: () => Promise<T>): Promise<T> {
    await this.manager.query(`SAVEPOINT ${name}`);
    try {
      const result = await work();
      await this.manager.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      await this.manager.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    }
  }

  /** Runs `hook` once this transaction has committed; never if it rolls back. */
  afterCommit(hook: () => void): void {
    this.commitHooks.push(hook);
  }

  /** Called by TransactionRunner after the commit. */
  committed(): void {
    for (const hook of this.commitHooks) {
      hook();
    }
  }
}

/**
 * The one way data changes: one transaction per unit of work, given its scope as an argument. When the scope carries
 * an idempotency key, the key is claimed by the transaction's first statement and the answer (what `work` returns:
 * the response payload) stored by its last, so the effect, the claim and the answer commit together or not at all.
 */
@Injectable()
export class TransactionRunner {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async run<T>(scope: WriteScope, work: (tx: Tx) => Promise<T>): Promise<T> {
    const idempotency = scope.idempotency;
    const claimedHere = idempotency !== undefined && !idempotency.claimed;
    let tx: Tx | undefined;
    try {
      const result = await this.dataSource.transaction(async (manager) => {
        tx = new Tx(manager, scope);
        if (idempotency) {
          await idempotency.claim(manager);
        }
        const answer = await work(tx);
        if (claimedHere) {
          await idempotency.complete(manager, answer);
        }
        return answer;
      });
      tx?.committed();
      return result;
    } catch (error) {
      // The claim rolled back with the effect: the key is free again.
      if (claimedHere) {
        idempotency.claimed = false;
        idempotency.stored = undefined;
      }
      throw error;
    }
  }

  /**
   * For work that is one statement, which Postgres applies atomically on its own: it runs without BEGIN and COMMIT,
   * two round trips fewer. When the scope's idempotency key is still to be claimed, the claim and the statement must
   * commit together, so it runs as `run` does.
   */
  async runStatement<T>(scope: WriteScope, work: (tx: Tx) => Promise<T>): Promise<T> {
    if (scope.idempotency && !scope.idempotency.claimed) {
      return this.run(scope, work);
    }
    const tx = new Tx(this.dataSource.manager, scope);
    const result = await work(tx);
    tx.committed();
    return result;
  }
}
