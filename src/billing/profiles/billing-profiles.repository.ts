import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { paginate, PageQueryDto } from '../../common/pagination';
import { lockForUpdate } from '../../database/lock-for-update';
import { subscribersTable } from '../../subscribers';
import { BillingProfile } from './billing-profile.entity';

/**
 * The one definition of "the profile a subscriber bills through: its own, else its tenant's default", for SQL: the
 * condition joining profile alias `p` to subscriber alias `s` (`JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}`).
 */
export function subscriberProfileOn(s: string, p: string): string {
  return `${p}.tenant_id = ${s}.tenant_id AND ${p}.id = COALESCE(${s}.billing_profile_id,
    (SELECT d.id FROM billing_profiles d WHERE d.tenant_id = ${s}.tenant_id AND d.is_default))`;
}

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

  /** The profile each of these subscribers bills through (its own, else the tenant default); absent: neither. */
  async effectiveFor(
    manager: EntityManager,
    tenantId: string,
    subscriberIds: string[],
  ): Promise<
    Map<string, { currency: string; billingDay: number; paymentTermsDays: number; autoApply: boolean }>
  > {
    if (subscriberIds.length === 0) {
      return new Map();
    }
    const rows: {
      id: string;
      currency: string;
      billing_day: number;
      payment_terms_days: number;
      auto_apply: boolean;
    }[] = await manager.query(
      `SELECT s.id, p.currency, p.billing_day, p.payment_terms_days, p.auto_apply
           FROM ${subscribersTable('s')} JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
          WHERE s.tenant_id = $1 AND s.id = ANY($2::text[])`,
      [tenantId, subscriberIds],
    );
    return new Map(
      rows.map((row) => [
        row.id,
        {
          currency: row.currency,
          billingDay: row.billing_day,
          paymentTermsDays: row.payment_terms_days,
          autoApply: row.auto_apply,
        },
      ]),
    );
  }

  /** Deletes every billing_profiles row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM billing_profiles WHERE tenant_id = $1', [tenantId]);
  }
}
