import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { provisioningOrdersTable, servicePlansTable, servicesTable } from '../../provisioning';

/**
 * One group of the MRR report's answer (bigint sums as text): the opening of the window (month = from − 1) or the
 * movements of one month, per currency, and per plan too when plan_id is set (null: the subscriber-level bridge).
 */
export interface MrrMovementRow {
  currency: string;
  plan_id: string | null;
  plan_name: string | null;
  /** Months since year 0 (year × 12 + month − 1), UTC. */
  month: number;
  opening_mrr: string;
  opening_subscribers: number;
  new_mrr: string;
  new_subscribers: number;
  expansion_mrr: string;
  expansion_subscribers: number;
  reactivation_mrr: string;
  reactivated_subscribers: number;
  contraction_mrr: string;
  contraction_subscribers: number;
  churned_mrr: string;
  churned_subscribers: number;
}

/** The UTC month index of a timestamp: year × 12 + month − 1. */
const monthOf = (column: string) =>
  `(extract(year FROM ${column} AT TIME ZONE 'UTC')::int * 12 + extract(month FROM ${column} AT TIME ZONE 'UTC')::int - 1)`;

/** A plan's price per month, half up to the minor unit (docs/reports.md, "MRR"). */
const MONTHLY_PRICE = `CASE p.billing_period WHEN 'quarterly' THEN (2 * p.price + 3) / 6
  WHEN 'yearly' THEN (2 * p.price + 12) / 24 ELSE p.price END`;

/**
 * The MRR steps of the services whose subscriber matches `subscribers` (a condition on `v.subscriber_id`), as rows of
 * mrr_series (tenant $1). A service's plan history (its completed activate and change_plan orders; a service with
 * none is on its plan all along) cut to its active life gives segments, each worth its plan's monthly price from the
 * month it starts in until the month it ends in (a month counts what is active at its last instant). Each segment is
 * a +price step at its first month and a −price step at its end month, so a subscriber's MRR is the running sum of
 * its steps: only the months where something changed are materialised. Each month's step is kept with the MRR after
 * it and whether the subscriber had a step before (new or reactivation), at the subscriber level (plan_key '') and at
 * the subscriber-and-plan level. A subscriber's rows depend on its own services only, so they are computed for the
 * subscribers a change touches, never for the whole tenant.
 */
const seriesOf = (subscribers: string) => `WITH owned AS (
     SELECT v.id, v.subscriber_id, v.plan_id, v.activated_at, v.terminated_at
       FROM ${servicesTable('v')}
      WHERE v.tenant_id = $1 AND v.activated_at IS NOT NULL AND ${subscribers}),
   plan_spans AS (
     SELECT o.service_id, o.plan_id, o.completed_at AS valid_from,
            lead(o.completed_at) OVER (PARTITION BY o.service_id ORDER BY o.completed_at, o.id) AS valid_to
       FROM ${provisioningOrdersTable('o')}
      WHERE o.tenant_id = $1 AND o.service_id IN (SELECT id FROM owned) AND o.status = 'completed'
        AND o.action IN ('activate', 'change_plan')),
   segments AS (
     SELECT v.subscriber_id, COALESCE(ps.plan_id, v.plan_id) AS plan_id,
            ${monthOf('greatest(v.activated_at, ps.valid_from)')} AS first_month,
            ${monthOf('least(v.terminated_at, ps.valid_to)')} AS end_month
       FROM owned v LEFT JOIN plan_spans ps ON ps.service_id = v.id),
   steps AS (
     SELECT s.subscriber_id, p.currency, s.plan_id, m.month, SUM(m.sign * ${MONTHLY_PRICE}) AS delta
       FROM segments s
       JOIN ${servicePlansTable('p')} ON p.tenant_id = $1 AND p.id = s.plan_id
       CROSS JOIN LATERAL (VALUES (s.first_month, 1), (s.end_month, -1)) AS m(month, sign)
      WHERE (s.end_month IS NULL OR s.end_month > s.first_month) AND m.month IS NOT NULL
      GROUP BY GROUPING SETS ((s.subscriber_id, p.currency, s.plan_id, m.month), (s.subscriber_id, p.currency, m.month)))
   SELECT $1 AS tenant_id, subscriber_id, currency, COALESCE(plan_id, '') AS plan_key, month, delta,
          SUM(delta) OVER w AS mrr,
          COALESCE(bool_or(true) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), false) AS had_steps
     FROM steps WHERE delta <> 0
   WINDOW w AS (PARTITION BY subscriber_id, currency, plan_id ORDER BY month)`;

