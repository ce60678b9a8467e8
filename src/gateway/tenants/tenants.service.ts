import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { isUniqueViolation } from '../../common/errors/postgres-errors';
import { Clock } from '../../common/clock';
import { newId } from '../../common/ids';
import { PageQueryDto } from '../../common/pagination';
import { SYSTEM_SCOPE, type WriteScope } from '../../common/request-context';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { TenantResponseDto } from './dto/tenant.dto';
import { Tenant } from './tenant.entity';
import { TenantsRepository } from './tenants.repository';

export const DEFAULT_TENANT_SLUG = 'default';

@Injectable()
export class TenantsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly tenantsRepository: TenantsRepository,
    private readonly clock: Clock,
  ) {}

  async create(scope: WriteScope, slug: string, name: string): Promise<TenantResponseDto> {
    try {
      return await this.transactionRunner.run(scope, async (tx) =>
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
    if (existing) {
      return existing;
    }
    try {
      return await this.transactionRunner.run(SYSTEM_SCOPE, (tx) => this.insert(tx, slug, name));
    } catch (error) {
      const raced = await this.findByIdOrSlug(slug);
      if (raced) {
        return raced;
      }
      throw error;
    }
  }

  /** The tenant, read through `manager` (a caller's transaction) or the pool. */
  findByIdOrSlug(idOrSlug: string, manager: EntityManager = this.dataSource.manager): Promise<Tenant | null> {
    return this.tenantsRepository.findByIdOrSlug(manager, idOrSlug);
  }

  list(query: PageQueryDto): Promise<Page<Tenant>> {
    return this.tenantsRepository.page(this.dataSource.manager, query);
  }

  /** By id, read in the caller's transaction. */
  findIn(tx: Tx, id: string): Promise<Tenant | null> {
    return this.tenantsRepository.findByIdOrSlug(tx.manager, id);
  }

  /** The tenant locked in the caller's transaction for its deletion (a test clock's tenant), or null. */
  lockForDelete(tx: Tx, id: string): Promise<Tenant | null> {
    return this.tenantsRepository.lockForDelete(tx.manager, id);
  }

  /** Deletes the tenant's row, once every row naming it is gone (a test clock's tenant, docs/test-clocks.md). */
  delete(tx: Tx, id: string): Promise<void> {
    return this.tenantsRepository.delete(tx.manager, id);
  }

  /** Creates the tenant and its tenant.created event in the caller's transaction. */
  async insert(tx: Tx, slug: string, name: string): Promise<Tenant> {
    const now = this.clock.now();
    const tenant = await this.tenantsRepository.insert(tx.manager, {
      id: newId('ten', now),
      slug,
      name,
      createdAt: now,
    });
    await this.events.append(tx, {
      tenantId: tenant.id,
      type: 'tenant.created',
      subjectId: tenant.id,
      object: TenantResponseDto.from(tenant),
    });
    return tenant;
  }
}
