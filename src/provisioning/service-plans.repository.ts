import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../common/pagination';
import { lockForUpdate } from '../database/lock-for-update';
import { ProvisioningOrder, Service, ServicePlan } from './provisioning.entity';
import { OPEN_ORDER_STATUSES, ServiceStatus } from './service-status';

/** The only place the service_plans table is read and written. */
@Injectable()
export class ServicePlansRepository {
  async insert(manager: EntityManager, plan: ServicePlan): Promise<void> {
    await manager.insert(ServicePlan, plan);
  }

  /** The plans of `ids` (any tenant's: the caller checks). */
  findByIds(manager: EntityManager, ids: string[]): Promise<ServicePlan[]> {
    return manager.find(ServicePlan, { where: { id: In([...new Set(ids)]) } });
  }

  findById(manager: EntityManager, tenantId: string, id: string): Promise<ServicePlan | null> {
    return manager.findOne(ServicePlan, { where: { tenantId, id } });
  }

  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<ServicePlan> {
    return lockForUpdate(manager, ServicePlan, tenantId, id, 'service plan');
  }

  async update(manager: EntityManager, plan: ServicePlan): Promise<void> {
    const changes: Partial<ServicePlan> = { ...plan };
    for (const fixed of ['tenantId', 'id', 'createdAt'] as const) {
      delete changes[fixed];
    }
    await manager.update(ServicePlan, { tenantId: plan.tenantId, id: plan.id }, changes);
  }

  /** Whether a service that is not terminated is on the plan, or an open order moves one to it. */
  async inUse(manager: EntityManager, tenantId: string, planId: string): Promise<boolean> {
    const service = await manager
      .getRepository(Service)
      .createQueryBuilder('service')
      .where('service.tenantId = :tenantId AND service.planId = :planId', { tenantId, planId })
      .andWhere('service.status <> :terminated', { terminated: ServiceStatus.Terminated })
      .getExists();
    if (service) {
      return true;
    }
    return manager
      .getRepository(ProvisioningOrder)
      .createQueryBuilder('o')
      .where('o.tenantId = :tenantId AND o.planId = :planId', { tenantId, planId })
      .andWhere('o.status IN (:...open)', { open: OPEN_ORDER_STATUSES })
      .getExists();
  }

  page(
    manager: EntityManager,
    tenantId: string,
    active: boolean | undefined,
    query: PageQueryDto,
  ): Promise<Page<ServicePlan>> {
    const qb = manager
      .getRepository(ServicePlan)
      .createQueryBuilder('plan')
      .where('plan.tenantId = :tenantId', { tenantId });
    if (active !== undefined) {
      qb.andWhere('plan.active = :active', { active });
    }
    return paginate(qb, query);
  }
}
