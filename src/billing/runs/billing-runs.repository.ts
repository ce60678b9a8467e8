import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { isUniqueViolation } from '../../common/errors/postgres-errors';
import { paginate, type PageQueryDto } from '../../common/pagination';
import { subscriberProfileOn } from '../profiles/billing-profiles.repository';
import { BillingPeriod, BillingRun, BillingRunItem, BillingRunStatus } from './billing-run.entity';
import type { AdvanceCharge, PlanInfo, PlanPeriod, ServiceBillingState } from './proration';

/** A subscriber due on a run's day, with the profile it is billed through. */
export interface DueSubscriber {
  subscriberId: string;
  currency: string;
  paymentTermsDays: number;
  billingDay: number;
}

/** A batch's due subscribers and where the walk through the tenant goes on (null: it is over). */
export interface DueBatch {
  subscribers: DueSubscriber[];
  next: string | null;
}

/** How many subscribers, per subscriber of a batch, one batch's scan looks at (billing_days differ). */
const DUE_WINDOW = 4;

/** How a batch takes its subscribers: sharing with concurrent runs, waiting for locked ones, or not locking (dry). */
export type DueLocking = 'skip-locked' | 'wait' | 'none';

/** A service of a due subscriber as the run reads it (services and plans are provisioning's; read here only). */
export interface ServiceRow {
  id: string;
  subscriberId: string;
  planId: string;
  status: string;
  activatedAt: Date | null;
  terminatedAt: Date | null;
  updatedAt: Date;
  /** The service's billing state (service_billing); null until first billed. */
  billedUntil: string | null;
  openCharges: AdvanceCharge[];
}

/**
 * Services with something to bill (`v`, its service_billing row `sb` left-joined; `start`: the earliest day a
 * never-billed service is charged from): active and suspended ones, and ended ones with a charge to true up or days
 * before their termination not billed yet.
 */
const billableService = (start: string) => `(v.status IN ('active', 'suspended')
  OR jsonb_array_length(sb.open_charges) > 0
  OR (v.status = 'terminated' AND v.activated_at IS NOT NULL
      AND (v.terminated_at AT TIME ZONE 'UTC')::date > COALESCE(sb.billed_until, ${start}::date)))`;

const SERVICE_BILLING_JOIN = `LEFT JOIN service_billing sb ON sb.tenant_id = v.tenant_id AND sb.service_id = v.id`;

const PENDING_CHARGE = `(SELECT true FROM charges c WHERE c.tenant_id = $1 AND c.subscriber_id = s.id
      AND c.status = 'pending' LIMIT 1)`;

/**
 * The subscriber `s` has something to bill: such a service, or a pending charge. An archived subscriber is billed
 * only its pending charges (a termination's credit recorded before it was archived is issued, not lost).
 */
const HAS_BILLABLE = (
  start: string,
) => `((s.status <> 'archived' AND ((SELECT true FROM services v ${SERVICE_BILLING_JOIN}
      WHERE v.tenant_id = $1 AND v.subscriber_id = s.id AND ${billableService(start)} LIMIT 1)
    OR ${PENDING_CHARGE})) OR (s.status = 'archived' AND ${PENDING_CHARGE}))`;

/** The due subscribers of tenant $1 (previous period from $2, billing day $3). */
const DUE_SQL = `FROM subscribers s
  JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
  WHERE s.tenant_id = $1 AND p.billing_day = $3::int
    AND ${HAS_BILLABLE('$2')}`;

/** …not yet billed for the period starting $4. */
const NOT_BILLED = `NOT EXISTS (SELECT 1 FROM billing_periods bp
  WHERE bp.tenant_id = $1 AND bp.subscriber_id = s.id AND bp.period_start = $4::date)`;

/**
 * A batch's due subscribers, the same conditions as DUE_SQL and NOT_BILLED written as scalar subqueries: Postgres
 * turns (NOT) EXISTS into a join that reads every billed period and service of the tenant past the cursor before the
 * LIMIT, which made each batch cost in proportion to the run's size; a scalar subquery stays one index probe per
 * subscriber, in the (tenant_id, id) order the batch walks, and the scan stops at the LIMIT.
 */
const DUE_BATCH_SQL = `FROM subscribers s
  JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
  WHERE s.tenant_id = $1 AND s.id > $5 AND p.billing_day = $3::int
    AND ${HAS_BILLABLE('$2')}
    AND (SELECT true FROM billing_periods bp
          WHERE bp.tenant_id = $1 AND bp.subscriber_id = s.id AND bp.period_start = $4::date) IS NULL`;

