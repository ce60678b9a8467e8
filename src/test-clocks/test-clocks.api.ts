import { Injectable } from '@nestjs/common';
import { Page } from '../common/envelope/envelope';
import { PageQueryDto } from '../common/pagination';
import type { AuthContext } from '../common/request-context';
import {
  AdvanceTestClockDto,
  CreatedTestClockDto,
  CreateTestClockDto,
  TestClockDto,
  TestClocksService,
} from '../gateway';
import { TestClockAdvancer } from './test-clock-advancer';
import { TestTenantPurge } from './test-tenant-purge';

/** The test clocks API: gateway keeps the clocks and their tenants; an advance is carried out here. */
@Injectable()
export class TestClocksApi {
  constructor(
    private readonly clocks: TestClocksService,
    private readonly advancer: TestClockAdvancer,
    private readonly purge: TestTenantPurge,
  ) {}

  create(auth: AuthContext, dto: CreateTestClockDto): Promise<CreatedTestClockDto> {
    return this.clocks.create(auth, dto.name, new Date(dto.frozen_time));
  }

  async list(ownerTenantId: string, query: PageQueryDto): Promise<Page<TestClockDto>> {
    return (await this.clocks.list(ownerTenantId, query)).map(TestClockDto.from);
  }

  async get(ownerTenantId: string, id: string): Promise<TestClockDto> {
    return TestClockDto.from(await this.clocks.get(ownerTenantId, id));
  }

  async advance(auth: AuthContext, id: string, dto: AdvanceTestClockDto): Promise<TestClockDto> {
    const clock = await this.clocks.startAdvance(auth, id, new Date(dto.to), () => this.advancer.wake());
    return TestClockDto.from(clock);
  }

  /** The clock as it was, deleted with its test tenant and every record of it. */
  async delete(auth: AuthContext, id: string): Promise<TestClockDto> {
    const clock = await this.clocks.delete(auth, id, (tx, tenantId) => this.purge.purgeTenant(tx, tenantId));
    return TestClockDto.from(clock);
  }
}
