import { Logger } from '@nestjs/common';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/api-error';
import type { IdempotencyClaim, WriteScope } from '../common/request-context';
import { CONFLICT_ATTEMPTS, TransactionRunner } from './transaction-runner';

/** What pg raises, as TypeORM wraps it. */
function pgError(code: string, message: string): QueryFailedError {
  return new QueryFailedError('UPDATE services …', [], Object.assign(new Error(message), { code }));
}

/** A DataSource whose transaction() runs the callback and counts BEGINs, COMMITs and ROLLBACKs. */
function fakeDataSource() {
  const counts = { begun: 0, committed: 0, rolledBack: 0 };
  const manager = {} as EntityManager;
  const dataSource = {
    manager,
    transaction: async <T>(work: (m: EntityManager) => Promise<T>): Promise<T> => {
      counts.begun += 1;
      try {
        const result = await work(manager);
        counts.committed += 1;
        return result;
      } catch (error) {
        counts.rolledBack += 1;
        throw error;
      }
    },
  } as unknown as DataSource;
  return { dataSource, counts };
}

const scope: WriteScope = { requestId: null, actor: { type: 'system', id: null } };

describe('TransactionRunner: deadlocks and serialization failures', () => {
  // The retries log a line each: quiet here.
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  it.each([
    ['a deadlock (40P01)', '40P01', 'deadlock detected'],
    ['a serialization failure (40001)', '40001', 'could not serialize access due to concurrent update'],
  ])(
    'should run the whole transaction again after %s and answer what the second run returns',
    async (_n, code, msg) => {
      const { dataSource, counts } = fakeDataSource();
      const runner = new TransactionRunner(dataSource);
      const hooks: string[] = [];
      let runs = 0;
      const answer = await runner.run(scope, (tx) => {
        runs += 1;
        tx.afterCommit(() => hooks.push(`run ${runs}`));
        return runs === 1 ? Promise.reject(pgError(code, msg)) : Promise.resolve('done');
      });
      expect(answer).toBe('done');
      expect(runs).toBe(2);
      expect(counts).toEqual({ begun: 2, committed: 1, rolledBack: 1 });
      // Only the run that committed has its after-commit work done.
      expect(hooks).toEqual(['run 2']);
    },
  );

  it(`should answer 503 service_unavailable with Retry-After after ${CONFLICT_ATTEMPTS} lost runs, never the raw error`, async () => {
    const { dataSource, counts } = fakeDataSource();
    const runner = new TransactionRunner(dataSource);
    let runs = 0;
    const outcome = runner.run(scope, () => {
      runs += 1;
      return Promise.reject(pgError('40P01', 'deadlock detected'));
    });
    await expect(outcome).rejects.toBeInstanceOf(ApiError);
    const error = (await outcome.catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe('service_unavailable');
    expect(error.headers).toEqual({ 'Retry-After': '1' });
    expect(runs).toBe(CONFLICT_ATTEMPTS);
    expect(counts.committed).toBe(0);
  });

  it('should not retry any other failure', async () => {
    const { dataSource } = fakeDataSource();
    const runner = new TransactionRunner(dataSource);
    let runs = 0;
    const unique = pgError('23505', 'duplicate key value violates unique constraint');
    await expect(
      runner.run(scope, () => {
        runs += 1;
        return Promise.reject(unique);
      }),
    ).rejects.toBe(unique);
    expect(runs).toBe(1);
  });

  it('should claim the idempotency key again in the run that commits (the lost run rolled its claim back)', async () => {
    const { dataSource } = fakeDataSource();
    const runner = new TransactionRunner(dataSource);
    const claims: number[] = [];
    const completes: unknown[] = [];
    let runs = 0;
    const idempotency: IdempotencyClaim = {
      claimed: false,
      claim: () => {
        claims.push(runs + 1);
        idempotency.claimed = true;
        return Promise.resolve();
      },
      complete: (_manager, answer) => {
        completes.push(answer);
        idempotency.stored = { answer };
        return Promise.resolve();
      },
      inStatement: () => {
        throw new Error('not a one-statement unit of work');
      },
    };
    const answer = await runner.run({ ...scope, idempotency }, () => {
      runs += 1;
      return runs === 1
        ? Promise.reject(pgError('40001', 'could not serialize'))
        : Promise.resolve({ id: 'x' });
    });
    expect(answer).toEqual({ id: 'x' });
    expect(claims).toEqual([1, 2]);
    expect(completes).toEqual([{ id: 'x' }]);
    expect(idempotency.claimed).toBe(true);
  });

  it('should retry a one-statement unit of work (runStatement) the same way', async () => {
    const { dataSource } = fakeDataSource();
    const runner = new TransactionRunner(dataSource);
    let runs = 0;
    const answer = await runner.runStatement(scope, () => {
      runs += 1;
      return runs < 3 ? Promise.reject(pgError('40P01', 'deadlock detected')) : Promise.resolve(7);
    });
    expect(answer).toBe(7);
    expect(runs).toBe(3);
  });
});
