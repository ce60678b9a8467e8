import { addDays, addMonths, daysBetween, daysFrom } from '../../common/dates';
import type { InvoiceLine } from '../invoices/invoice.entity';
import {
  type AdvanceCharge,
  type BillableService,
  gridPeriod,
  periodAmount,
  type PlanInfo,
  planOn,
  prorate,
} from './plan-days';

/**
 * What a service is charged, as pure functions of dates and prices (docs/billing.md, "Bill runs"). Days are UTC
 * calendar days written YYYY-MM-DD; a span is [from, to), its `to` the first day after it.
 *
 * Each service carries the day it is billed until (`billedUntil`: every day before it was charged once, in advance
 * or in arrears) and the advance charges not yet trued up. A run on a billing day charges the days before it that
 * nothing charged yet (arrears), trues up each advance charge whose span is over (days on another plan are charged
 * at that plan, days not on the charged plan credited), and charges active and suspended services in advance from
 * `billedUntil` (or the run's day) to the next billing day: a full period, or a shorter, prorated one when the billing
 * day moved. So every service-day is charged exactly once whatever happens to the billing day.
 */

/** What billing keeps of a service between runs. */
export interface ServiceBillingState {
  serviceId: string;
  billedUntil: string | null;
  openCharges: AdvanceCharge[];
}

export interface ServiceLines {
  lines: InvoiceLine[];
  state: ServiceBillingState;
  /** Whether the state differs from the one read (it is written back then). */
  changed: boolean;
}

/** Lines of one or more services with their total. */
export interface RunLines {
  lines: InvoiceLine[];
  states: ServiceBillingState[];
  total: number;
}

function contiguous(days: readonly string[]): string[][] {
  const runs: string[][] = [];
  for (const day of days) {
    const last = runs[runs.length - 1];
    if (last && addDays(last[last.length - 1], 1) === day) {
      last.push(day);
    } else {
      runs.push([day]);
    }
  }
  return runs;
}

function span(days: readonly string[]): string {
  return `${days[0]} to ${days[days.length - 1]}`;
}

type PlanOf = (id: string) => PlanInfo;

function planLookup(plans: Map<string, PlanInfo>): PlanOf {
  return (id) => {
    const found = plans.get(id);
    if (!found) {
      throw new Error(`plan ${id} not found`);
    }
    return found;
  };
}

function chargeLine(
  serviceId: string,
  plan: PlanInfo,
  days: readonly string[],
  amount: number,
  denominator: number,
): InvoiceLine {
  return {
    description: `${plan.name}, ${span(days)} (${days.length} of ${denominator} days)`,
    quantity: 1,
    unit_amount: amount,
    amount,
    service_id: serviceId,
    plan_id: plan.id,
    period_start: days[0],
    period_end: days[days.length - 1],
  };
}

/**
 * Charges `days` (not charged before, ascending) at the plan the service was on each day, one line per plan and
 * contiguous days within one billing period of the grid, prorated by that period's days.
 */
function arrearsLines(
  service: BillableService,
  days: readonly string[],
  billingDay: number,
  plan: PlanOf,
): InvoiceLine[] {
  const groups = new Map<string, { planId: string; start: string; end: string; days: string[] }>();
  let period: { start: string; end: string } | null = null;
  for (const day of days) {
    const planId = planOn(service, day);
    if (planId === null) {
      continue;
    }
    // The days ascend, so the period found for one day serves the next until it ends.
    if (period === null || day < period.start || day >= period.end) {
      period = gridPeriod(day, billingDay);
    }
    const key = `${planId}/${period.start}`;
    const group = groups.get(key);
    if (group) {
      group.days.push(day);
    } else {
      groups.set(key, { planId, ...period, days: [day] });
    }
  }
  const lines: InvoiceLine[] = [];
  for (const group of groups.values()) {
    const denominator = daysBetween(group.start, group.end);
    for (const run of contiguous(group.days)) {
      const amount = prorate(periodAmount(plan(group.planId), group.start), run.length, denominator);
      lines.push(chargeLine(service.id, plan(group.planId), run, amount, denominator));
    }
  }
  return lines;
}

/**
 * Trues up an advance charge whose span is over (or cut short by a termination): the days the service was on the
 * charged plan stay charged; days on another plan are charged at that plan; the others (another plan, or not
 * billable) are credited their share of the charge. `creditTermination` false: days after a termination are not
 * credited (the termination_billing rule off).
 */
function trueUpLines(
  service: BillableService,
  charge: AdvanceCharge,
  plan: PlanOf,
  creditTermination: boolean,
): InvoiceLine[] {
  const spanDays = daysBetween(charge.from, charge.to);
  const periodDays = daysBetween(charge.period_start, charge.period_end);
  const unused: string[] = [];
  const other = new Map<string, string[]>();
  for (const day of daysFrom(charge.from, spanDays)) {
    const planId = planOn(service, day);
    if (planId === charge.plan_id) {
      continue;
    }
    const afterTermination = service.terminatedOn !== null && day >= service.terminatedOn;
    if (creditTermination || !afterTermination) {
      unused.push(day);
    }
    if (planId !== null) {
      other.set(planId, [...(other.get(planId) ?? []), day]);
    }
  }
  const lines: InvoiceLine[] = [];
  // Each contiguous stretch of unused days is one credit line; the lines' sum is the charge's unused share, rounded
  // once (each line the difference of two cumulative roundings).
  let credited = 0;
  let counted = 0;
  for (const run of contiguous(unused)) {
    counted += run.length;
    const upTo = charge.amount - prorate(charge.amount, spanDays - counted, spanDays);
    const credit = upTo - credited;
    credited = upTo;
    if (credit > 0) {
      lines.push({
        description: `Credit: ${plan(charge.plan_id).name}, unused ${span(run)} (${run.length} of ${spanDays} days)`,
        quantity: 1,
        unit_amount: -credit,
        amount: -credit,
        service_id: service.id,
        plan_id: charge.plan_id,
        period_start: run[0],
        period_end: run[run.length - 1],
      });
    }
  }
  for (const [planId, days] of other) {
    for (const run of contiguous(days)) {
      const amount = prorate(periodAmount(plan(planId), charge.period_start), run.length, periodDays);
      lines.push(chargeLine(service.id, plan(planId), run, amount, periodDays));
    }
  }
  return lines;
}

