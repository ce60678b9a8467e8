import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { IdempotencyKey } from './idempotency-key.entity';
import type { SqlParams } from '../../database/sql-params';
import { claimCte, IdempotencyRepository, type KeyScope } from './idempotency.repository';

export type { KeyScope };

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 10 * 60 * 1000;

/** JSON with sorted keys, so the same body sent with its keys in another order has the same fingerprint. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonicalJson).join(',')}]`;
  }
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

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly keysRepository: IdempotencyRepository,
  ) {}

  onModuleInit(): void {
    this.purgeTimer = setInterval(
      () => void this.purgeExpired().catch(() => undefined),
      PURGE_EVERY_MS,
    ).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.purgeTimer);
  }

  findLive(scope: KeyScope): Promise<IdempotencyKey | null> {
    return this.keysRepository.findLive(this.dataSource.manager, scope);
  }

  /**
   * The first statement of the effect's transaction. Returns false when the key is held by a request still running
   * or a live row exists; the caller then reads it to tell which.
   */
  claim(manager: EntityManager, scope: KeyScope, fingerprint: string): Promise<boolean> {
    return this.keysRepository.claim(manager, scope, fingerprint, IDEMPOTENCY_TTL_MS);
  }

  /**
   * A claim made in the effect's own statement, with the answer it stores: its CTE and check (claimCte), its
   * parameters added to the statement's `params`.
   */
  claimInStatement(
    params: SqlParams,
    scope: KeyScope,
    fingerprint: string,
    status: number,
    body: object,
  ): { sql: string; check: string } {
    return claimCte(params, { scope, fingerprint, ttlMs: IDEMPOTENCY_TTL_MS, answer: { status, body } });
  }

  /** The last statement of the effect's transaction: the answer a replay will give. */
  complete(manager: EntityManager, scope: KeyScope, status: number, body: object): Promise<void> {
    return this.keysRepository.complete(manager, scope, status, body);
  }

  /** For an answer the handler reshaped after its transaction: stored on its own, after the commit. */
  async completeAfterCommit(scope: KeyScope, status: number, body: object): Promise<void> {
    await this.complete(this.dataSource.manager, scope, status, body);
  }

  purgeExpired(): Promise<number> {
    return this.keysRepository.purgeExpired(this.dataSource.manager);
  }
}
