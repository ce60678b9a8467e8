import type { AuthContext } from '../../common/request-context';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../../common/clock';
import { Page } from '../../common/envelope/envelope';
import { assertIfMatch } from '../../common/http/etag';
import { newId } from '../../common/ids';
import { PageQueryDto } from '../../common/pagination';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { TaxRatesService } from '../taxes/tax-rates.service';
import { BillingProfile } from './billing-profile.entity';
import { BillingProfilesRepository } from './billing-profiles.repository';
import {
  BillingProfileDto,
  CreateBillingProfileDto,
  UpdateBillingProfileDto,
} from './dto/billing-profile.dto';
import { lateFeeColumns } from './dto/fees.dto';

/** Whether a PATCH leaves a field as it is (the reminder offsets are an array: compared by their values, in order). */
function sameValue(a: unknown, b: unknown): boolean {
  return Array.isArray(a) && Array.isArray(b)
    ? a.length === b.length && a.every((value, index) => value === b[index])
    : a === b;
}

/** The API fields of changed columns: `autoApply` → `auto_apply`; the late_fee_* columns are one field, `late_fee`. */
function apiFields(columns: (keyof BillingProfile)[]): string[] {
  const fields = columns.map((key) =>
    key.startsWith('lateFee') ? 'late_fee' : key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
  );
  return [...new Set(fields)];
}

@Injectable()
export class BillingProfilesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly profiles: BillingProfilesRepository,
    private readonly taxRates: TaxRatesService,
    private readonly clock: Clock,
  ) {}

  create(auth: AuthContext, dto: CreateBillingProfileDto): Promise<BillingProfileDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      await this.taxRates.assertApplicable(tx.manager, tenantId, dto.tax_rate_ids);
      const now = this.clock.now();
      const id = newId('bp', now);
      if (dto.is_default) {
        await this.clearDefault(tx, tenantId, id, now);
      }
      const profile = await this.profiles.insert(tx.manager, {
        id,
        tenantId,
        name: dto.name,
        currency: dto.currency,
        billingDay: dto.billing_day,
        paymentTermsDays: dto.payment_terms_days ?? 14,
        autoSuspendAfterDays: dto.auto_suspend_after_days ?? null,
        isDefault: dto.is_default ?? false,
        autoApply: dto.auto_apply ?? true,
        reminderOffsets: dto.reminder_offsets ?? [],
        ...lateFeeColumns(dto.late_fee ?? null),
        reconnectionFee: dto.reconnection_fee ?? null,
        feesBeforeRestoration: dto.fees_before_restoration ?? false,
        taxRateIds: dto.tax_rate_ids ?? [],
        createdAt: now,
        updatedAt: now,
      });
      await this.events.append(tx, {
        tenantId,
        type: 'billing_profile.created',
        subjectId: profile.id,
        object: BillingProfileDto.from(profile),
      });
      return BillingProfileDto.from(profile);
    });
  }

  update(auth: AuthContext, id: string, dto: UpdateBillingProfileDto): Promise<BillingProfile> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const profile = await this.profiles.lockForUpdate(tx.manager, tenantId, id);
      await assertIfMatch(() => BillingProfileDto.from(profile));
      const changes: Partial<BillingProfile> = {
        name: dto.name,
        currency: dto.currency,
        billingDay: dto.billing_day,
        paymentTermsDays: dto.payment_terms_days,
        autoSuspendAfterDays: dto.auto_suspend_after_days,
        isDefault: dto.is_default,
        autoApply: dto.auto_apply,
        reminderOffsets: dto.reminder_offsets,
        // A late_fee sent replaces the whole fee (all its columns); null removes it.
        ...(dto.late_fee !== undefined ? lateFeeColumns(dto.late_fee) : {}),
        reconnectionFee: dto.reconnection_fee,
        feesBeforeRestoration: dto.fees_before_restoration,
        taxRateIds: dto.tax_rate_ids,
      };
      const changed = (Object.keys(changes) as (keyof BillingProfile)[]).filter(
        (key) => changes[key] !== undefined && !sameValue(changes[key], profile[key]),
      );
      if (changed.length === 0) {
        return profile;
      }
      // A list sent unchanged is not checked again (a rate of it may have been archived since).
      if (changed.includes('taxRateIds')) {
        await this.taxRates.assertApplicable(tx.manager, tenantId, dto.tax_rate_ids);
      }
      const now = this.clock.now();
      if (changes.isDefault === true && changed.includes('isDefault')) {
        await this.clearDefault(tx, tenantId, profile.id, now);
      }
      Object.assign(profile, Object.fromEntries(changed.map((key) => [key, changes[key]])), {
        updatedAt: now,
      });
      await this.profiles.update(tx.manager, profile, [...changed, 'updatedAt']);
      await this.events.append(tx, {
        tenantId,
        type: 'billing_profile.updated',
        subjectId: profile.id,
        object: BillingProfileDto.from(profile),
        details: {
          changed_fields: apiFields(changed),
        },
      });
      return profile;
    });
  }

  /** The previous default stops being one (with its billing_profile.updated event). */
  private async clearDefault(tx: Tx, tenantId: string, keepId: string, at: Date): Promise<void> {
    for (const previous of await this.profiles.clearDefault(tx.manager, tenantId, keepId, at)) {
      await this.events.append(tx, {
        tenantId,
        type: 'billing_profile.updated',
        subjectId: previous.id,
        object: BillingProfileDto.from(previous),
        details: { changed_fields: ['is_default'] },
      });
    }
  }

  /** The subscriber's own profile's id, else the tenant's default's; null when it has neither. */
  async profileFor(
    manager: EntityManager,
    tenantId: string,
    profileId: string | null,
  ): Promise<BillingProfile | null> {
    if (profileId) {
      return this.profiles.getById(manager, tenantId, profileId);
    }
    return this.profiles.findDefault(manager, tenantId);
  }

  getById(tenantId: string, id: string): Promise<BillingProfile> {
    return this.profiles.getById(this.dataSource.manager, tenantId, id);
  }

  list(tenantId: string, query: PageQueryDto): Promise<Page<BillingProfile>> {
    return this.profiles.page(this.dataSource.manager, tenantId, query);
  }
}
