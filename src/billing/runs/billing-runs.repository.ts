import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { isUniqueViolation } from '../../common/errors/postgres-errors';
import { paginate, type PageQueryDto } from '../../common/pagination';
import { liveTenant, tenantsTable } from '../../gateway';
import { servicesTable } from '../../provisioning';
import { BillingRun, BillingRunItem, BillingRunStatus, BillingRunTrigger } from './billing-run.entity';
import { recordsetInsert } from '../../database/entity-columns';

/** A batch's items in one statement with one parameter (a query builder binds one per column and row). */
const INSERT_ITEMS = recordsetInsert(BillingRunItem, 'billing_run_items');

/**
 * The only place billing_runs and billing_run_items are written: a run, its claim by a worker, and what it issued per
 * subscriber. The periods it bills are billing-periods.repository.ts's, the services' billing state
 * service-billing.repository.ts's; invoices, ledger entries, credits and charges are written by their own
 * repositories.
 */
@Injectable()
export class BillingRunsRepository {
  async insert(manager: EntityManager, run: BillingRun): Promise<void> {
    await manager.insert(BillingRun, run);
  }

  /** A scheduled run for the day unless the tenant has one; answers whether it was created. */
  async insertScheduled(manager: EntityManager, run: BillingRun): Promise<boolean> {
    try {
      await manager.insert(BillingRun, run);
      return true;
    } catch (error) {
      if (isUniqueViolation(error, 'uq_billing_runs_scheduled_day')) {
        return false;
      }
      throw error;
    }
  }

  /** The tenant's scheduled run of `day`, if one was made. */
  scheduledOn(manager: EntityManager, tenantId: string, day: string): Promise<BillingRun | null> {
    return manager.findOneBy(BillingRun, { tenantId, asOf: day, trigger: BillingRunTrigger.Schedule });
  }

  findById(manager: EntityManager, tenantId: string, id: string): Promise<BillingRun | null> {
    return manager.findOneBy(BillingRun, { tenantId, id });
  }

  async getById(manager: EntityManager, tenantId: string, id: string): Promise<BillingRun> {
    const run = await this.findById(manager, tenantId, id);
    if (!run) {
      throw ApiError.notFound('billing run', id);
    }
    return run;
  }

  page(
    manager: EntityManager,
    tenantId: string,
    statuses: BillingRunStatus[] | undefined,
    query: PageQueryDto,
  ): Promise<Page<BillingRun>> {
    const qb = manager
      .getRepository(BillingRun)
      .createQueryBuilder('run')
      .where('run.tenantId = :tenantId', { tenantId });
    if (statuses) {
      qb.andWhere('run.status IN (:...statuses)', { statuses });
    }
    return paginate(qb, query);
  }

  /**
   * The scheduler's work up to `today`: per tenant with services, the day after its last scheduled run (or `today`
   * when it never had one), so days a stopped server missed are run too, oldest first.
   */
  async scheduleFrom(
    manager: EntityManager,
    today: string,
  ): Promise<{ tenantId: string; from: string; billingDays: number[] }[]> {
    const rows: { id: string; from_day: string; billing_days: number[] | null }[] = await manager.query(
      `SELECT t.id, to_char(COALESCE((SELECT max(r.as_of) + 1 FROM billing_runs r
                                       WHERE r.tenant_id = t.id AND r.trigger = 'schedule'), $1::date), 'YYYY-MM-DD') AS from_day,
              (SELECT array_agg(DISTINCT p.billing_day) FROM billing_profiles p WHERE p.tenant_id = t.id) AS billing_days
         FROM ${tenantsTable('t')}
        WHERE EXISTS (SELECT 1 FROM ${servicesTable('v')} WHERE v.tenant_id = t.id)
          AND NOT EXISTS (SELECT 1 FROM billing_runs r
                           WHERE r.tenant_id = t.id AND r.as_of >= $1::date AND r.trigger = 'schedule')
          AND ${liveTenant('t.id')}`,
      [today],
    );
    return rows.map((row) => ({
      tenantId: row.id,
      from: row.from_day,
      billingDays: (row.billing_days ?? []).map(Number),
    }));
  }

  /** Takes one running run whose claim is free or ran out, for `leaseMs` by the database's clock. */
  async claim(manager: EntityManager, leaseId: string, leaseMs: number): Promise<BillingRun | null> {
    const [rows] = await manager.query<[{ id: string; tenant_id: string }[], number]>(
      `UPDATE billing_runs r SET lease_id = $1, lease_until = now() + make_interval(secs => $2::float8 / 1000)
        WHERE r.id = (SELECT id FROM billing_runs WHERE status = 'running'
                        AND (lease_until IS NULL OR lease_until < now())
                      ORDER BY created_at, as_of, id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING r.id, r.tenant_id`,
      [leaseId, leaseMs],
    );
    return rows.length === 0 ? null : this.findById(manager, rows[0].tenant_id, rows[0].id);
  }

  /**
   * Extends the claim; false when it is no longer this worker's (it ran out and another took the run). From the
   * statement's own time (clock_timestamp), not its transaction's start (now()): a batch renews it inside its
   * transaction, which began while the batch before it was still writing.
   */
  async renew(manager: EntityManager, runId: string, leaseId: string, leaseMs: number): Promise<boolean> {
    const [, affected] = await manager.query<[unknown[], number]>(
      `UPDATE billing_runs SET lease_until = clock_timestamp() + make_interval(secs => $3::float8 / 1000)
        WHERE id = $1 AND lease_id = $2 AND status = 'running'`,
      [runId, leaseId, leaseMs],
    );
    return affected === 1;
  }

  /** The run, locked, if this worker's claim still holds. */
  lockClaimed(manager: EntityManager, runId: string, leaseId: string): Promise<BillingRun | null> {
    return manager
      .getRepository(BillingRun)
      .createQueryBuilder('run')
      .setLock('pessimistic_write')
      .where('run.id = :runId AND run.leaseId = :leaseId', { runId, leaseId })
      .getOne();
  }

  async update(manager: EntityManager, run: BillingRun): Promise<void> {
    const { tenantId, id, createdAt, ...changes } = run;
    void createdAt;
    await manager.update(BillingRun, { tenantId, id }, changes);
  }

  /** Records the run's due count, while the claim holds. */
  async setDue(manager: EntityManager, runId: string, leaseId: string, due: number): Promise<void> {
    await manager.query(`UPDATE billing_runs SET subscribers_due = $3 WHERE id = $1 AND lease_id = $2`, [
      runId,
      leaseId,
      due,
    ]);
  }

  /** What a run issued per subscriber (a dry run's rewritten whenever it starts over). */
  async insertItems(manager: EntityManager, items: BillingRunItem[]): Promise<void> {
    if (items.length > 0) {
      await manager.query(INSERT_ITEMS.sql, INSERT_ITEMS.params(items));
    }
  }

  async deleteItems(manager: EntityManager, runId: string): Promise<void> {
    await manager.delete(BillingRunItem, { runId });
  }

  itemsPage(
    manager: EntityManager,
    tenantId: string,
    runId: string,
    query: PageQueryDto,
  ): Promise<Page<BillingRunItem>> {
    const qb = manager
      .getRepository(BillingRunItem)
      .createQueryBuilder('item')
      .where('item.tenantId = :tenantId AND item.runId = :runId', { tenantId, runId });
    return paginate(qb, query, 'oldest');
  }

  /** Deletes every row of the tenant in billing_run_items, billing_runs, in that order: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['billing_run_items', 'billing_runs']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
