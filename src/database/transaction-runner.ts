import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, EntityManager } from 'typeorm';
import { isTransactionConflict, transactionConflictError } from '../common/errors/postgres-errors';
import type { ClaimInStatement, IdempotencyClaim, WriteScope } from '../common/request-context';

/** The unit of work's transaction: its manager for the repositories, its scope, and what to do once it commits. */
export class Tx {
  /** What claimInStatement stored with the key, once the work asked for it. */
  private claimedAnswer?: { answer: unknown };

  constructor(
    readonly manager: EntityManager,
    readonly scope: WriteScope,
    private readonly commitHooks: (() => void)[] = [],
    /** runStatement's: the scope's idempotency key, still to be claimed by the work's one statement. */
    private readonly unclaimed?: IdempotencyClaim,
  ) {}

  /**
   * In runStatement with an idempotency key still to claim: the claim, storing `answer` with the key, which the
   * work's one statement must carry (ClaimInStatement), and then answer `answer`. Null anywhere else (in `run`, the
   * transaction's first statement claims the key and its last stores the answer).
   */
  claimInStatement(answer: unknown): ClaimInStatement | null {
    if (!this.unclaimed) {
      return null;
    }
    this.claimedAnswer = { answer };
    return this.unclaimed.inStatement(answer);
  }

  /** runStatement's: what the work's statement stored with the key, if it carried the claim. */
  storedInStatement(): { answer: unknown } | undefined {
    return this.claimedAnswer;
  }

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

/** Tries of a unit of work that keeps losing races (deadlock, serialization failure) before it answers 503. */
export const CONFLICT_ATTEMPTS = 5;
/** The first retry waits up to this long (full jitter), each next one up to twice as long: at most ~0.3 s in all. */
const CONFLICT_BACKOFF_MS = 20;

/**
 * The one way data changes: one transaction per unit of work, given its scope as an argument. When the scope carries
 * an idempotency key, the key is claimed by the transaction's first statement and the answer (what `work` returns:
 * the response payload) stored by its last, so the effect, the claim and the answer commit together or not at all.
 *
 * A unit of work that loses a deadlock (40P01) or a serialization failure (40001) rolled back whole, so it is run
 * again from the start, up to CONFLICT_ATTEMPTS times with a small jittered backoff; then it answers 503
 * service_unavailable with Retry-After, never a 500. `work` must therefore do nothing outside its transaction that a
 * second run would repeat (after-commit work goes to Tx.afterCommit, which only the run that commits calls).
 * Locks are taken in one order everywhere (docs/decisions.md, "One lock order"), so these are rare.
 */
@Injectable()
export class TransactionRunner {
  private readonly logger = new Logger('TransactionRunner');

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  run<T>(scope: WriteScope, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.retryingConflicts(() => this.runOnce(scope, work));
  }

  /** `attempt` again while it fails with a deadlock or serialization failure, then 503; other errors go through. */
  private async retryingConflicts<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries += 1) {
      try {
        return await attempt();
      } catch (error) {
        if (!isTransactionConflict(error)) {
          throw error;
        }
        const code = (error as { driverError?: { code?: string } }).driverError?.code;
        if (tries >= CONFLICT_ATTEMPTS) {
          this.logger.warn({ msg: 'transaction lost every retry to concurrent work', code, tries });
          throw transactionConflictError();
        }
        this.logger.log({ msg: 'transaction retried after a concurrency conflict', code, tries });
        // Full jitter: two transactions that collided do not collide again on the same beat.
        await sleep(Math.random() * CONFLICT_BACKOFF_MS * 2 ** (tries - 1));
      }
    }
  }

  private async runOnce<T>(scope: WriteScope, work: (tx: Tx) => Promise<T>): Promise<T> {
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
   * two round trips fewer. When the scope's idempotency key is still to be claimed, the statement claims it too and
   * stores the answer (Tx.claimInStatement): key, effect and answer commit together, in one round trip.
   */
  runStatement<T>(scope: WriteScope, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.retryingConflicts(() => this.runStatementOnce(scope, work));
  }

  private async runStatementOnce<T>(scope: WriteScope, work: (tx: Tx) => Promise<T>): Promise<T> {
    const unclaimed = scope.idempotency?.claimed === false ? scope.idempotency : undefined;
    const tx = new Tx(this.dataSource.manager, scope, [], unclaimed);
    const result = await work(tx);
    if (unclaimed) {
      const stored = tx.storedInStatement();
      if (!stored) {
        // A programming error, never a client's: the work wrote without claiming the key it was given.
        throw new Error(
          'runStatement: the statement did not carry the idempotency claim (Tx.claimInStatement)',
        );
      }
      unclaimed.claimed = true;
      unclaimed.stored = stored;
    }
    tx.committed();
    return result;
  }
}
