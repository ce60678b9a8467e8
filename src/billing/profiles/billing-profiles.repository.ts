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

  page(manager: EntityManager, tenantId: string, query: PageQueryDto): Promise<Page<BillingProfile>> {
    const qb = manager
      .getRepository(BillingProfile)
      .createQueryBuilder('profile')
      .where('profile.tenantId = :tenantId', { tenantId });
    return paginate(qb, query);
  }
}
