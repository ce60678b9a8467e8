import type { AuthContext } from '../../common/request-context';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { PageQueryDto } from '../../common/pagination';
import { TransactionRunner } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { BillingProfile } from './billing-profile.entity';
import { BillingProfilesRepository } from './billing-profiles.repository';
import {
  BillingProfileDto,
  CreateBillingProfileDto,
  UpdateBillingProfileDto,
} from './dto/billing-profile.dto';

const NOT_NULLABLE = ['name', 'currency', 'billing_day', 'payment_terms_days'] as const;

@Injectable()
export class BillingProfilesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tx: TransactionRunner,
    private readonly events: EventsService,
    private readonly profiles: BillingProfilesRepository,
  ) {}

  create(auth: AuthContext, dto: CreateBillingProfileDto): Promise<BillingProfileDto> {
    const { tenantId } = auth;
    return this.tx.run(auth, async (tx) => {
      const now = new Date();
      const profile = await this.profiles.insert(tx.manager, {
        id: newId('bp'),
        tenantId,
        name: dto.name,
        currency: dto.currency,
        billingDay: dto.billing_day,
        paymentTermsDays: dto.payment_terms_days ?? 14,
        autoSuspendAfterDays: dto.auto_suspend_after_days ?? null,
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
    for (const field of NOT_NULLABLE) {
      if (dto[field] === null) {
        throw new ApiError('validation_failed', `${field} cannot be null.`, field);
      }
    }
    return this.tx.run(auth, async (tx) => {
      const profile = await this.profiles.lockForUpdate(tx.manager, tenantId, id);
      const changes: Partial<BillingProfile> = {
        name: dto.name,
        currency: dto.currency,
        billingDay: dto.billing_day,
        paymentTermsDays: dto.payment_terms_days,
        autoSuspendAfterDays: dto.auto_suspend_after_days,
      };
      const changed = (Object.keys(changes) as (keyof BillingProfile)[]).filter(
        (key) => changes[key] !== undefined && changes[key] !== profile[key],
      );
      if (changed.length === 0) {
        return profile;
      }
      Object.assign(profile, Object.fromEntries(changed.map((key) => [key, changes[key]])), {
        updatedAt: new Date(),
      });
      await this.profiles.update(tx.manager, profile, [...changed, 'updatedAt']);
      await this.events.append(tx, {
        tenantId,
        type: 'billing_profile.updated',
        subjectId: profile.id,
        object: BillingProfileDto.from(profile),
        details: {
          changed_fields: changed.map((key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)),
        },
      });
      return profile;
    });
  }

  getById(tenantId: string, id: string): Promise<BillingProfile> {
    return this.profiles.getById(this.dataSource.manager, tenantId, id);
  }

  list(tenantId: string, query: PageQueryDto): Promise<Page<BillingProfile>> {
    return this.profiles.page(this.dataSource.manager, tenantId, query);
  }
}
