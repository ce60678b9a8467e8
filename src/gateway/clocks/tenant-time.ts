import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { atFrozenTime } from '../../common/clock';
import { TestClocksRepository } from './test-clocks.repository';

/**
 * A tenant's time: its test clock's frozen time for a test tenant, the system's (null here) for every other. A tenant
 * is made a test tenant with its clock, in one transaction, and stays one until deleted, so a tenant once found live
 * is remembered as live (no read per request); a test tenant's time is read each time (an advance moves it).
 */
@Injectable()
export class TenantTime {
  private readonly live = new Set<string>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clocks: TestClocksRepository,
  ) {}

  /** The tenant's frozen time, or null for a live tenant. */
  async frozenAt(tenantId: string): Promise<Date | null> {
    if (this.live.has(tenantId)) {
      return null;
    }
    const clock = await this.clocks.ofTenant(this.dataSource.manager, tenantId);
    if (!clock) {
      this.live.add(tenantId);
      return null;
    }
    return clock.frozenTime;
  }

  /** The frozen times of the test tenants among `tenantIds`, read in the caller's transaction. */
  async frozenTimes(manager: EntityManager, tenantIds: string[]): Promise<Map<string, Date>> {
    const unknown = [...new Set(tenantIds)].filter((id) => !this.live.has(id));
    if (unknown.length === 0) {
      return new Map();
    }
    const frozen = await this.clocks.frozenTimes(manager, unknown);
    for (const id of unknown) {
      if (!frozen.has(id)) {
        this.live.add(id);
      }
    }
    return frozen;
  }

  /** Runs `work` at the tenant's time: what a worker does for one tenant reads its clock. */
  async run<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    return atFrozenTime(await this.frozenAt(tenantId), work);
  }
}
