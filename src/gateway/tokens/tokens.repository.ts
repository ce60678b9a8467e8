import { Injectable } from '@nestjs/common';
import { EntityManager, IsNull } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { PLATFORM_ADMIN } from '../../common/auth/scopes';
import { paginate, PageQueryDto } from '../../common/pagination';
import { lockForUpdate } from '../../database/lock-for-update';
import { ApiToken } from './api-token.entity';

/** The only place the api_tokens table is read and written. */
@Injectable()
export class TokensRepository {
  async insert(manager: EntityManager, row: ApiToken): Promise<ApiToken> {
    const token = manager.create(ApiToken, row);
    await manager.insert(ApiToken, token);
    return token;
  }

  /** The token whose secret hashes to `tokenHash`, live or not. */
  findByHash(manager: EntityManager, tokenHash: string): Promise<ApiToken | null> {
    return manager.findOneBy(ApiToken, { tokenHash });
  }

  countAll(manager: EntityManager): Promise<number> {
    return manager.count(ApiToken);
  }

  page(manager: EntityManager, tenantId: string, query: PageQueryDto): Promise<Page<ApiToken>> {
    const qb = manager
      .getRepository(ApiToken)
      .createQueryBuilder('token')
      .where('token.tenantId = :tenantId', { tenantId });
    return paginate(qb, query);
  }

  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<ApiToken> {
    return lockForUpdate(manager, ApiToken, tenantId, id, 'token');
  }

  async touchLastUsed(manager: EntityManager, id: string, lastUsedAt: Date): Promise<void> {
    await manager.update(ApiToken, { id }, { lastUsedAt });
  }

  /** Revokes a token not revoked yet. */
  async revoke(manager: EntityManager, id: string, revokedAt: Date): Promise<void> {
    await manager.update(ApiToken, { id, revokedAt: IsNull() }, { revokedAt });
  }

  /** Deletes every token of the tenant (its test clock is deleted) and answers their hashes, for the cache. */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<string[]> {
    const [rows] = await manager.query<[{ token_hash: string }[], number]>(
      'DELETE FROM api_tokens WHERE tenant_id = $1 RETURNING token_hash',
      [tenantId],
    );
    return rows.map((row) => row.token_hash);
  }

  /** Adds platform:admin to the token unless it holds it; true when it was added now. */
  async grantPlatformAdmin(manager: EntityManager, id: string): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(ApiToken)
      // platform:admin implies admin, so ['admin'] becomes ['platform:admin'], as a freshly registered one holds.
      .set({ scopes: () => `array_append(array_remove(scopes, 'admin'), '${PLATFORM_ADMIN}')` })
      .where('id = :id AND NOT (:scope = ANY(scopes))', { id, scope: PLATFORM_ADMIN })
      .execute();
    return (result.affected ?? 0) > 0;
  }
}