const SERIES_COLUMNS = 'tenant_id, subscriber_id, currency, plan_key, month, delta, mrr, had_steps';

/**
 * A month's rollup of series rows `r` (each with `sign`: +1 added, −1 removed): how many there are, the change of MRR
 * and of paying subscribers, and each row classified against the MRR before it (mrr − delta).
 */
const ROLLUP = `SELECT r.tenant_id, r.currency, r.plan_key, r.month, SUM(r.sign)::int AS steps,
          SUM(r.sign * r.delta) AS mrr_change,
          SUM(r.sign * ((r.mrr > 0)::int - (r.mrr - r.delta > 0)::int))::int AS subscriber_change,
          COALESCE(SUM(r.sign * r.mrr) FILTER (WHERE r.mrr = r.delta AND NOT r.had_steps), 0) AS new_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr = r.delta AND NOT r.had_steps), 0)::int AS new_subscribers,
          COALESCE(SUM(r.sign * r.delta) FILTER (WHERE r.mrr > r.delta AND r.delta > 0), 0) AS expansion_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr > r.delta AND r.delta > 0), 0)::int AS expansion_subscribers,
          COALESCE(SUM(r.sign * r.mrr) FILTER (WHERE r.mrr = r.delta AND r.had_steps), 0) AS reactivation_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr = r.delta AND r.had_steps), 0)::int AS reactivated_subscribers,
          COALESCE(SUM(-r.sign * r.delta) FILTER (WHERE r.mrr > 0 AND r.delta < 0), 0) AS contraction_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr > 0 AND r.delta < 0), 0)::int AS contraction_subscribers,
          COALESCE(SUM(-r.sign * r.delta) FILTER (WHERE r.mrr = 0 AND r.delta < 0), 0) AS churned_mrr,
          COALESCE(SUM(r.sign) FILTER (WHERE r.mrr = 0 AND r.delta < 0), 0)::int AS churned_subscribers
     FROM changed r GROUP BY r.tenant_id, r.currency, r.plan_key, r.month
    ORDER BY r.tenant_id, r.currency, r.plan_key, r.month`;

const ROLLUP_FIELDS = [
  'steps',
  'mrr_change',
  'subscriber_change',
  'new_mrr',
  'new_subscribers',
  'expansion_mrr',
  'expansion_subscribers',
  'reactivation_mrr',
  'reactivated_subscribers',
  'contraction_mrr',
  'contraction_subscribers',
  'churned_mrr',
  'churned_subscribers',
];

/** Adds a rollup of `rows` to mrr_months (each field summed into the month's row). */
const ADD_TO_MONTHS = `INSERT INTO mrr_months (tenant_id, currency, plan_key, month, ${ROLLUP_FIELDS.join(', ')})
   ${ROLLUP}
   ON CONFLICT (tenant_id, currency, plan_key, month) DO UPDATE SET
     ${ROLLUP_FIELDS.map((field) => `${field} = mrr_months.${field} + EXCLUDED.${field}`).join(', ')}`;

/**
 * The statements that rebuild one tenant's ($1) MRR rows from its services and orders: the migration's backfill for
 * every tenant, and what the bench runs after seeding services straight into the tables.
 */
export const MRR_REBUILD_STATEMENTS = [
  'DELETE FROM mrr_months WHERE tenant_id = $1',
  'DELETE FROM mrr_series WHERE tenant_id = $1',
  `INSERT INTO mrr_series (${SERIES_COLUMNS}) ${seriesOf('true')}`,
  `WITH changed AS (SELECT s.*, 1 AS sign FROM mrr_series s WHERE s.tenant_id = $1) ${ADD_TO_MONTHS}`,
];

/**
 * MRR as data (docs/reports.md, "How the reports are kept"): mrr_series, each subscriber's MRR steps (a row per
 * subscriber, currency, plan or not, and month it changed in), and mrr_months, their per-tenant monthly rollup (the
 * steps classified as the report's movements). Both are written only here, in the transaction that changes what they
 * derive from: a completed activate, change_plan or terminate order (ServiceLifecycle, registered by BillingModule),
 * or a plan's new price.
 */
