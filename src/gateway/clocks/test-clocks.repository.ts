import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { paginate, PageQueryDto } from '../../common/pagination';
import { TestClock, TestClockStatus } from './test-clock.entity';

/**
 * SQL: true when the tenant in column `tenantColumn` is live (has no test clock), for another module's statement
 * that walks every tenant on its own schedule: the periodic passes leave a test tenant's time-based work to its
 * clock's advances (docs/test-clocks.md). Reads `test_clocks.tenant_id` (its unique index) only.
 */
export function liveTenant(tenantColumn: string): string {
  return `NOT EXISTS (SELECT 1 FROM test_clocks tck WHERE tck.tenant_id = ${tenantColumn})`;
}

/** The only place the test_clocks table is read and written (and liveTenant the way others' statements filter by it). */
@Injectable()
export class TestClocksRepository {
  async insert(manager: EntityManager, row: TestClock): Promise<TestClock> {
    const clock = manager.create(TestClock, row);
    await manager.insert(TestClock, clock);
    return clock;
  }

  /** The owner's clock, 404 for any other (another tenant's clock is never revealed). */
  async getOwned(manager: EntityManager, ownerTenantId: string, id: string): Promise<TestClock> {
    const clock = await manager.findOneBy(TestClock, { ownerTenantId, id });
    if (!clock) {
      throw ApiError.notFound('test clock', id);
    }
    return clock;
  }

  async lockOwned(manager: EntityManager, ownerTenantId: string, id: string): Promise<TestClock> {
    const clock = await manager.findOne(TestClock, {
      where: { ownerTenantId, id },
      lock: { mode: 'pessimistic_write' },
    });
    if (!clock) {
      throw ApiError.notFound('test clock', id);
    }
    return clock;
  }

  page(manager: EntityManager, ownerTenantId: string, query: PageQueryDto): Promise<Page<TestClock>> {
    return paginate(
      manager
        .getRepository(TestClock)
        .createQueryBuilder('clock')
        .where('clock.ownerTenantId = :ownerTenantId', { ownerTenantId }),
      query,
    );
  }

  /** The clock bound to `tenantId`, or null for a live tenant. */
  ofTenant(manager: EntityManager, tenantId: string): Promise<TestClock | null> {
    return manager.findOneBy(TestClock, { tenantId });
  }

  /** The frozen times of those of `tenantIds` that are test tenants. */
  async frozenTimes(manager: EntityManager, tenantIds: string[]): Promise<Map<string, Date>> {
    const rows: { tenant_id: string; frozen_time: Date }[] = await manager.query(
      'SELECT tenant_id, frozen_time FROM test_clocks WHERE tenant_id = ANY($1::text[])',
      [tenantIds],
    );
    return new Map(rows.map((row) => [row.tenant_id, new Date(row.frozen_time)]));
  }

  /** Saves the changed fields of a clock read under its lock (or its lease). */
  async update(manager: EntityManager, clock: TestClock): Promise<void> {
    const { id, ...fields } = clock;
    await manager.update(TestClock, { id }, fields);
  }

  /** Takes one advancing clock whose lease is free or ran out, for `leaseMs` by the database's clock. */
  async claim(manager: EntityManager, leaseId: string, leaseMs: number): Promise<TestClock | null> {
    const [rows] = await manager.query<[{ id: string }[], number]>(
      `UPDATE test_clocks c SET lease_id = $1, lease_until = now() + make_interval(secs => $2::float8 / 1000)
        WHERE c.id = (SELECT id FROM test_clocks WHERE status = '${TestClockStatus.Advancing}'
                        AND (lease_until IS NULL OR lease_until < now())
                      ORDER BY updated_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING c.id`,
      [leaseId, leaseMs],
    );
    return rows.length === 0 ? null : manager.findOneBy(TestClock, { id: rows[0].id });
  }

  /** Moves the clock to `frozenTime` and renews the lease, while the lease is ours; false once it is lost. */
  async step(
    manager: EntityManager,
    id: string,
    leaseId: string,
    leaseMs: number,
    frozenTime: Date,
    updatedAt: Date,
  ): Promise<boolean> {
    const [, count] = await manager.query<[unknown, number]>(
      `UPDATE test_clocks SET frozen_time = $3, updated_at = $5,
              lease_until = now() + make_interval(secs => $4::float8 / 1000)
        WHERE id = $1 AND lease_id = $2 AND status = '${TestClockStatus.Advancing}'`,
      [id, leaseId, frozenTime, leaseMs, updatedAt],
    );
    return count > 0;
  }

  /** The clock locked while our lease holds it, for the advance's last write. */
  lockLeased(manager: EntityManager, id: string, leaseId: string): Promise<TestClock | null> {
    return manager.findOne(TestClock, { where: { id, leaseId }, lock: { mode: 'pessimistic_write' } });
  }

  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.delete(TestClock, { id });
  }
}
