import { addDays, addMonths, daysBetween, daysFrom } from '../../common/dates';
import type { InvoiceLine } from '../invoices/invoice.entity';

/**
 * What a bill run charges, as pure functions of dates and prices (docs/billing.md, "Bill runs"). Days are UTC
 * calendar days written YYYY-MM-DD; a period is [start, end), its end the next billing day.
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

/** A service as a run sees it: its state now and, for proration, its days in force on each plan. */
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
}

/** What a run charged a service in advance for a period: the base of the next run's credit. */
export interface BilledCharge {
  service_id: string;
  plan_id: string;
  amount: number;
}

export interface RunInput {
  asOf: string;
  services: BillableService[];
  plans: Map<string, PlanInfo>;
  /** What the run of the previous period charged in advance, by service. */
  previousCharges: Map<string, BilledCharge>;
  /** termination_billing: credit a terminated service's unused, already-billed days. */
  creditTermination: boolean;
}

export interface RunLines {
  lines: InvoiceLine[];
  /** What this run charges in advance, recorded for the next run's proration. */
  charges: BilledCharge[];
  total: number;
}

function line(description: string, amount: number): InvoiceLine {
  return { description, quantity: 1, unit_amount: amount, amount };
}

function span(days: string[]): string {
  return `${days[0]} to ${days[days.length - 1]}`;
}

/** The plan a service was on during `day`, or null when it was not billable that day. */
function planOn(service: BillableService, day: string): string | null {
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

let period: { from: string; to: string; days: readonly string[] } | null = null;

/** The days of [from, to), kept for the last period asked (a bill run asks the same one for every subscriber). */
function daysOf(from: string, to: string): readonly string[] {
  if (period?.from !== from || period.to !== to) {
    period = { from, to, days: daysFrom(from, daysBetween(from, to)) };
  }
  return period.days;
}

/**
 * One subscriber's lines for the run on `asOf`: first, per service, the previous period trued up by whole days
 * (days on a plan not billed in advance are charged; a plan billed in advance but used fewer days is credited its
 * unused part), then each active or suspended service in advance for [asOf, next billing day).
 */
export function runLines(input: RunInput): RunLines {
  const { asOf, plans } = input;
  const previousStart = addMonths(asOf, -1);
  const previousDays = daysBetween(previousStart, asOf);
  const nextStart = addMonths(asOf, 1);
  const lines: InvoiceLine[] = [];
  const charges: BilledCharge[] = [];
  const plan = (id: string): PlanInfo => {
    const found = plans.get(id);
    if (!found) {
      throw new Error(`plan ${id} not found`);
    }
    return found;
  };

  const days = daysOf(previousStart, asOf);
  for (const service of input.services) {
    const onPlan = new Map<string, string[]>();
    const unused: string[] = [];
    const billed = input.previousCharges.get(service.id);
    for (const day of days) {
      const planId = planOn(service, day);
      if (planId !== null) {
        const used = onPlan.get(planId);
        if (used) {
          used.push(day);
        } else {
          onPlan.set(planId, [day]);
        }
      }
      if (billed && planId !== billed.plan_id) {
        const afterTermination = service.terminatedOn !== null && day >= service.terminatedOn;
        if (input.creditTermination || !afterTermination) {
          unused.push(day);
        }
      }
    }
    if (billed && unused.length > 0) {
      const credit = billed.amount - prorate(billed.amount, previousDays - unused.length, previousDays);
      if (credit > 0) {
        lines.push(
          line(
            `Credit: ${plan(billed.plan_id).name}, unused ${span(unused)} (${unused.length} of ${previousDays} days)`,
            -credit,
          ),
        );
      }
    }
    for (const [planId, used] of onPlan) {
      if (billed?.plan_id === planId) {
        continue;
      }
      const amount = prorate(periodAmount(plan(planId), previousStart), used.length, previousDays);
      lines.push(
        line(`${plan(planId).name}, ${span(used)} (${used.length} of ${previousDays} days)`, amount),
      );
    }
  }

  for (const service of input.services) {
    if (!service.billedInAdvance) {
      continue;
    }
    const current = plan(service.planId);
    const amount = periodAmount(current, asOf);
    lines.push(line(`${current.name}, ${asOf} to ${addDays(nextStart, -1)}`, amount));
    charges.push({ service_id: service.id, plan_id: current.id, amount });
  }
  return { lines, charges, total: lines.reduce((sum, each) => sum + each.amount, 0) };
}
