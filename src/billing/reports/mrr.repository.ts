import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { provisioningOrdersTable, servicePlansTable, servicesTable } from '../../provisioning';

/**
 * One group of the MRR statement's answer (bigint sums as text): the opening of the window (month = from − 1) or the
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
 * The MRR report's one statement. A service's plan history (its completed activate and change_plan orders; a service
 * with none is on its plan all along) cut to its active life gives segments, each worth its plan's monthly price from
 * the month it starts in until the month it ends in (a month counts what is active at its last instant). Each
 * segment is a +price step at its first month and a −price step at its end month, so a subscriber's MRR is the
 * running sum of its steps: only the months where something changed are ever materialised, whatever the window.
 * Each step is classified against the subscriber's MRR before it (new, reactivation, expansion, contraction, churn),
 * at the subscriber level (plan_id null) and at the subscriber-and-plan level; steps before the window fold into the
 * opening.
 */
@Injectable()
export class MrrRepository {
  movements(
    manager: EntityManager,
    tenantId: string,
    first: number,
    last: number,
  ): Promise<MrrMovementRow[]> {
    return manager.query(
      `WITH plan_spans AS (
         SELECT o.service_id, o.plan_id, o.completed_at AS valid_from,
                lead(o.completed_at) OVER (PARTITION BY o.service_id ORDER BY o.completed_at, o.id) AS valid_to
           FROM ${provisioningOrdersTable('o')}
          WHERE o.tenant_id = $1 AND o.status = 'completed' AND o.action IN ('activate', 'change_plan')),
       segments AS (
         SELECT v.subscriber_id, COALESCE(ps.plan_id, v.plan_id) AS plan_id,
                ${monthOf('greatest(v.activated_at, ps.valid_from)')} AS first_month,
                ${monthOf('least(v.terminated_at, ps.valid_to)')} AS end_month
           FROM ${servicesTable('v')} LEFT JOIN plan_spans ps ON ps.service_id = v.id
          WHERE v.tenant_id = $1 AND v.activated_at IS NOT NULL),
       steps AS (
         SELECT s.subscriber_id, p.currency, s.plan_id, m.month, SUM(m.sign * ${MONTHLY_PRICE}) AS delta
           FROM segments s
           JOIN ${servicePlansTable('p')} ON p.tenant_id = $1 AND p.id = s.plan_id
           CROSS JOIN LATERAL (VALUES (s.first_month, 1), (s.end_month, -1)) AS m(month, sign)
          WHERE (s.end_month IS NULL OR s.end_month > s.first_month) AND m.month IS NOT NULL AND m.month <= $3::int
          GROUP BY GROUPING SETS ((s.subscriber_id, p.currency, s.plan_id, m.month), (s.subscriber_id, p.currency, m.month))),
       series AS (
         SELECT subscriber_id, currency, plan_id, month, delta,
                SUM(delta) OVER w AS mrr, lead(month) OVER w AS next_month,
                COALESCE(bool_or(true) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), false) AS had_steps
           FROM steps WHERE delta <> 0
         WINDOW w AS (PARTITION BY subscriber_id, currency, plan_id ORDER BY month)),
       moves AS (
         SELECT currency, plan_id, greatest(month, $2::int - 1) AS month, mrr, mrr - delta AS before, had_steps,
                month < $2::int AND (next_month IS NULL OR next_month >= $2::int) AS opening
           FROM series WHERE month < $2::int AND (next_month IS NULL OR next_month >= $2::int) OR month >= $2::int),
       groups AS (
         SELECT currency, plan_id, month,
                SUM(mrr) FILTER (WHERE opening) AS opening_mrr,
                count(*) FILTER (WHERE opening AND mrr > 0)::int AS opening_subscribers,
                SUM(mrr) FILTER (WHERE NOT opening AND before = 0 AND NOT had_steps) AS new_mrr,
                count(*) FILTER (WHERE NOT opening AND before = 0 AND NOT had_steps)::int AS new_subscribers,
                SUM(mrr - before) FILTER (WHERE NOT opening AND before > 0 AND mrr > before) AS expansion_mrr,
                count(*) FILTER (WHERE NOT opening AND before > 0 AND mrr > before)::int AS expansion_subscribers,
                SUM(mrr) FILTER (WHERE NOT opening AND before = 0 AND had_steps) AS reactivation_mrr,
                count(*) FILTER (WHERE NOT opening AND before = 0 AND had_steps)::int AS reactivated_subscribers,
                SUM(before - mrr) FILTER (WHERE NOT opening AND mrr > 0 AND mrr < before) AS contraction_mrr,
                count(*) FILTER (WHERE NOT opening AND mrr > 0 AND mrr < before)::int AS contraction_subscribers,
                SUM(before) FILTER (WHERE NOT opening AND before > 0 AND mrr = 0) AS churned_mrr,
                count(*) FILTER (WHERE NOT opening AND before > 0 AND mrr = 0)::int AS churned_subscribers
           FROM moves GROUP BY currency, plan_id, month)
       SELECT g.currency, g.plan_id, p.name AS plan_name, g.month,
              COALESCE(g.opening_mrr, 0) AS opening_mrr, g.opening_subscribers,
              COALESCE(g.new_mrr, 0) AS new_mrr, g.new_subscribers,
              COALESCE(g.expansion_mrr, 0) AS expansion_mrr, g.expansion_subscribers,
              COALESCE(g.reactivation_mrr, 0) AS reactivation_mrr, g.reactivated_subscribers,
              COALESCE(g.contraction_mrr, 0) AS contraction_mrr, g.contraction_subscribers,
              COALESCE(g.churned_mrr, 0) AS churned_mrr, g.churned_subscribers
         FROM groups g LEFT JOIN ${servicePlansTable('p')} ON p.tenant_id = $1 AND p.id = g.plan_id
        ORDER BY g.currency, g.plan_id NULLS FIRST, g.month`,
      [tenantId, first, last],
    );
  }
}
