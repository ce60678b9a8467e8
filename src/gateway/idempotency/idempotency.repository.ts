import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
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
 * What a claim writes to each column, by the entity's property names: a column added to the entity does not compile
 * until the claim says what it gets. $1-$3 the key's scope, $4 the fingerprint, $5 the time to live in seconds.
 */
const CLAIM_VALUES: Record<keyof IdempotencyKey, string> = {
  tenantId: '$1',
  tokenId: '$2',
  key: '$3',
  fingerprint: '$4',
  responseStatus: 'NULL',
  responseBody: 'NULL',
  createdAt: 'now()',
  expiresAt: 'now() + make_interval(secs => $5)',
};
const KEY: readonly (keyof IdempotencyKey)[] = ['tenantId', 'tokenId', 'key'];

const COLUMNS = entityColumns(IdempotencyKey);
const columnsOf = (columns: typeof COLUMNS): string => columns.map((c) => c.column).join(', ');
const RETAKEN = COLUMNS.filter((c) => !KEY.includes(c.property));

/**
 * Inserts the key, or takes over an expired one, if the transaction gets the key's advisory lock at once; returns the
 * key when it was claimed.
 */
const CLAIM_SQL = `INSERT INTO idempotency_keys (${columnsOf(COLUMNS)})
  SELECT ${COLUMNS.map((c) => CLAIM_VALUES[c.property]).join(', ')}
  WHERE pg_try_advisory_xact_lock(hashtextextended($1 || ':' || $2 || ':' || $3, ${ADVISORY_SEED}))
  ON CONFLICT (${columnsOf(COLUMNS.filter((c) => KEY.includes(c.property)))}) DO UPDATE
    SET ${RETAKEN.map((c) => `${c.column} = EXCLUDED.${c.column}`).join(', ')}
    WHERE idempotency_keys.expires_at <= now()
  RETURNING key`;

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
