import { Injectable } from '@nestjs/common';
import { assertIfMatch } from '../common/http/etag';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { isUniqueViolation } from '../common/errors/postgres-errors';
import { newId } from '../common/ids';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import {
  CreateServicePlanDto,
  ListServicePlansQueryDto,
  ServicePlanDto,
  UpdateServicePlanDto,
} from './dto/service-plan.dto';
import { ServicePlan } from './provisioning.entity';
import { ServicePlansRepository } from './service-plans.repository';

function writeError(error: unknown): ApiError | null {
  return isUniqueViolation(error, 'uq_service_plans_name')
    ? new ApiError('duplicate_service_plan', 'A service plan with this name already exists.', 'name')
    : null;
}

/** What may not change in place while a live service uses the plan: what the network and the bills see. */
const IN_USE_FIELDS = ['download_kbps', 'upload_kbps', 'price'] as const;

@Injectable()
export class ServicePlansService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tx: TransactionRunner,
    private readonly events: EventsService,
    private readonly plans: ServicePlansRepository,
  ) {}

  async create(auth: AuthContext, dto: CreateServicePlanDto): Promise<ServicePlanDto> {
    const now = new Date();
    const plan = Object.assign(new ServicePlan(), {
      tenantId: auth.tenantId,
      id: newId('plan', now),
      name: dto.name,
      downloadKbps: dto.download_kbps,
      uploadKbps: dto.upload_kbps,
      price: dto.price,
      currency: dto.currency,
      billingPeriod: dto.billing_period,
      active: dto.active,
      createdAt: now,
      updatedAt: now,
    });
    try {
      return await this.tx.run(auth, async (tx) => {
        await this.plans.insert(tx.manager, plan);
        const answer = ServicePlanDto.from(plan);
        await this.events.append(tx, {
          tenantId: auth.tenantId,
          type: 'service_plan.created',
          subjectId: plan.id,
          object: answer,
        });
        return answer;
      });
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }

  async get(tenantId: string, id: string): Promise<ServicePlan> {
    const plan = await this.plans.findById(this.dataSource.manager, tenantId, id);
    if (!plan) {
      throw ApiError.notFound('service plan', id);
    }
    return plan;
  }

  list(tenantId: string, query: ListServicePlansQueryDto): Promise<Page<ServicePlan>> {
    const active = query.active === undefined ? undefined : query.active === 'true';
    return this.plans.page(this.dataSource.manager, tenantId, active, query);
  }

  async update(auth: AuthContext, id: string, dto: UpdateServicePlanDto): Promise<ServicePlanDto> {
    try {
      return await this.tx.run(auth, async (tx) => {
        const plan = await this.plans.lockForUpdate(tx.manager, auth.tenantId, id);
        await assertIfMatch(() => ServicePlanDto.from(plan));
        const next = {
          name: dto.name ?? plan.name,
          downloadKbps: dto.download_kbps ?? plan.downloadKbps,
          uploadKbps: dto.upload_kbps ?? plan.uploadKbps,
          price: dto.price ?? plan.price,
          active: dto.active ?? plan.active,
        };
        const changed = (
          [
            ['name', 'name'],
            ['download_kbps', 'downloadKbps'],
            ['upload_kbps', 'uploadKbps'],
            ['price', 'price'],
            ['active', 'active'],
          ] as const
        ).filter(([, key]) => next[key] !== plan[key]);
        const frozen = changed.find(([field]) => (IN_USE_FIELDS as readonly string[]).includes(field));
        if (frozen && (await this.plans.inUse(tx.manager, auth.tenantId, id))) {
          throw new ApiError(
            'plan_in_use',
            `A live service uses this plan, so its ${frozen[0]} cannot change in place: create a new plan and ` +
              'change_plan the services to it.',
            frozen[0],
          );
        }
        if (changed.length === 0) {
          return ServicePlanDto.from(plan);
        }
        Object.assign(plan, next, { updatedAt: new Date() });
        await this.plans.update(tx.manager, plan);
        const answer = ServicePlanDto.from(plan);
        await this.events.append(tx, {
          tenantId: auth.tenantId,
          type: 'service_plan.updated',
          subjectId: plan.id,
          object: answer,
          details: { changed_fields: changed.map(([field]) => field) },
        });
        return answer;
      });
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }
}
