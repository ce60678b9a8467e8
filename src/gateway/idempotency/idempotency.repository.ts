import { Injectable } from '@nestjs/common';
import { EntityManager, QueryFailedError } from 'typeorm';
import { entityColumns } from '../../database/entity-columns';
import { SqlParams } from '../../database/sql-params';
import { IdempotencyKey } from './idempotency-key.entity';

/** Seeds the key's hash for its advisory lock, so these locks keep apart from any other advisory lock. */
const ADVISORY_SEED = 7_340_022;

export interface KeyScope {
  tenantId: string;
  tokenId: string;
  key: string;
}

/**
 * A claim: the key's scope, the request's fingerprint, how long the key lives and, for a claim made in the effect's
 * own statement, the answer it stores at once.
 */
export interface ClaimValues {
  scope: KeyScope;
  fingerprint: string;
  ttlMs: number;
  answer?: { status: number; body: object };
}

const KEY: readonly (keyof IdempotencyKey)[] = ['tenantId', 'tokenId', 'key'];

const COLUMNS = entityColumns(IdempotencyKey);
const columnsOf = (columns: typeof COLUMNS): string => columns.map((c) => c.column).join(', ');
const RETAKEN = COLUMNS.filter((c) => !KEY.includes(c.property));

/**
 * Inserts the key, or takes over an expired one, if the transaction gets the key's advisory lock at once; returns the
 * key when it was claimed. Its parameters are added to `params`. What it writes to each column is typed by the
 * entity's property names: a column added to the entity does not compile until the claim says what it gets.
 */
function claimSql(params: SqlParams, claim: ClaimValues): string {
  const tenantId = params.add(claim.scope.tenantId);
  const tokenId = params.add(claim.scope.tokenId);
  const key = params.add(claim.scope.key);
  const values: Record<keyof IdempotencyKey, string> = {
    tenantId,
    tokenId,
    key,
    fingerprint: params.add(claim.fingerprint),
    responseStatus: claim.answer ? params.add(claim.answer.status, 'integer') : 'NULL',
    responseBody: claim.answer ? params.add(JSON.stringify(claim.answer.body), 'json') : 'NULL',
    createdAt: 'now()',
    expiresAt: `now() + make_interval(secs => ${params.add(claim.ttlMs / 1000)})`,
  };
  return `INSERT INTO idempotency_keys (${columnsOf(COLUMNS)})
  SELECT ${COLUMNS.map((c) => values[c.property]).join(', ')}
  WHERE pg_try_advisory_xact_lock(hashtextextended(${tenantId} || ':' || ${tokenId} || ':' || ${key}, ${ADVISORY_SEED}))
  ON CONFLICT (${columnsOf(COLUMNS.filter((c) => KEY.includes(c.property)))}) DO UPDATE
    SET ${RETAKEN.map((c) => `${c.column} = EXCLUDED.${c.column}`).join(', ')}
    WHERE idempotency_keys.expires_at <= now()
  RETURNING key`;
}

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
export function claimCte(params: SqlParams, claim: ClaimValues): { sql: string; check: string } {
  return {
    sql: `idempotency_claim AS (${claimSql(params, claim)})`,
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
    const params = new SqlParams();
    const sql = claimSql(params, { scope, fingerprint, ttlMs });
    const rows: unknown[] = await manager.query(sql, params.values);
    return rows.length === 1;
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

  /** Deletes every idempotency_keys row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM idempotency_keys WHERE tenant_id = $1', [tenantId]);
  }
}
