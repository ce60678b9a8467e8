import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { Clock } from '../../common/clock';
import { newId } from '../../common/ids';
import { PageQueryDto } from '../../common/pagination';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { ApiError } from '../../common/errors/api-error';
import type { AuthContext, WriteScope } from '../../common/request-context';
import { hasScope, PLATFORM_ADMIN, type Scope, scopesNotHeld } from '../../common/auth/scopes';
import { Tenant } from '../tenants/tenant.entity';
import { TenantsService } from '../tenants/tenants.service';
import { ApiToken } from './api-token.entity';
import { CreateTokenDto, IssuedTokenResponseDto, TokenResponseDto } from './dto/token.dto';
import { TokenCache } from './token-cache';
import { TokensRepository } from './tokens.repository';
import { displayParts, generateTokenSecret, hashesEqual, hashToken } from './token-secret';

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
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly tenants: TenantsService,
    private readonly tokensRepository: TokensRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.cache = new TokenCache(config.tokenCacheTtlMs);
  }

  /** Issues a token on behalf of `caller`, who may only grant scopes it holds, and only in its own tenant. */
  async issueAs(caller: AuthContext, dto: CreateTokenDto): Promise<IssuedTokenResponseDto> {
    const tenant = await this.tenantForCaller(caller, dto.tenant);
    const notHeld = scopesNotHeld(caller.scopes, dto.scopes);
    if (notHeld.length > 0) {
      throw new ApiError(
        'insufficient_scope',
        `A token can only grant scopes it holds; this one does not hold ${notHeld.join(', ')}.`,
        'scopes',
      );
    }
    const expiresAt = dto.expires_at ? new Date(dto.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= this.clock.now().getTime()) {
      throw new ApiError('validation_failed', 'expires_at must be in the future.', 'expires_at');
    }
    const { token, secret } = await this.issue(caller, {
      tenant,
      name: dto.name,
      scopes: dto.scopes,
      expiresAt,
    });
    return { ...TokenResponseDto.from(token), token: secret };
  }

  /** Another tenant (or one that does not exist) is 403 to a tenant admin, so it cannot probe which exist. */
  private async tenantForCaller(caller: AuthContext, named: string | undefined): Promise<Tenant> {
    const platform = hasScope(caller.scopes, PLATFORM_ADMIN);
    const tenant = await this.tenants.findByIdOrSlug(named ?? caller.tenantId);
    if (tenant && (platform || tenant.id === caller.tokenTenantId)) {
      return tenant;
    }
    if (platform) {
      throw new ApiError('invalid_reference', `No tenant ${named} exists.`, 'tenant');
    }
    throw new ApiError(
      'tenant_forbidden',
      'Only a platform:admin token may issue tokens for another tenant.',
      'tenant',
    );
  }

  /**
   * Makes sure the token holds platform:admin (API_BOOTSTRAP_TOKEN registered by an earlier version held only admin);
   * true when it was upgraded now.
   */
  async grantPlatformAdmin(token: ApiToken): Promise<boolean> {
    const granted = await this.tokensRepository.grantPlatformAdmin(this.dataSource.manager, token.id);
    this.cache.forget(token.tokenHash);
    return granted;
  }

  issue(scope: WriteScope, input: NewToken): Promise<IssuedToken> {
    return this.transactionRunner.run({ ...scope, idempotency: undefined }, (tx) => this.issueIn(tx, input));
  }

  /** issue, in the caller's transaction (a test clock's tenant gets its first token with it). */
  async issueIn(tx: Tx, input: NewToken): Promise<IssuedToken> {
    const secret = input.secret ?? generateTokenSecret();
    const now = this.clock.now();
    const token = await this.tokensRepository.insert(tx.manager, {
      id: newId('tok', now),
      tenantId: input.tenant.id,
      name: input.name,
      tokenHash: hashToken(secret),
      ...displayParts(secret),
      scopes: input.scopes,
      expiresAt: input.expiresAt,
      revokedAt: null,
      lastUsedAt: null,
      createdAt: now,
    });
    await this.events.append(tx, {
      tenantId: token.tenantId,
      type: 'token.created',
      subjectId: token.id,
      object: TokenResponseDto.from(token),
    });
    return { token, secret };
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
      const found = await this.tokensRepository.findByHash(this.dataSource.manager, hash);
      return found && hashesEqual(found.tokenHash, hash) ? found : null;
    });
    if (!token) {
      return null;
    }
    const now = this.clock.now().getTime();
    if (token.revokedAt || (token.expiresAt && token.expiresAt.getTime() <= now)) {
      return null;
    }
    if (!token.lastUsedAt || now - token.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      token.lastUsedAt = new Date(now);
      await this.tokensRepository.touchLastUsed(this.dataSource.manager, token.id, token.lastUsedAt);
    }
    return token;
  }

  findBySecret(secret: string): Promise<ApiToken | null> {
    return this.tokensRepository.findByHash(this.dataSource.manager, hashToken(secret));
  }

  countAll(): Promise<number> {
    return this.tokensRepository.countAll(this.dataSource.manager);
  }

  list(tenantId: string, query: PageQueryDto): Promise<Page<ApiToken>> {
    return this.tokensRepository.page(this.dataSource.manager, tenantId, query);
  }

  /**
   * Deletes every token of the tenant in the caller's transaction (its test clock is deleted): they stop working at
   * once in this process (forgotten now and once committed, as a revocation), in others within the cache's TTL.
   */
  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    const hashes = await this.tokensRepository.purgeTenant(tx.manager, tenantId);
    const forget = () => hashes.forEach((hash) => this.cache.forget(hash));
    forget();
    tx.afterCommit(forget);
  }

  /** `callerScopes` (null from the CLI): a token may only revoke a token whose scopes it holds. */
  async revoke(
    scope: WriteScope,
    tenantId: string,
    id: string,
    callerScopes: readonly string[] | null = null,
  ): Promise<ApiToken> {
    return this.transactionRunner.run(scope, async (tx) => {
      const token = await this.tokensRepository.lockForUpdate(tx.manager, tenantId, id);
      if (callerScopes && scopesNotHeld(callerScopes, token.scopes).length > 0) {
        throw new ApiError(
          'insufficient_scope',
          `Only a token holding ${token.scopes.join(', ')} may revoke this one.`,
        );
      }
      if (token.revokedAt) {
        return token;
      } // revoking twice is harmless and answers the same record
      token.revokedAt = this.clock.now();
      // Forget now and again once committed: a lookup racing the revocation must not re-cache the live row.
      this.cache.forget(token.tokenHash);
      tx.afterCommit(() => this.cache.forget(token.tokenHash));
      await this.tokensRepository.revoke(tx.manager, id, token.revokedAt);
      await this.events.append(tx, {
        tenantId,
        type: 'token.revoked',
        subjectId: token.id,
        object: TokenResponseDto.from(token),
      });
      return token;
    });
  }
}
