import { addMonths, daysBetween } from '../../common/dates';

/**
 * Which plan a service is on each day and what a plan's days cost, as pure functions of dates and prices: the
 * arithmetic the bill run's lines (proration.ts) are made of. Days are UTC calendar days written YYYY-MM-DD.
 */

/** `amount × numerator / denominator`, rounded half up to the minor unit (exact for any safe integer amount). */
export function prorate(amount: number, numerator: number, denominator: number): number {
  if (amount < 0) {
    return -prorate(-amount, numerator, denominator);
  }
  const doubled = BigInt(amount) * BigInt(numerator) * 2n + BigInt(denominator);
  return Number(doubled / (2n * BigInt(denominator)));
}

export type PlanPeriod = 'monthly' | 'quarterly' | 'yearly';

const PERIOD_MONTHS: Record<PlanPeriod, number> = { monthly: 1, quarterly: 3, yearly: 12 };

export interface PlanInfo {
  id: string;
  name: string;
  price: number;
  currency: string;
  billingPeriod: PlanPeriod;
}

/**
 * What a plan costs for the monthly period starting at `start`: its price when monthly; a quarterly or yearly plan is
 * billed monthly its share by days of the quarter or year starting there.
 */
export function periodAmount(plan: PlanInfo, start: string): number {
  const months = PERIOD_MONTHS[plan.billingPeriod] ?? 1;
  if (months === 1) {
    return plan.price;
  }
  return prorate(
    plan.price,
    daysBetween(start, addMonths(start, 1)),
    daysBetween(start, addMonths(start, months)),
  );
}

/**
 * A charge in advance not yet trued up: `amount` for [from, to) on `plan_id`, a part (or all) of the billing period
 * [period_start, period_end) whose days are the proration's denominator.
 */
export interface AdvanceCharge {
  plan_id: string;
  amount: number;
  from: string;
  to: string;
  period_start: string;
  period_end: string;
}

/** A service as billing sees it: its state now, its days on each plan, and how far it is billed. */
export interface BillableService {
  id: string;
  planId: string;
  /** active and suspended services are billed in advance. */
  billedInAdvance: boolean;
  /** UTC day of activation (billed from this day); null if never activated. */
  activatedOn: string | null;
  /** UTC day of termination (not billed from this day). */
  terminatedOn: string | null;
  /** The plan set on each day a plan was set (activation or plan change), oldest first; empty: always planId. */
  planChanges: { on: string; planId: string }[];
  /** The first day no charge covers yet; null when the service was never billed. */
  billedUntil: string | null;
  /** Advance charges whose true-up is still to come. */
  openCharges: AdvanceCharge[];
}

/** The plan a service was on during `day`, or null when it was not billable that day. */
export function planOn(service: BillableService, day: string): string | null {
  if (service.activatedOn === null || day < service.activatedOn) {
    return null;
  }
  if (service.terminatedOn !== null && day >= service.terminatedOn) {
    return null;
  }
  let planId = service.planChanges.length === 0 ? service.planId : null;
  for (const change of service.planChanges) {
    if (change.on <= day) {
      planId = change.planId;
    }
  }
  return planId ?? service.planChanges[0]?.planId ?? service.planId;
}

/** The billing period, on the grid of billing day `billingDay`, that holds `day`: [start, end). */
export function gridPeriod(day: string, billingDay: number): { start: string; end: string } {
  const sameMonth = `${day.slice(0, 8)}${String(billingDay).padStart(2, '0')}`;
  const start = sameMonth <= day ? sameMonth : addMonths(sameMonth, -1);
  return { start, end: addMonths(start, 1) };
}
