import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { newId } from '../../common/ids';
import { paginate, PageQueryDto } from '../../common/pagination';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { afterCommit, TransactionRunner } from '../../database/transaction-runner';
import { EventsService } from '../../events/events.service';
import type { Scope } from '../auth/scopes';
import { Tenant } from '../tenants/tenant.entity';
import { ApiToken } from './api-token.entity';
import { TokenResponseDto } from './dto/token.dto';
import { TokenCache } from './token-cache';
import { displayParts, generateTokenSecret, hashesEqual, hashToken } from './token-secret';
import { lockForUpdate } from '../../database/lock-for-update';

export interface IssuedToken {
  token: ApiToken;
  secret: string;
}

export interface NewToken {
  tenant: Tenant;
  name: string;
  scopes: Scope[];
  expiresAt: Date | null;
  /** A caller-chosen secret (API_BOOTSTRAP_TOKEN); otherwise one is generated. */
  secret?: string;
}

/** last_used_at is refreshed at most this often, so a busy token does not write on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class TokensService {
  private readonly lookups = new WeakMap<object, Promise<ApiToken | null>>();
  private readonly cache: TokenCache;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tx: TransactionRunner,
    private readonly events: EventsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cache = new TokenCache(config.tokenCacheTtlMs);
  }

  issue(input: NewToken): Promise<IssuedToken> {
    const secret = input.secret ?? generateTokenSecret();
    return this.dataSource.transaction(async (manager) => {
      const token = manager.create(ApiToken, {
        id: newId('tok'),
        tenantId: input.tenant.id,
        name: input.name,
        tokenHash: hashToken(secret),
        ...displayParts(secret),
        scopes: input.scopes,
        expiresAt: input.expiresAt,
        revokedAt: null,
        lastUsedAt: null,
        createdAt: new Date(),
      });
      await manager.insert(ApiToken, token);
      await this.events.append(manager, {
        tenantId: token.tenantId,
        type: 'token.created',
        subjectId: token.id,
        object: TokenResponseDto.from(token),
      });
      return { token, secret };
    });
  }

  /**
   * authenticate(), once per request: the rate limiter (which keys budgets by token) and the auth guard both ask, and
   * share the one lookup.
   */
  authenticateRequest(request: object, secret: string): Promise<ApiToken | null> {
    let lookup = this.lookups.get(request);
    if (!lookup) {
      lookup = this.authenticate(secret);
      this.lookups.set(request, lookup);
    }
    return lookup;
  }

  /** The live token whose secret this is, or null (unknown, revoked or expired). */
  async authenticate(secret: string): Promise<ApiToken | null> {
    const hash = hashToken(secret);
    const token = await this.cache.get(hash, async () => {
      const found = await this.dataSource.getRepository(ApiToken).findOneBy({ tokenHash: hash });
      return found && hashesEqual(found.tokenHash, hash) ? found : null;
    });
    if (!token) return null;
    const now = Date.now();
    if (token.revokedAt || (token.expiresAt && token.expiresAt.getTime() <= now)) return null;
    if (!token.lastUsedAt || now - token.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      token.lastUsedAt = new Date(now);
      await this.dataSource
        .getRepository(ApiToken)
        .update({ id: token.id }, { lastUsedAt: token.lastUsedAt });
    }
    return token;
  }

  findBySecret(secret: string): Promise<ApiToken | null> {
    return this.dataSource.getRepository(ApiToken).findOneBy({ tokenHash: hashToken(secret) });
  }

  countAll(): Promise<number> {
    return this.dataSource.getRepository(ApiToken).count();
  }

  list(tenantId: string, query: PageQueryDto): Promise<Page<ApiToken>> {
    const qb = this.dataSource
      .getRepository(ApiToken)
      .createQueryBuilder('token')
      .where('token.tenantId = :tenantId', { tenantId });
    return paginate(qb, query);
  }

  async revoke(tenantId: string, id: string): Promise<ApiToken> {
    return this.tx.run(async (manager) => {
      const token = await lockForUpdate(manager, ApiToken, tenantId, id, 'token');
      if (token.revokedAt) return token; // revoking twice is harmless and answers the same record
      token.revokedAt = new Date();
      // Forget now and again once committed: a lookup racing the revocation must not re-cache the live row.
      this.cache.forget(token.tokenHash);
      afterCommit(() => this.cache.forget(token.tokenHash));
      await manager.update(ApiToken, { id, revokedAt: IsNull() }, { revokedAt: token.revokedAt });
      await this.events.append(manager, {
        tenantId,
        type: 'token.revoked',
        subjectId: token.id,
        object: TokenResponseDto.from(token),
      });
      return token;
    });
  }
}
