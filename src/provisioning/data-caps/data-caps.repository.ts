import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { CapState, ServiceStatus } from '../service-status';
import { ServiceTopUp, ServiceUsagePeriod } from './data-cap.entity';

/** A service the data cap worker looks at: capped by its plan, or in a cap state to undo. */
export interface CapCandidate {
  tenantId: string;
  id: string;
  subscriberId: string;
  radiusUsername: string;
  status: ServiceStatus;
  capState: CapState;
  createdAt: Date;
  terminatedAt: Date | null;
  dataCapBytes: number | null;
}

/** The only place service_usage_periods and service_top_ups are read and written, and the cap worker's walk. */
@Injectable()
export class DataCapsRepository {
  /**
   * The next services after (`afterTenant`, `afterId`) in key order, up to `limit`: active or suspended ones whose plan
   * has a data cap, or whose cap state is not normal (a plan changed to one without a cap, to be restored).
   */
  async candidates(
    manager: EntityManager,
    after: { tenantId: string; id: string },
    limit: number,
  ): Promise<CapCandidate[]> {
    const rows: Record<string, unknown>[] = await manager.query(
      `SELECT s.tenant_id, s.id, s.subscriber_id, s.radius_username, s.status, s.cap_state, s.created_at,
              s.terminated_at, p.data_cap_bytes::text AS data_cap_bytes
         FROM services s JOIN service_plans p ON p.tenant_id = s.tenant_id AND p.id = s.plan_id
        WHERE (s.tenant_id, s.id) > ($1, $2) AND s.status IN ('active', 'suspended')
          AND (p.data_cap_bytes IS NOT NULL OR s.cap_state <> 'normal')
        ORDER BY s.tenant_id, s.id LIMIT $3`,
      [after.tenantId, after.id, limit],
    );
    return rows.map((row) => ({
      tenantId: row.tenant_id as string,
      id: row.id as string,
      subscriberId: row.subscriber_id as string,
      radiusUsername: row.radius_username as string,
      status: row.status as ServiceStatus,
      capState: row.cap_state as CapState,
      createdAt: row.created_at as Date,
      terminatedAt: (row.terminated_at as Date | null) ?? null,
      dataCapBytes: row.data_cap_bytes === null ? null : Number(row.data_cap_bytes),
    }));
  }

  /** Bytes topped up per service for the period starting `periodStart` of each (services absent: none). */
  async topUpBytes(
    manager: EntityManager,
    tenantId: string,
    periods: { serviceId: string; periodStart: string }[],
  ): Promise<Map<string, number>> {
    if (periods.length === 0) {
      return new Map();
    }
    const rows: { service_id: string; bytes: string }[] = await manager.query(
      `SELECT t.service_id, sum(t.bytes)::text AS bytes
         FROM unnest($2::text[], $3::date[]) AS w(service_id, period_start)
         JOIN service_top_ups t ON t.tenant_id = $1 AND t.service_id = w.service_id AND t.period_start = w.period_start
        GROUP BY t.service_id`,
      [tenantId, periods.map((period) => period.serviceId), periods.map((period) => period.periodStart)],
    );
    return new Map(rows.map((row) => [row.service_id, Number(row.bytes)]));
  }

  /** The periods rows of these services starting on their `periodStart`. */
  async periods(
    manager: EntityManager,
    tenantId: string,
    periods: { serviceId: string; periodStart: string }[],
  ): Promise<Map<string, ServiceUsagePeriod>> {
    if (periods.length === 0) {
      return new Map();
    }
    const rows: Record<string, unknown>[] = await manager.query(
      `SELECT p.service_id, to_char(p.period_start, 'YYYY-MM-DD') AS period_start,
              to_char(p.period_end, 'YYYY-MM-DD') AS period_end, p.warned_at, p.reached_at, p.created_at
         FROM unnest($2::text[], $3::date[]) AS w(service_id, period_start)
         JOIN service_usage_periods p
           ON p.tenant_id = $1 AND p.service_id = w.service_id AND p.period_start = w.period_start`,
      [tenantId, periods.map((period) => period.serviceId), periods.map((period) => period.periodStart)],
    );
    return new Map(
      rows.map((row) => [
        row.service_id as string,
        Object.assign(new ServiceUsagePeriod(), {
          tenantId,
          serviceId: row.service_id as string,
          periodStart: row.period_start as string,
          periodEnd: row.period_end as string,
          warnedAt: (row.warned_at as Date | null) ?? null,
          reachedAt: (row.reached_at as Date | null) ?? null,
          createdAt: row.created_at as Date,
        }),
      ]),
    );
  }

  /** The period row, created if absent, locked until the transaction ends. */
  async lockPeriod(manager: EntityManager, period: ServiceUsagePeriod): Promise<ServiceUsagePeriod> {
    await manager.createQueryBuilder().insert().into(ServiceUsagePeriod).values(period).orIgnore().execute();
    return manager.findOneOrFail(ServiceUsagePeriod, {
      where: { tenantId: period.tenantId, serviceId: period.serviceId, periodStart: period.periodStart },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async updatePeriod(manager: EntityManager, period: ServiceUsagePeriod): Promise<void> {
    await manager.update(
      ServiceUsagePeriod,
      { tenantId: period.tenantId, serviceId: period.serviceId, periodStart: period.periodStart },
      { warnedAt: period.warnedAt, reachedAt: period.reachedAt },
    );
  }

  async insertTopUp(manager: EntityManager, topUp: ServiceTopUp): Promise<void> {
    await manager.insert(ServiceTopUp, topUp);
  }

  /** Deletes the tenant's periods and top-ups: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM service_top_ups WHERE tenant_id = $1', [tenantId]);
    await manager.query('DELETE FROM service_usage_periods WHERE tenant_id = $1', [tenantId]);
  }
}
