import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';
import { requestContext } from '../common/request-context';

const commitHooks = new AsyncLocalStorage<(() => void)[]>();

/** Runs `hook` once the surrounding TransactionRunner transaction has committed (never if it rolls back). */
export function afterCommit(hook: () => void): void {
  const hooks = commitHooks.getStore();
  if (hooks) hooks.push(hook);
  else setImmediate(hook);
}

/** Runs `commit`, collecting the afterCommit hooks registered inside it, and runs them once it has succeeded. */
async function withCommitHooks<T>(commit: () => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = [];
  const result = await commitHooks.run(hooks, commit);
  for (const hook of hooks) hook();
  return result;
}

/**
 * The one way a request changes data: one transaction. When the request carries an idempotency key, the key is
 * claimed by the transaction's first statement and the answer (what `work` returns: the response payload) stored by
 * its last, so the effect, the claim and the answer commit together or not at all.
 */
@Injectable()
export class TransactionRunner {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const idempotency = requestContext.get()?.idempotency;
    const claimedHere = idempotency !== undefined && !idempotency.claimed;
    try {
      return await withCommitHooks(() =>
        this.dataSource.transaction(async (manager) => {
          if (idempotency) await idempotency.claim(manager);
          const result = await work(manager);
          if (claimedHere) await idempotency.complete(manager, result);
          return result;
        }),
      );
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
   * two round trips fewer. When the request's idempotency key is still to be claimed, the claim and the statement
   * must commit together, so it runs as `run` does.
   */
  async runStatement<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const idempotency = requestContext.get()?.idempotency;
    if (idempotency && !idempotency.claimed) return this.run(work);
    return withCommitHooks(() => work(this.dataSource.manager));
  }
}
