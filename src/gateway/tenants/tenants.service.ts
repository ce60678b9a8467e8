import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { isUniqueViolation } from '../../common/errors/postgres-errors';
import { newId } from '../../common/ids';
import { paginate, PageQueryDto } from '../../common/pagination';
import { SYSTEM_SCOPE, type WriteScope } from '../../common/request-context';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events/events.service';
import { TenantResponseDto } from './dto/tenant.dto';
import { Tenant } from './tenant.entity';

export const DEFAULT_TENANT_SLUG = 'default';

@Injectable()
export class TenantsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tx: TransactionRunner,
    private readonly events: EventsService,
  ) {}

  async create(scope: WriteScope, slug: string, name: string): Promise<TenantResponseDto> {
    try {
      return await this.tx.run(scope, async (tx) =>
        TenantResponseDto.from(await this.insert(tx, slug, name)),
      );
    } catch (error) {
      if (isUniqueViolation(error, 'uq_tenants_slug')) {
        throw new ApiError('duplicate_tenant', `A tenant with slug ${slug} already exists.`, 'slug');
      }
      throw error;
    }
  }

  /** Returns the tenant with this slug, creating it if needed; safe when two processes boot at once. */
  async ensure(slug: string, name: string): Promise<Tenant> {
    const existing = await this.findByIdOrSlug(slug);
    if (existing) return existing;
    try {
      return await this.tx.run(SYSTEM_SCOPE, (tx) => this.insert(tx, slug, name));
    } catch (error) {
      const raced = await this.findByIdOrSlug(slug);
      if (raced) return raced;
      throw error;
    }
  }

  findByIdOrSlug(idOrSlug: string): Promise<Tenant | null> {
    const column = idOrSlug.startsWith('ten_') ? 'id' : 'slug';
    return this.dataSource.getRepository(Tenant).findOneBy({ [column]: idOrSlug });
  }

  list(query: PageQueryDto): Promise<Page<Tenant>> {
    return paginate(this.dataSource.getRepository(Tenant).createQueryBuilder('tenant'), query);
  }

  private async insert(tx: Tx, slug: string, name: string): Promise<Tenant> {
    const tenant = tx.manager.create(Tenant, { id: newId('ten'), slug, name, createdAt: new Date() });
    await tx.manager.insert(Tenant, tenant);
    await this.events.append(tx, {
      tenantId: tenant.id,
      type: 'tenant.created',
      subjectId: tenant.id,
      object: TenantResponseDto.from(tenant),
    });
    return tenant;
  }
}
