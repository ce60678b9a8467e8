import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { paginate, PageQueryDto } from '../../common/pagination';
import { Tenant } from './tenant.entity';

/** The only place the tenants table is read and written. */
@Injectable()
export class TenantsRepository {
  async insert(manager: EntityManager, row: Tenant): Promise<Tenant> {
    const tenant = manager.create(Tenant, row);
    await manager.insert(Tenant, tenant);
    return tenant;
  }

  /** By id (`ten_…`) or by slug. */
  findByIdOrSlug(manager: EntityManager, idOrSlug: string): Promise<Tenant | null> {
    const column = idOrSlug.startsWith('ten_') ? 'id' : 'slug';
    return manager.findOneBy(Tenant, { [column]: idOrSlug });
  }

  page(manager: EntityManager, query: PageQueryDto): Promise<Page<Tenant>> {
    return paginate(manager.getRepository(Tenant).createQueryBuilder('tenant'), query);
  }
}