/**
 * The only place billing_runs, billing_periods, service_billing and billing_run_items are written, and the bill run's
 * reads: due subscribers, their services, plans and plan history (provisioning's tables, read only). Invoices,
 * ledger entries, credits and charges are written by their own repositories.
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
    status: BillingRunStatus | undefined,
    query: PageQueryDto,
  ): Promise<Page<BillingRun>> {
    const qb = manager
      .getRepository(BillingRun)
      .createQueryBuilder('run')
      .where('run.tenantId = :tenantId', { tenantId });
    if (status) {
      qb.andWhere('run.status = :status', { status });
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
         FROM tenants t
        WHERE EXISTS (SELECT 1 FROM services v WHERE v.tenant_id = t.id)
          AND NOT EXISTS (SELECT 1 FROM billing_runs r
                           WHERE r.tenant_id = t.id AND r.as_of >= $1::date AND r.trigger = 'schedule')`,
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

  /** Extends the claim; false when it is no longer this worker's (it ran out and another took the run). */
  async renew(manager: EntityManager, runId: string, leaseId: string, leaseMs: number): Promise<boolean> {
    const [, affected] = await manager.query<[unknown[], number]>(
      `UPDATE billing_runs SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
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

  /** How many subscribers are due on the day and not yet billed for its period. */
  async countDue(
    manager: EntityManager,
    tenantId: string,
    day: { asOf: string; previousStart: string; billingDay: number },
  ): Promise<number> {
    const [row]: { due: number }[] = await manager.query(
      `SELECT count(*)::int AS due ${DUE_SQL} AND ${NOT_BILLED}`,
      [tenantId, day.previousStart, day.billingDay, day.asOf],
    );
    return row.due;
  }

  /** Whether the subscriber was billed for the run of `asOf`. */
  async isBilled(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    asOf: string,
  ): Promise<boolean> {
    return manager.exists(BillingPeriod, { where: { tenantId, subscriberId, periodStart: asOf } });
  }

  /** Records the run's due count, while the claim holds. */
  async setDue(manager: EntityManager, runId: string, leaseId: string, due: number): Promise<void> {
    await manager.query(`UPDATE billing_runs SET subscribers_due = $3 WHERE id = $1 AND lease_id = $2`, [
      runId,
      leaseId,
      due,
    ]);
  }

  /**
   * The next batch of a run's walk through the tenant's subscribers in id order, after `afterId`: up to `limit` due
   * subscribers not yet billed for the period, taken from a window of the next `limit × DUE_WINDOW` subscribers, and
   * where the walk goes on (`next`; null once no subscriber is left past `afterId`). `skip-locked` leaves those a
   * concurrent batch holds (two runs share the work); `wait` waits for them (the last pass, so none is left behind);
   * `none` locks nothing (a dry run).
   *
   * The window bounds the scan whatever the planner estimates: it cannot judge how many subscribers the subqueries
   * let through, and without a bound it chose to read and sort the whole tenant for each batch of 500.
   */
  async due(
    manager: EntityManager,
    tenantId: string,
    day: { asOf: string; previousStart: string; billingDay: number },
    afterId: string,
    limit: number,
    locking: DueLocking,
  ): Promise<DueBatch> {
    const [window]: { last: string | null }[] = await manager.query(
      `SELECT max(id) AS last FROM (SELECT id FROM subscribers WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3) w`,
      [tenantId, afterId, limit * DUE_WINDOW],
    );
    if (window.last === null) {
      return { subscribers: [], next: null };
    }
    const lock =
      locking === 'none' ? '' : locking === 'wait' ? 'FOR UPDATE OF s' : 'FOR UPDATE OF s SKIP LOCKED';
    const rows: { id: string; currency: string; payment_terms_days: number; billing_day: number }[] =
      await manager.query(
        `SELECT s.id, p.currency, p.payment_terms_days, p.billing_day ${DUE_BATCH_SQL} AND s.id <= $7
        ORDER BY s.id LIMIT $6 ${lock}`,
        [tenantId, day.previousStart, day.billingDay, day.asOf, afterId, limit, window.last],
      );
    return {
      subscribers: rows.map((row) => ({
        subscriberId: row.id,
        currency: row.currency,
        paymentTermsDays: row.payment_terms_days,
        billingDay: row.billing_day,
      })),
      next: rows.length === limit ? rows[rows.length - 1].id : window.last,
    };
  }

  /** The services of these subscribers that bill or billed during the previous period. */
  async services(
    manager: EntityManager,
    tenantId: string,
    subscriberIds: string[],
    previousStart: string,
  ): Promise<ServiceRow[]> {
    const rows: Record<string, unknown>[] = await manager.query(
      `SELECT v.id, v.subscriber_id, v.plan_id, v.status, v.activated_at, v.terminated_at, v.updated_at,
              to_char(sb.billed_until, 'YYYY-MM-DD') AS billed_until, sb.open_charges
         FROM services v ${SERVICE_BILLING_JOIN}
        WHERE v.tenant_id = $1 AND v.subscriber_id = ANY($2::text[]) AND ${billableService('$3')}
        ORDER BY v.created_at, v.id`,
      [tenantId, subscriberIds, previousStart],
    );
    return rows.map(serviceRow);
  }

  /** These services (ended ones, settled at their termination), whatever they have left to bill. */
  async servicesByIds(manager: EntityManager, tenantId: string, serviceIds: string[]): Promise<ServiceRow[]> {
    const rows: Record<string, unknown>[] = await manager.query(
      `SELECT v.id, v.subscriber_id, v.plan_id, v.status, v.activated_at, v.terminated_at, v.updated_at,
              to_char(sb.billed_until, 'YYYY-MM-DD') AS billed_until, sb.open_charges
         FROM services v ${SERVICE_BILLING_JOIN}
        WHERE v.tenant_id = $1 AND v.id = ANY($2::text[])
        ORDER BY v.id`,
      [tenantId, serviceIds],
    );
    return rows.map(serviceRow);
  }

  /** Records how far each service is billed (one statement). */
  async saveStates(
    manager: EntityManager,
    tenantId: string,
    states: (ServiceBillingState & { subscriberId: string })[],
    at: Date,
  ): Promise<void> {
    if (states.length === 0) {
      return;
    }
    await manager.query(
      `INSERT INTO service_billing (tenant_id, service_id, subscriber_id, billed_until, open_charges, updated_at)
       SELECT $1, x.service_id, x.subscriber_id, x.billed_until, x.open_charges, $3
         FROM jsonb_to_recordset($2::jsonb) AS x(service_id text, subscriber_id text, billed_until date, open_charges jsonb)
       ON CONFLICT (tenant_id, service_id) DO UPDATE
         SET billed_until = EXCLUDED.billed_until, open_charges = EXCLUDED.open_charges, updated_at = EXCLUDED.updated_at`,
      [
        tenantId,
        JSON.stringify(
          states.map((state) => ({
            service_id: state.serviceId,
            subscriber_id: state.subscriberId,
            billed_until: state.billedUntil,
            open_charges: state.openCharges,
          })),
        ),
        at,
      ],
    );
  }

  /** What a run issued per subscriber (a dry run's rewritten whenever it starts over). */
  async insertItems(manager: EntityManager, items: BillingRunItem[]): Promise<void> {
    if (items.length > 0) {
      await manager.insert(BillingRunItem, items);
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

  /** The plans set on these services (completed activate and change_plan orders), oldest first. */
  async planChanges(
    manager: EntityManager,
    tenantId: string,
    serviceIds: string[],
  ): Promise<{ serviceId: string; planId: string; at: Date }[]> {
    if (serviceIds.length === 0) {
      return [];
    }
    const rows: { service_id: string; plan_id: string; completed_at: Date }[] = await manager.query(
      `SELECT service_id, plan_id, completed_at FROM provisioning_orders
        WHERE tenant_id = $1 AND service_id = ANY($2::text[]) AND status = 'completed'
          AND action IN ('activate', 'change_plan')
        ORDER BY completed_at, id`,
      [tenantId, serviceIds],
    );
    return rows.map((row) => ({ serviceId: row.service_id, planId: row.plan_id, at: row.completed_at }));
  }

  async plans(manager: EntityManager, tenantId: string, planIds: string[]): Promise<PlanInfo[]> {
    const rows: { id: string; name: string; price: string; currency: string; billing_period: PlanPeriod }[] =
      await manager.query(
        `SELECT id, name, price, currency, billing_period FROM service_plans WHERE tenant_id = $1 AND id = ANY($2::text[])`,
        [tenantId, planIds],
      );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      price: Number(row.price),
      currency: row.currency,
      billingPeriod: row.billing_period,
    }));
  }

  /**
   * Claims the periods: inserts what is not there yet and answers the subscribers whose row this statement wrote. A
   * row a concurrent batch wrote first (committed, or committing while this waits) is left to it.
   */
  async claimPeriods(manager: EntityManager, periods: BillingPeriod[]): Promise<Set<string>> {
    if (periods.length === 0) {
      return new Set();
    }
    const rows: { subscriber_id: string }[] = await manager.query(
      `INSERT INTO billing_periods (tenant_id, subscriber_id, period_start, period_end, run_id, invoice_id, credit_id, charges, created_at)
       SELECT tenant_id, subscriber_id, period_start, period_end, run_id, invoice_id, credit_id, charges, created_at
         FROM jsonb_to_recordset($1::jsonb) AS x(tenant_id text, subscriber_id text, period_start date, period_end date,
              run_id text, invoice_id text, credit_id text, charges jsonb, created_at timestamptz)
       ON CONFLICT DO NOTHING RETURNING subscriber_id`,
      [
        JSON.stringify(
          periods.map((period) => ({
            tenant_id: period.tenantId,
            subscriber_id: period.subscriberId,
            period_start: period.periodStart,
            period_end: period.periodEnd,
            run_id: period.runId,
            invoice_id: period.invoiceId,
            credit_id: period.creditId,
            charges: period.charges,
            created_at: period.createdAt,
          })),
        ),
      ],
    );
    return new Set(rows.map((row) => row.subscriber_id));
  }
}

function serviceRow(row: Record<string, unknown>): ServiceRow {
  return {
    id: row.id as string,
    subscriberId: row.subscriber_id as string,
    planId: row.plan_id as string,
    status: row.status as string,
    activatedAt: row.activated_at as Date | null,
    terminatedAt: row.terminated_at as Date | null,
    updatedAt: row.updated_at as Date,
    billedUntil: (row.billed_until as string | null) ?? null,
    openCharges: (row.open_charges as AdvanceCharge[] | null) ?? [],
  };
}