@Injectable()
export class MrrRepository {
  /** A test tenant's MRR rows, its test clock deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM mrr_months WHERE tenant_id = $1', [tenantId]);
    await manager.query('DELETE FROM mrr_series WHERE tenant_id = $1', [tenantId]);
  }

  /**
   * Recomputes the MRR steps of `subscriberIds` from their services and plan history, and moves the rollup by the
   * difference. Each subscriber is held by a transaction-scoped advisory lock first (in id order), so two
   * transactions never recompute one subscriber from each other's stale rows.
   */
  async refresh(manager: EntityManager, tenantId: string, subscriberIds: string[]): Promise<void> {
    const ids = [...new Set(subscriberIds)].sort();
    if (ids.length === 0) {
      return;
    }
    await manager.query(
      `SELECT pg_advisory_xact_lock(hashtextextended('mrr/' || $1 || '/' || id, 0))
         FROM (SELECT id FROM unnest($2::text[]) AS id ORDER BY id) AS ids`,
      [tenantId, ids],
    );
    await manager.query(
      `WITH changed AS (
         DELETE FROM mrr_series WHERE tenant_id = $1 AND subscriber_id = ANY($2::text[])
         RETURNING ${SERIES_COLUMNS}, -1 AS sign)
       ${ADD_TO_MONTHS}`,
      [tenantId, ids],
    );
    await manager.query(
      `WITH changed AS (
         INSERT INTO mrr_series (${SERIES_COLUMNS}) ${seriesOf('v.subscriber_id = ANY($2::text[])')}
         RETURNING ${SERIES_COLUMNS}, 1 AS sign)
       ${ADD_TO_MONTHS}`,
      [tenantId, ids],
    );
  }

  /** The subscribers with an MRR step on `planId` (their MRR moves with its price). */
  async subscribersOnPlan(manager: EntityManager, tenantId: string, planId: string): Promise<string[]> {
    const rows: { subscriber_id: string }[] = await manager.query(
      'SELECT DISTINCT subscriber_id FROM mrr_series WHERE tenant_id = $1 AND plan_key = $2',
      [tenantId, planId],
    );
    return rows.map((row) => row.subscriber_id);
  }

  /**
   * The report's read: the opening of the window (the rollup of every month before `first`, for each series that has
   * a step by then) and the movements of each month from `first` to `last`, from mrr_months alone.
   */
  movements(
    manager: EntityManager,
    tenantId: string,
    first: number,
    last: number,
  ): Promise<MrrMovementRow[]> {
    return manager.query(
      `WITH opening AS (
         SELECT currency, plan_key, $2::int - 1 AS month, SUM(mrr_change) AS opening_mrr,
                SUM(subscriber_change)::int AS opening_subscribers, 0 AS new_mrr, 0 AS new_subscribers,
                0 AS expansion_mrr, 0 AS expansion_subscribers, 0 AS reactivation_mrr, 0 AS reactivated_subscribers,
                0 AS contraction_mrr, 0 AS contraction_subscribers, 0 AS churned_mrr, 0 AS churned_subscribers
           FROM mrr_months WHERE tenant_id = $1 AND month < $2::int
          GROUP BY currency, plan_key HAVING SUM(steps) > 0),
       moves AS (
         SELECT currency, plan_key, month, 0 AS opening_mrr, 0 AS opening_subscribers, new_mrr, new_subscribers,
                expansion_mrr, expansion_subscribers, reactivation_mrr, reactivated_subscribers, contraction_mrr,
                contraction_subscribers, churned_mrr, churned_subscribers
           FROM mrr_months WHERE tenant_id = $1 AND month >= $2::int AND month <= $3::int AND steps > 0),
       groups AS (SELECT * FROM opening UNION ALL SELECT * FROM moves)
       SELECT g.currency, NULLIF(g.plan_key, '') AS plan_id, p.name AS plan_name, g.month,
              g.opening_mrr::text AS opening_mrr, g.opening_subscribers::int AS opening_subscribers,
              g.new_mrr::text AS new_mrr, g.new_subscribers::int AS new_subscribers,
              g.expansion_mrr::text AS expansion_mrr, g.expansion_subscribers::int AS expansion_subscribers,
              g.reactivation_mrr::text AS reactivation_mrr, g.reactivated_subscribers::int AS reactivated_subscribers,
              g.contraction_mrr::text AS contraction_mrr, g.contraction_subscribers::int AS contraction_subscribers,
              g.churned_mrr::text AS churned_mrr, g.churned_subscribers::int AS churned_subscribers
         FROM groups g LEFT JOIN ${servicePlansTable('p')} ON p.tenant_id = $1 AND p.id = g.plan_key
        ORDER BY g.currency, NULLIF(g.plan_key, '') NULLS FIRST, g.month`,
      [tenantId, first, last],
    );
  }
}
