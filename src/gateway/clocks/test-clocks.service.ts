import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock, utcDay } from '../../common/clock';
import { daysBetween } from '../../common/dates';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { PageQueryDto } from '../../common/pagination';
import type { AuthContext } from '../../common/request-context';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { assertIfMatch } from '../../common/http/etag';
import { IdempotencyRepository } from '../idempotency/idempotency.repository';
import { TenantSettingsRepository } from '../tenants/tenant-settings.repository';
import { EventsService } from '../../events';
import { TenantResponseDto } from '../tenants/dto/tenant.dto';
import { TenantsService } from '../tenants/tenants.service';
import { TokensService } from '../tokens/tokens.service';
import { CreatedTestClockDto, TestClockDto } from './dto/test-clock.dto';
import { TestClock, TestClockStatus } from './test-clock.entity';
import { TenantTime } from './tenant-time';
import { TestClocksRepository } from './test-clocks.repository';

/** The longest advance: two years (731 days), as Stripe's test clocks allow. */
export const MAX_ADVANCE_DAYS = 731;

/** The slug of a clock's test tenant, made with it: `test-` and the clock id's random part. */
export function testTenantSlug(clockId: string): string {
  return `test-${clockId.slice(4).toLowerCase()}`;
}

/**
 * What the other modules delete of a test tenant, in the deletion's transaction and in their dependency order, before
 * the gateway deletes its own rows (the tenant's tokens, idempotency keys, settings, clock and tenant row).
 */
export type TenantPurge = (tx: Tx, tenantId: string) => Promise<void>;

/**
 * Test clocks as the owner tenant's resources (docs/test-clocks.md): made with their test tenant and its first token
 * in one transaction, read, and set advancing; the advance itself is carried out by the test-clocks module.
 */
@Injectable()
export class TestClocksService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly tenants: TenantsService,
    private readonly tokens: TokensService,
    private readonly clocks: TestClocksRepository,
    private readonly tenantTime: TenantTime,
    private readonly clock: Clock,
    private readonly settings: TenantSettingsRepository,
    private readonly idempotencyKeys: IdempotencyRepository,
  ) {}

  async create(auth: AuthContext, name: string, frozenTime: Date): Promise<CreatedTestClockDto> {
    if ((await this.tenantTime.frozenAt(auth.tenantId)) !== null) {
      throw new ApiError('test_tenant_forbidden', 'A test tenant cannot create test clocks of its own.');
    }
    return this.transactionRunner.run(auth, async (tx) => {
      const now = this.clock.now();
      const id = newId('clk', now);
      const tenant = await this.tenants.insert(tx, testTenantSlug(id), `${name} (test clock)`);
      const clock = await this.clocks.insert(tx.manager, {
        id,
        tenantId: tenant.id,
        ownerTenantId: auth.tenantId,
        name,
        frozenTime,
        status: TestClockStatus.Ready,
        advanceTo: null,
        leaseId: null,
        leaseUntil: null,
        createdAt: now,
        updatedAt: now,
      });
      const { secret } = await this.tokens.issueIn(tx, {
        tenant,
        name: `test clock ${id}`,
        scopes: ['admin'],
        expiresAt: null,
      });
      await this.events.append(tx, {
        tenantId: auth.tenantId,
        type: 'test_clock.created',
        subjectId: id,
        object: TestClockDto.from(clock),
      });
      return { ...TestClockDto.from(clock), tenant: TenantResponseDto.from(tenant), token: secret };
    });
  }

  get(ownerTenantId: string, id: string): Promise<TestClock> {
    return this.clocks.getOwned(this.dataSource.manager, ownerTenantId, id);
  }

  list(ownerTenantId: string, query: PageQueryDto): Promise<Page<TestClock>> {
    return this.clocks.page(this.dataSource.manager, ownerTenantId, query);
  }

  /** Sets the clock advancing to `to` (409 while it is not ready; 422 for a `to` not ahead, or too far ahead). */
  startAdvance(auth: AuthContext, id: string, to: Date, afterCommit: () => void): Promise<TestClock> {
    return this.transactionRunner.run(auth, async (tx) => {
      const clock = await this.clocks.lockOwned(tx.manager, auth.tenantId, id);
      if (clock.status !== TestClockStatus.Ready) {
        throw new ApiError(
          'test_clock_advancing',
          clock.status === TestClockStatus.Advancing
            ? `Test clock ${id} is advancing to ${clock.advanceTo?.toISOString()}: wait for test_clock.ready.`
            : `Test clock ${id} stopped on a failure (internal_failure) and cannot advance; delete it.`,
        );
      }
      if (to.getTime() <= clock.frozenTime.getTime()) {
        throw new ApiError(
          'validation_failed',
          `to must be after the clock's frozen_time ${clock.frozenTime.toISOString()}: a test clock never goes back.`,
          'to',
        );
      }
      if (daysBetween(utcDay(clock.frozenTime), utcDay(to)) > MAX_ADVANCE_DAYS) {
        throw new ApiError(
          'validation_failed',
          `An advance moves a clock at most ${MAX_ADVANCE_DAYS} days (2 years) at once.`,
          'to',
        );
      }
      Object.assign(clock, {
        status: TestClockStatus.Advancing,
        advanceTo: to,
        leaseId: null,
        leaseUntil: null,
        updatedAt: this.clock.now(),
      });
      await this.clocks.update(tx.manager, clock);
      await this.events.append(tx, {
        tenantId: auth.tenantId,
        type: 'test_clock.advancing',
        subjectId: id,
        object: TestClockDto.from(clock),
      });
      tx.afterCommit(afterCommit);
      return clock;
    });
  }

  /**
   * Deletes the clock and every row of its test tenant in one transaction (docs/test-clocks.md): `purge` deletes the
   * other modules' rows, then the gateway its own; `test_clock.deleted` is written to the owner's log. 409 while the
   * clock advances. A tenant that is not the clock's own test tenant (as create made it) is never purged.
   */
  delete(auth: AuthContext, id: string, purge: TenantPurge): Promise<TestClock> {
    return this.transactionRunner.run(auth, async (tx) => {
      const clock = await this.clocks.lockOwned(tx.manager, auth.tenantId, id);
      await assertIfMatch(() => TestClockDto.from(clock));
      if (clock.status === TestClockStatus.Advancing) {
        throw new ApiError(
          'test_clock_advancing',
          `Test clock ${id} is advancing to ${clock.advanceTo?.toISOString()}: delete it once test_clock.ready is written.`,
        );
      }
      // Rows naming the tenant wait for this lock (their foreign key's check), so none is added while it is purged.
      const tenant = await this.tenants.lockForDelete(tx, clock.tenantId);
      if (!tenant || tenant.id === clock.ownerTenantId || tenant.slug !== testTenantSlug(clock.id)) {
        // Only a test tenant made with this clock is ever purged: anything else is a broken invariant, not a request.
        throw new Error(`test clock ${clock.id} is not bound to its own test tenant: nothing deleted`);
      }
      await purge(tx, tenant.id);
      await this.idempotencyKeys.purgeTenant(tx.manager, tenant.id);
      await this.tokens.purgeTenant(tx, tenant.id);
      await this.settings.purgeTenant(tx.manager, tenant.id);
      await this.clocks.delete(tx.manager, clock.id);
      await this.tenants.delete(tx, tenant.id);
      await this.events.append(tx, {
        tenantId: auth.tenantId,
        type: 'test_clock.deleted',
        subjectId: clock.id,
        object: TestClockDto.from(clock),
      });
      return clock;
    });
  }
}
