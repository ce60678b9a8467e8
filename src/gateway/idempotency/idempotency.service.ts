import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { IdempotencyKey } from './idempotency-key.entity';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 10 * 60 * 1000;
/** Seeds the key's hash for its advisory lock, so these locks keep apart from any other advisory lock. */
const ADVISORY_SEED = 7_340_022;

export interface KeyScope {
  tenantId: string;
  tokenId: string;
  key: string;
}

/** JSON with sorted keys, so the same body sent with its keys in another order has the same fingerprint. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

/** The idempotency store: live keys for 24 h, claimed and answered in the caller's transaction, purged when expired. */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnApplicationShutdown {
  private purgeTimer?: NodeJS.Timeout;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    this.purgeTimer = setInterval(
      () => void this.purgeExpired().catch(() => undefined),
      PURGE_EVERY_MS,
    ).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.purgeTimer);
  }

  async findLive(scope: KeyScope): Promise<IdempotencyKey | null> {
    return this.dataSource
      .getRepository(IdempotencyKey)
      .createQueryBuilder('k')
      .where('k.tenant_id = :tenantId AND k.token_id = :tokenId AND k.key = :key', scope)
      .andWhere('k.expires_at > now()')
      .getOne();
  }

  /**
   * The first statement of the effect's transaction: inserts the key, or takes over an expired one. The insert is
   * gated by a transaction-scoped advisory lock on the key, so a request whose key is held by one still running
   * fails at once (false) instead of waiting on that transaction's uncommitted row while holding a connection.
   * Returns false when the key is held elsewhere or a live row exists; the caller then reads it to tell which.
   */
  async claim(manager: EntityManager, scope: KeyScope, fingerprint: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO idempotency_keys (tenant_id, token_id, key, fingerprint, response_status, response_body, created_at, expires_at)
       SELECT $1, $2, $3, $4, NULL, NULL, now(), now() + make_interval(secs => $5)
       WHERE pg_try_advisory_xact_lock(hashtextextended($1 || ':' || $2 || ':' || $3, ${ADVISORY_SEED}))
       ON CONFLICT (tenant_id, token_id, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, response_status = NULL, response_body = NULL,
             created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= now()
       RETURNING key`,
      [scope.tenantId, scope.tokenId, scope.key, fingerprint, IDEMPOTENCY_TTL_MS / 1000],
    );
    return rows.length === 1;
  }

  /** The last statement of the effect's transaction: the answer a replay will give. */
  async complete(manager: EntityManager, scope: KeyScope, status: number, body: object): Promise<void> {
    await manager.query(
      `UPDATE idempotency_keys SET response_status = $4, response_body = $5
       WHERE tenant_id = $1 AND token_id = $2 AND key = $3`,
      [scope.tenantId, scope.tokenId, scope.key, status, JSON.stringify(body)],
    );
  }

  /** For an answer the handler reshaped after its transaction: stored on its own, after the commit. */
  async completeAfterCommit(scope: KeyScope, status: number, body: object): Promise<void> {
    await this.complete(this.dataSource.manager, scope, status, body);
  }

  async purgeExpired(): Promise<number> {
    const result = await this.dataSource
      .getRepository(IdempotencyKey)
      .createQueryBuilder()
      .delete()
      .where('expires_at <= now()')
      .execute();
    return result.affected ?? 0;
  }
}
