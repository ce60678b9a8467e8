import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { servicesTable } from '../../provisioning';
import { subscribersTable } from '../../subscribers';
import { subscriberProfileOn } from '../profiles/billing-profiles.repository';
import { BillingPeriod } from './billing-run.entity';
import { billableService, SERVICE_BILLING_JOIN } from './service-billing.repository';

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

const PENDING_CHARGE = `(SELECT true FROM charges c WHERE c.tenant_id = $1 AND c.subscriber_id = s.id
      AND c.status = 'pending' LIMIT 1)`;

/**
 * The subscriber `s` has something to bill: such a service, or a pending charge. An archived subscriber is billed
 * only its pending charges (a termination's credit recorded before it was archived is issued, not lost).
 */
const HAS_BILLABLE = (
  start: string,
) => `((s.status <> 'archived' AND ((SELECT true FROM ${servicesTable('v')} ${SERVICE_BILLING_JOIN}
      WHERE v.tenant_id = $1 AND v.subscriber_id = s.id AND ${billableService(start)} LIMIT 1)
    OR ${PENDING_CHARGE})) OR (s.status = 'archived' AND ${PENDING_CHARGE}))`;

/** The due subscribers of tenant $1 (previous period from $2, billing day $3). */
const DUE_SQL = `FROM ${subscribersTable('s')}
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
const DUE_BATCH_SQL = `FROM ${subscribersTable('s')}
  JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
  WHERE s.tenant_id = $1 AND s.id > $5 AND p.billing_day = $3::int
    AND ${HAS_BILLABLE('$2')}
    AND (SELECT true FROM billing_periods bp
          WHERE bp.tenant_id = $1 AND bp.subscriber_id = s.id AND bp.period_start = $4::date) IS NULL`;

/**
 * The only place billing_periods (a subscriber's period billed exactly once: the claim a batch wins) is written, and
 * the walk through the subscribers due on a run's day that are not billed for its period yet.
 */
@Injectable()
export class BillingPeriodsRepository {
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
      `SELECT max(w.id) AS last FROM (SELECT s.id FROM ${subscribersTable('s')} WHERE s.tenant_id = $1 AND s.id > $2 ORDER BY s.id LIMIT $3) w`,
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

  /** Deletes every billing_periods row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM billing_periods WHERE tenant_id = $1', [tenantId]);
  }
}
