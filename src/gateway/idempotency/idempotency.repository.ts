import { Injectable } from '@nestjs/common';
import { EntityManager, QueryFailedError } from 'typeorm';
import { entityColumns } from '../../database/entity-columns';
import { IdempotencyKey } from './idempotency-key.entity';

/** Seeds the key's hash for its advisory lock, so these locks keep apart from any other advisory lock. */
const ADVISORY_SEED = 7_340_022;

export interface KeyScope {
  tenantId: string;
  tokenId: string;
  key: string;
}

/**
 * What a claim writes to each column, by the entity's property names and its parameters' positions: a column added to
 * the entity does not compile until the claim says what it gets. Parameters: 0-2 the key's scope, 3 the fingerprint,
 * 4 the time to live in seconds, and for a claim that stores its answer at once, 5 the status and 6 the body.
 */
const claimValues = (
  p: (index: number) => string,
  answered: boolean,
): Record<keyof IdempotencyKey, string> => ({
  tenantId: p(0),
  tokenId: p(1),
  key: p(2),
  fingerprint: p(3),
  responseStatus: answered ? `${p(5)}::integer` : 'NULL',
  responseBody: answered ? `${p(6)}::json` : 'NULL',
  createdAt: 'now()',
  expiresAt: `now() + make_interval(secs => ${p(4)})`,
});
const KEY: readonly (keyof IdempotencyKey)[] = ['tenantId', 'tokenId', 'key'];

const COLUMNS = entityColumns(IdempotencyKey);
const columnsOf = (columns: typeof COLUMNS): string => columns.map((c) => c.column).join(', ');
const RETAKEN = COLUMNS.filter((c) => !KEY.includes(c.property));

/**
 * Inserts the key, or takes over an expired one, if the transaction gets the key's advisory lock at once; returns the
 * key when it was claimed. Parameters from `$<firstParam>`.
 */
function claimSql(firstParam: number, answered: boolean): string {
  const p = (index: number) => `$${firstParam + index}`;
  const values = claimValues(p, answered);
  return `INSERT INTO idempotency_keys (${columnsOf(COLUMNS)})
  SELECT ${COLUMNS.map((c) => values[c.property]).join(', ')}
  WHERE pg_try_advisory_xact_lock(hashtextextended(${p(0)} || ':' || ${p(1)} || ':' || ${p(2)}, ${ADVISORY_SEED}))
  ON CONFLICT (${columnsOf(COLUMNS.filter((c) => KEY.includes(c.property)))}) DO UPDATE
    SET ${RETAKEN.map((c) => `${c.column} = EXCLUDED.${c.column}`).join(', ')}
    WHERE idempotency_keys.expires_at <= now()
  RETURNING key`;
}

const CLAIM_SQL = claimSql(1, false);

/**
 * The SQLSTATE `isp_require_claim(false)` raises (migration ClaimInStatement): the claim CTE of a statement found
 * the key held, and the whole statement, the effect with it, rolled back.
 */
export const KEY_HELD_SQLSTATE = 'IK409';

/** True for the error of a statement whose claim CTE found the key held (ClaimInStatement). */
export function isKeyHeld(error: unknown): boolean {
  return (
    error instanceof QueryFailedError && (error.driverError as { code?: string }).code === KEY_HELD_SQLSTATE
  );
}

/**
 * The claim, with the answer it stores, as CTEs of the effect's own statement (TransactionRunner.runStatement):
 * `idempotency_claim` inserts the key; `check` is the condition the statement's final SELECT must put in its WHERE,
 * which raises KEY_HELD_SQLSTATE when the claim found the key held, so the effect never commits without its key.
 */
export function claimCte(firstParam: number): { sql: string; check: string } {
  return {
    sql: `idempotency_claim AS (${claimSql(firstParam, true)})`,
    check: 'isp_require_claim(EXISTS (SELECT 1 FROM idempotency_claim))',
  };
}

/** The only place the idempotency_keys table is read and written. */
@Injectable()
export class IdempotencyRepository {
  /**
   * Inserts the key, or takes over an expired one; gated by a transaction-scoped advisory lock on the key, so a key
   * held by a transaction still running fails at once instead of waiting on its uncommitted row. True when claimed.
   */
  async claim(manager: EntityManager, scope: KeyScope, fingerprint: string, ttlMs: number): Promise<boolean> {
    const rows: unknown[] = await manager.query(CLAIM_SQL, [
      scope.tenantId,
      scope.tokenId,
      scope.key,
      fingerprint,
      ttlMs / 1000,
    ]);
    return rows.length === 1;
  }

  /** The parameters of claimCte, in its order. */
  claimParams(scope: KeyScope, fingerprint: string, ttlMs: number, status: number, body: object): unknown[] {
    return [
      scope.tenantId,
      scope.tokenId,
      scope.key,
      fingerprint,
      ttlMs / 1000,
      status,
      JSON.stringify(body),
    ];
  }

  /** Stores the answer a replay will give. */
  async complete(manager: EntityManager, scope: KeyScope, status: number, body: object): Promise<void> {
    await manager.update(
      IdempotencyKey,
      { tenantId: scope.tenantId, tokenId: scope.tokenId, key: scope.key },
      { responseStatus: status, responseBody: body },
    );
  }

  findLive(manager: EntityManager, scope: KeyScope): Promise<IdempotencyKey | null> {
    return manager
      .getRepository(IdempotencyKey)
      .createQueryBuilder('k')
      .where('k.tenantId = :tenantId AND k.tokenId = :tokenId AND k.key = :key', scope)
      .andWhere('k.expiresAt > now()')
      .getOne();
  }

  /** Deletes the expired keys; how many. */
  async purgeExpired(manager: EntityManager): Promise<number> {
    const result = await manager
      .getRepository(IdempotencyKey)
      .createQueryBuilder()
      .delete()
      .where('expires_at <= now()')
      .execute();
    return result.affected ?? 0;
  }
}