export interface SettleInput {
  service: BillableService;
  plans: Map<string, PlanInfo>;
  /** The subscriber's billing day: the grid of its periods. */
  billingDay: number;
  /** Days before this are charged in arrears, and charges ending by it trued up. */
  until: string;
  /** The earliest day a never-billed service is charged from (a service is not billed further back). */
  arrearsFrom: string;
  creditTermination: boolean;
  /** Charge in advance from `until` (a run on a billing day); false at a termination. */
  advance: boolean;
}

/** One service's lines and its billing state after them. */
export function settleService(input: SettleInput): ServiceLines {
  const { service, billingDay, until } = input;
  const plan = planLookup(input.plans);
  const lines: InvoiceLine[] = [];
  const ended = service.terminatedOn !== null && service.terminatedOn <= until;

  // 1. The advance charges whose span is over, or all of them once the service has ended.
  const open: AdvanceCharge[] = [];
  for (const charge of service.openCharges) {
    if (charge.to <= until || ended) {
      lines.push(...trueUpLines(service, charge, plan, input.creditTermination));
    } else {
      open.push(charge);
    }
  }

  // 2. Arrears: the days before `until` no charge covered yet (a never-billed service from its activation, at most
  // `arrearsFrom`).
  const from =
    service.billedUntil ??
    (service.activatedOn === null ? until : maxDay(service.activatedOn, input.arrearsFrom));
  if (from < until) {
    lines.push(...arrearsLines(service, daysFrom(from, daysBetween(from, until)), billingDay, plan));
  }
  let billedUntil: string | null =
    service.billedUntil === null && service.activatedOn === null
      ? null
      : maxDay(service.billedUntil ?? until, until);

  // 3. In advance, from what is billed to the next billing day: the full period when that is `until` (the run's
  // billing day), a prorated bridge when the billing day moved and the service is billed past `until` already.
  const next = addMonths(until, 1);
  if (input.advance && service.billedInAdvance && !ended && billedUntil !== null && billedUntil < next) {
    const start = billedUntil;
    const current = plan(service.planId);
    const periodDays = daysBetween(until, next);
    const days = daysBetween(start, next);
    const full = periodAmount(current, until);
    const amount = days === periodDays ? full : prorate(full, days, periodDays);
    lines.push({
      description:
        days === periodDays
          ? `${current.name}, ${start} to ${addDays(next, -1)}`
          : `${current.name}, ${start} to ${addDays(next, -1)} (${days} of ${periodDays} days)`,
      quantity: 1,
      unit_amount: amount,
      amount,
      service_id: service.id,
      plan_id: current.id,
      period_start: start,
      period_end: addDays(next, -1),
    });
    open.push({ plan_id: current.id, amount, from: start, to: next, period_start: until, period_end: next });
    billedUntil = next;
  }

  const state: ServiceBillingState = { serviceId: service.id, billedUntil, openCharges: open };
  const changed =
    state.billedUntil !== service.billedUntil || JSON.stringify(open) !== JSON.stringify(service.openCharges);
  return { lines, state, changed };
}

function maxDay(a: string, b: string): string {
  return a > b ? a : b;
}

/**
 * How far back a run charges a service never billed before: two months, so a service activated just after a billing
 * day whose subscriber then moved to a later one is still billed from its first day, and one left unbilled for long
 * (its subscriber had no billing profile) is not charged a surprise of its whole history.
 */
export const NEVER_BILLED_MONTHS = 2;

export interface RunInput {
  asOf: string;
  services: BillableService[];
  plans: Map<string, PlanInfo>;
  /** termination_billing: credit a terminated service's unused, already-billed days. */
  creditTermination: boolean;
}

/**
 * One subscriber's lines for the run on `asOf` (a billing day): per service, true-ups and arrears first, then the
 * charge in advance; and each service's billing state after them.
 */
export function runLines(input: RunInput): RunLines & { settled: ServiceLines[] } {
  const billingDay = Number(input.asOf.slice(8, 10));
  const settled = input.services.map((service) =>
    settleService({
      service,
      plans: input.plans,
      billingDay,
      until: input.asOf,
      arrearsFrom: addMonths(input.asOf, -NEVER_BILLED_MONTHS),
      creditTermination: input.creditTermination,
      advance: true,
    }),
  );
  // True-ups and arrears of every service first, then the charges in advance, as the invoice reads best.
  const advance = (line: InvoiceLine) => line.period_start !== undefined && line.period_start >= input.asOf;
  const lines = [
    ...settled.flatMap((each) => each.lines.filter((line) => !advance(line))),
    ...settled.flatMap((each) => each.lines.filter(advance)),
  ];
  return {
    lines,
    states: settled.filter((each) => each.changed).map((each) => each.state),
    settled,
    total: lines.reduce((sum, each) => sum + each.amount, 0),
  };
}
