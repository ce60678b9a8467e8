import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { paginate, PageQueryDto } from '../../common/pagination';
import { lockForUpdate } from '../../database/lock-for-update';
import { BillingProfile } from './billing-profile.entity';

/** The billing profile columns a write changes (the entity's property names). */
export type BillingProfileColumn = keyof BillingProfile;

/** The only place the billing_profiles table is read and written. */
@Injectable()
export class BillingProfilesRepository {
  async insert(manager: EntityManager, row: BillingProfile): Promise<BillingProfile> {
    const profile = manager.create(BillingProfile, row);
    await manager.insert(BillingProfile, profile);
    return profile;
  }

  /** Writes `columns` of the in-memory profile to its row. */
  async update(
    manager: EntityManager,
    profile: BillingProfile,
    columns: readonly BillingProfileColumn[],
  ): Promise<void> {
    const changes = Object.fromEntries(columns.map((column) => [column, profile[column]]));
    await manager.update(BillingProfile, { id: profile.id }, changes);
  }

  async getById(manager: EntityManager, tenantId: string, id: string): Promise<BillingProfile> {
    const profile = await manager.findOneBy(BillingProfile, { tenantId, id });
    if (!profile) {
      throw ApiError.notFound('billing profile', id);
    }
    return profile;
  }

  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<BillingProfile> {
    return lockForUpdate(manager, BillingProfile, tenantId, id, 'billing profile');
  }

  /**
   * Clears the tenant's default (but `keepId`) under a per-tenant transaction lock, so concurrent changes of the
   * default queue up instead of meeting on the one-default index; answers the profiles it cleared.
   */
  async clearDefault(
    manager: EntityManager,
    tenantId: string,
    keepId: string | null,
    at: Date,
  ): Promise<BillingProfile[]> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('billing_profiles.default:' || $1))`, [
      tenantId,
    ]);
    const cleared = await manager.find(BillingProfile, { where: { tenantId, isDefault: true } });
    const others = cleared.filter((profile) => profile.id !== keepId);
    for (const profile of others) {
      profile.isDefault = false;
      profile.updatedAt = at;
      await manager.update(BillingProfile, { id: profile.id }, { isDefault: false, updatedAt: at });
    }
    return others;
  }

  /** The tenant's default profile, if it has one. */
  findDefault(manager: EntityManager, tenantId: string): Promise<BillingProfile | null> {
    return manager.findOneBy(BillingProfile, { tenantId, isDefault: true });
  }

  page(manager: EntityManager, tenantId: string, query: PageQueryDto): Promise<Page<BillingProfile>> {
    const qb = manager
      .getRepository(BillingProfile)
      .createQueryBuilder('profile')
      .where('profile.tenantId = :tenantId', { tenantId });
    return paginate(qb, query);
  }
}
