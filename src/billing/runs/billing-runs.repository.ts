import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { isUniqueViolation } from '../../common/errors/postgres-errors';
import { paginate, type PageQueryDto } from '../../common/pagination';
import { recordsetInsert } from '../../database/entity-columns';
import { Invoice } from '../invoices/invoice.entity';
import { Transaction } from '../transactions/transaction.entity';
import type { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { BillingPeriod, BillingRun, BillingRunStatus } from './billing-run.entity';
import type { PlanInfo, PlanPeriod } from './proration';

/** A subscriber due on a run's day, with the profile it is billed through. */
export interface DueSubscriber {
  subscriberId: string;
  currency: string;
  paymentTermsDays: number;
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
}

export interface LedgerRow {
  id: string;
  tenantId: string;
  subscriberId: string;
  currency: string;
  type: LedgerEntryType;
  amount: number;
  sourceId: string;
  createdAt: Date;
}

/** Services that bill, or billed during the previous period (`start`: its first day's parameter). */
const billableService = (
  start: string,
) => `(v.status IN ('active', 'suspended') OR v.terminated_at >= ${start}::date OR
  (v.status = 'terminated' AND v.activated_at >= ${start}::date))`;

/** The due subscribers of tenant $1 (previous period from $2, billing day $3). */
const DUE_SQL = `FROM subscribers s
  JOIN billing_profiles p ON p.tenant_id = s.tenant_id AND p.id = COALESCE(s.billing_profile_id,
    (SELECT d.id FROM billing_profiles d WHERE d.tenant_id = $1 AND d.is_default))
  WHERE s.tenant_id = $1 AND s.status <> 'archived' AND p.billing_day = $3::int
    AND EXISTS (SELECT 1 FROM services v WHERE v.tenant_id = $1 AND v.subscriber_id = s.id AND ${billableService('$2')})`;

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
  JOIN billing_profiles p ON p.tenant_id = s.tenant_id AND p.id = COALESCE(s.billing_profile_id,
    (SELECT d.id FROM billing_profiles d WHERE d.tenant_id = $1 AND d.is_default))
  WHERE s.tenant_id = $1 AND s.id > $5 AND s.status <> 'archived' AND p.billing_day = $3::int
    AND (SELECT true FROM services v WHERE v.tenant_id = $1 AND v.subscriber_id = s.id AND ${billableService('$2')}
          LIMIT 1)
    AND (SELECT true FROM billing_periods bp
          WHERE bp.tenant_id = $1 AND bp.subscriber_id = s.id AND bp.period_start = $4::date) IS NULL`;

const INSERT_INVOICES = recordsetInsert(Invoice, 'invoices');
const INSERT_CREDITS = recordsetInsert(Transaction, 'transactions');

/**
 * The only place billing_runs and billing_periods are written, and the bill run's reads: due subscribers, their
 * services, plans and plan history (provisioning's tables, read only), and the batch's set-based writes.
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

  /** Tenants with services and no scheduled run on `day` yet: the scheduler's work. */
  /** Tenants with services and no scheduled run on `day` yet: the scheduler's work (one probe per tenant, by index). */
  async tenantsToSchedule(manager: EntityManager, day: string): Promise<string[]> {
    const rows: { id: string }[] = await manager.query(
      `SELECT t.id FROM tenants t
        WHERE EXISTS (SELECT 1 FROM services v WHERE v.tenant_id = t.id)
          AND NOT EXISTS (SELECT 1 FROM billing_runs r
                           WHERE r.tenant_id = t.id AND r.as_of = $1::date AND r.trigger = 'schedule')`,
      [day],
    );
    return rows.map((row) => row.id);
  }

  /** Takes one running run whose claim is free or ran out, for `leaseMs` by the database's clock. */
  async claim(manager: EntityManager, leaseId: string, leaseMs: number): Promise<BillingRun | null> {
    const [rows] = await manager.query<[{ id: string; tenant_id: string }[], number]>(
      `UPDATE billing_runs r SET lease_id = $1, lease_until = now() + make_interval(secs => $2::float8 / 1000)
        WHERE r.id = (SELECT id FROM billing_runs WHERE status = 'running'
                        AND (lease_until IS NULL OR lease_until < now())
                      ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
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
    const rows: { id: string; currency: string; payment_terms_days: number }[] = await manager.query(
      `SELECT s.id, p.currency, p.payment_terms_days ${DUE_BATCH_SQL} AND s.id <= $7
        ORDER BY s.id LIMIT $6 ${lock}`,
      [tenantId, day.previousStart, day.billingDay, day.asOf, afterId, limit, window.last],
    );
    return {
      subscribers: rows.map((row) => ({
        subscriberId: row.id,
        currency: row.currency,
        paymentTermsDays: row.payment_terms_days,
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
      `SELECT v.id, v.subscriber_id, v.plan_id, v.status, v.activated_at, v.terminated_at, v.updated_at
         FROM services v
        WHERE v.tenant_id = $1 AND v.subscriber_id = ANY($2::text[]) AND ${billableService('$3')}
        ORDER BY v.created_at, v.id`,
      [tenantId, subscriberIds, previousStart],
    );
    return rows.map((row) => ({
      id: row.id as string,
      subscriberId: row.subscriber_id as string,
      planId: row.plan_id as string,
      status: row.status as string,
      activatedAt: row.activated_at as Date | null,
      terminatedAt: row.terminated_at as Date | null,
      updatedAt: row.updated_at as Date,
    }));
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

  /** What the previous period's run charged these subscribers in advance. */
  async previousPeriods(
    manager: EntityManager,
    tenantId: string,
    subscriberIds: string[],
    previousStart: string,
  ): Promise<BillingPeriod[]> {
    return manager
      .getRepository(BillingPeriod)
      .createQueryBuilder('bp')
      .where('bp.tenantId = :tenantId AND bp.subscriberId = ANY(:ids) AND bp.periodStart = :previousStart', {
        tenantId,
        ids: subscriberIds,
        previousStart,
      })
      .getMany();
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

  /** Reserves `count` invoice numbers of the tenant at once; answers the first. */
  async reserveInvoiceNumbers(manager: EntityManager, tenantId: string, count: number): Promise<number> {
    const [row]: { last_number: number }[] = await manager.query(
      `INSERT INTO invoice_counters (tenant_id, last_number) VALUES ($1, $2)
       ON CONFLICT (tenant_id) DO UPDATE SET last_number = invoice_counters.last_number + EXCLUDED.last_number
       RETURNING last_number`,
      [tenantId, count],
    );
    return row.last_number - count + 1;
  }

  /** The batch's invoices, one statement. */
  async insertInvoices(manager: EntityManager, invoices: Invoice[]): Promise<void> {
    if (invoices.length > 0) {
      await manager.query(INSERT_INVOICES.sql, INSERT_INVOICES.params(invoices));
    }
  }

  /**
   * The batch's ledger entries and their balances, one statement: each balance row is raised by an upsert (one per
   * subscriber and currency in a batch) and its entry records the balance after. A balance past MAX_AMOUNT breaks the
   * balance's CHECK and the batch (then billed one subscriber at a time, the one at fault reported).
   */
  async postMany(manager: EntityManager, entries: LedgerRow[]): Promise<void> {
    if (entries.length === 0) {
      return;
    }
    await manager.query(
      `WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id text, tenant_id text, subscriber_id text, currency text,
           type text, amount bigint, source_id text, created_at timestamptz)),
       balance AS (
         INSERT INTO subscriber_balances (tenant_id, subscriber_id, currency, balance)
         SELECT tenant_id, subscriber_id, currency, amount FROM input
         ON CONFLICT (tenant_id, subscriber_id, currency)
           DO UPDATE SET balance = subscriber_balances.balance + EXCLUDED.balance
         RETURNING tenant_id, subscriber_id, currency, balance)
       INSERT INTO ledger_entries (tenant_id, id, subscriber_id, currency, type, amount, balance_after, source_id, created_at)
       SELECT i.tenant_id, i.id, i.subscriber_id, i.currency, i.type, i.amount, b.balance, i.source_id, i.created_at
         FROM input i JOIN balance b USING (tenant_id, subscriber_id, currency)`,
      [
        JSON.stringify(
          entries.map((entry) => ({
            id: entry.id,
            tenant_id: entry.tenantId,
            subscriber_id: entry.subscriberId,
            currency: entry.currency,
            type: entry.type,
            amount: entry.amount,
            source_id: entry.sourceId,
            created_at: entry.createdAt,
          })),
        ),
      ],
    );
  }

  /** The credits of the batch (lines netting below zero), as credit transactions. */
  async insertCredits(manager: EntityManager, credits: Transaction[]): Promise<void> {
    if (credits.length > 0) {
      await manager.query(INSERT_CREDITS.sql, INSERT_CREDITS.params(credits));
    }
  }
}
