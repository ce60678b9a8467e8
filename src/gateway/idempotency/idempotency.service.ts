import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource, EntityManager, LessThan } from 'typeorm';
import { IdempotencyKey } from './idempotency-key.entity';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 10 * 60 * 1000;

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

/** The idempotency store: live keys for 24 h, claimed in the caller's transaction, purged when expired. */
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
    const row = await this.dataSource.getRepository(IdempotencyKey).findOneBy({ ...scope });
    return row && row.expiresAt.getTime() > Date.now() ? row : null;
  }

  /**
   * Inserts the key inside the effect's transaction. A concurrent holder of the same key makes Postgres wait on the
   * primary key until that transaction ends; an expired row is taken over. Returns false when a live row exists.
   */
  async claim(manager: EntityManager, scope: KeyScope, fingerprint: string): Promise<boolean> {
    const now = new Date();
    const rows: unknown[] = await manager.query(
      `INSERT INTO idempotency_keys (tenant_id, token_id, key, fingerprint, response_status, response_body, created_at, expires_at)
       VALUES ($1, $2, $3, $4, NULL, NULL, $5, $6)
       ON CONFLICT (tenant_id, token_id, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, response_status = NULL, response_body = NULL,
             created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= $5
       RETURNING key`,
      [
        scope.tenantId,
        scope.tokenId,
        scope.key,
        fingerprint,
        now,
        new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      ],
    );
    return rows.length === 1;
  }

  async storeResponse(scope: KeyScope, status: number, body: object): Promise<void> {
    await this.dataSource
      .getRepository(IdempotencyKey)
      .update({ ...scope }, { responseStatus: status, responseBody: body });
  }

  async purgeExpired(): Promise<number> {
    const result = await this.dataSource
      .getRepository(IdempotencyKey)
      .delete({ expiresAt: LessThan(new Date()) });
    return result.affected ?? 0;
  }
}
