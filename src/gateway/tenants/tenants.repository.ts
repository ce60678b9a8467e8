import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { paginate, PageQueryDto } from '../../common/pagination';
import { Tenant } from './tenant.entity';

/**
 * The tenants table in another module's statement, `tenants <alias>` after its FROM or JOIN, for a statement that
 * reads tenants with its own tables: billing's scheduler and overdue sweep walk every tenant (they read its `id`).
 * Other reads call TenantsService (docs/architecture.md, "Owns (tables)").
 */
export function tenantsTable(alias: string): string {
  return `tenants ${alias}`;
}

/** The only place the tenants table is read and written (and tenantsTable the way others' statements join it). */
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

  /**
   * The tenant locked for its deletion: a row that names it (a foreign key's check takes a share lock on it) cannot
   * be written by anyone else until the deleting transaction ends.
   */
  lockForDelete(manager: EntityManager, id: string): Promise<Tenant | null> {
    return manager.findOne(Tenant, { where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.delete(Tenant, { id });
  }

  page(manager: EntityManager, query: PageQueryDto): Promise<Page<Tenant>> {
    return paginate(manager.getRepository(Tenant).createQueryBuilder('tenant'), query);
  }
}
