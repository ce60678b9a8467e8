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
import { TransactionRunner } from '../../database/transaction-runner';
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
  ) {}

  async create(auth: AuthContext, name: string, frozenTime: Date): Promise<CreatedTestClockDto> {
    if ((await this.tenantTime.frozenAt(auth.tenantId)) !== null) {
      throw new ApiError('test_tenant_forbidden', 'A test tenant cannot create test clocks of its own.');
    }
    return this.transactionRunner.run(auth, async (tx) => {
      const now = this.clock.now();
      const id = newId('clk', now);
      const tenant = await this.tenants.insert(
        tx,
        `test-${id.slice(4).toLowerCase()}`,
        `${name} (test clock)`,
      );
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
}
