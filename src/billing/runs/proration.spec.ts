import fc from 'fast-check';
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
import { runLines, settleService } from './proration';

const A: PlanInfo = {
  id: 'plan_a',
  name: 'Fiber 100',
  price: 3100,
  currency: 'EUR',
  billingPeriod: 'monthly',
};
const B: PlanInfo = {
  id: 'plan_b',
  name: 'Fiber 500',
  price: 6200,
  currency: 'EUR',
  billingPeriod: 'monthly',
};
const Q: PlanInfo = {
  id: 'plan_q',
  name: 'Quarterly',
  price: 9000,
  currency: 'EUR',
  billingPeriod: 'quarterly',
};
const plans = new Map([A, B, Q].map((plan) => [plan.id, plan]));

/** March 2026 billed in advance on A, as the 03-01 run left it. */
const MARCH_ON_A: AdvanceCharge = {
  plan_id: A.id,
  amount: 3100,
  from: '2026-03-01',
  to: '2026-04-01',
  period_start: '2026-03-01',
  period_end: '2026-04-01',
};

function service(overrides: Partial<BillableService>): BillableService {
  return {
    id: 'svc_1',
    planId: A.id,
    billedInAdvance: true,
    activatedOn: '2026-01-05',
    terminatedOn: null,
    planChanges: [],
    billedUntil: '2026-04-01',
    openCharges: [MARCH_ON_A],
    ...overrides,
  };
}

function run(services: BillableService[], credit = true, asOf = '2026-04-01') {
  return runLines({ asOf, services, plans, creditTermination: credit });
}

const text = (lines: InvoiceLine[]) => lines.map((line) => [line.description, line.amount]);

describe('proration', () => {
  it('rounds half up to the minor unit', () => {
    expect(prorate(1000, 15, 31)).toBe(484);
    expect(prorate(100, 1, 2)).toBe(50);
    expect(prorate(1, 1, 2)).toBe(1);
    expect(prorate(3, 1, 2)).toBe(2);
    expect(prorate(-3, 1, 2)).toBe(-2);
    expect(prorate(9_007_199_254_740_991, 30, 31)).toBe(8_716_644_440_071_927);
  });

  it('knows months, days and the billing-day grid', () => {
    expect(addMonths('2026-03-01', 1)).toBe('2026-04-01');
    expect(daysBetween('2026-03-01', '2026-04-01')).toBe(31);
    expect(periodAmount(Q, '2026-04-01')).toBe(prorate(9000, 30, 91));
    expect(gridPeriod('2026-02-20', 15)).toEqual({ start: '2026-02-15', end: '2026-03-15' });
    expect(gridPeriod('2026-02-10', 15)).toEqual({ start: '2026-01-15', end: '2026-02-15' });
    expect(gridPeriod('2026-02-15', 15)).toEqual({ start: '2026-02-15', end: '2026-03-15' });
  });

  it('bills a steady service its price in advance, and records the charge and the date it is billed until', () => {
    const result = run([service({})]);
    expect(text(result.lines)).toEqual([['Fiber 100, 2026-04-01 to 2026-04-30', 3100]]);
    expect(result.lines[0]).toMatchObject({
      service_id: 'svc_1',
      plan_id: A.id,
      period_start: '2026-04-01',
      period_end: '2026-04-30',
    });
    expect(result.states).toEqual([
      {
        serviceId: 'svc_1',
        billedUntil: '2026-05-01',
        openCharges: [
          {
            ...MARCH_ON_A,
            amount: 3100,
            from: '2026-04-01',
            to: '2026-05-01',
            period_start: '2026-04-01',
            period_end: '2026-05-01',
          },
        ],
      },
    ]);
  });

  it('credits the unused days of the old plan and charges the new one from the change day', () => {
    const changed = service({
      planId: B.id,
      planChanges: [
        { on: '2026-01-05', planId: A.id },
        { on: '2026-03-11', planId: B.id },
      ],
    });
    expect(text(run([changed]).lines)).toEqual([
      ['Credit: Fiber 100, unused 2026-03-11 to 2026-03-31 (21 of 31 days)', -2100],
      ['Fiber 500, 2026-03-11 to 2026-03-31 (21 of 31 days)', 4200],
      ['Fiber 500, 2026-04-01 to 2026-04-30', 6200],
    ]);
  });

  it('charges the used days of a service activated after the last run (never billed)', () => {
    const lines = run([service({ activatedOn: '2026-03-11', billedUntil: null, openCharges: [] })]).lines;
    expect(lines.map((l) => l.amount)).toEqual([2100, 3100]);
    expect(lines[0].description).toBe('Fiber 100, 2026-03-11 to 2026-03-31 (21 of 31 days)');
  });

  it('credits a terminated service its unused days, unless termination billing is off', () => {
    const ended = service({ billedInAdvance: false, terminatedOn: '2026-03-11' });
    expect(run([ended]).lines).toEqual([
      {
        description: 'Credit: Fiber 100, unused 2026-03-11 to 2026-03-31 (21 of 31 days)',
        quantity: 1,
        unit_amount: -2100,
        amount: -2100,
        service_id: 'svc_1',
        plan_id: A.id,
        period_start: '2026-03-11',
        period_end: '2026-03-31',
      },
    ]);
    expect(run([ended], false).lines).toEqual([]);
  });

  it('settles a service at its termination: the credit is computed then, and nothing is left for the next run', () => {
    const ended = service({ billedInAdvance: false, terminatedOn: '2026-03-11' });
    const settled = settleService({
      service: ended,
      plans,
      billingDay: 1,
      until: '2026-03-11',
      arrearsFrom: '2026-02-11',
      creditTermination: true,
      advance: false,
    });
    expect(text(settled.lines)).toEqual([
      ['Credit: Fiber 100, unused 2026-03-11 to 2026-03-31 (21 of 31 days)', -2100],
    ]);
    expect(settled.state).toEqual({ serviceId: 'svc_1', billedUntil: '2026-04-01', openCharges: [] });
    expect(run([{ ...ended, ...settled.state }]).lines).toEqual([]);
  });

  it('bridges a billing-day change with one prorated period, never billing a day twice', () => {
    // Billed Jan 1–31 in advance on day 1; moved to day 15: the Jan 15 run bills Feb 1–14 only.
    const billed = service({
      activatedOn: '2025-12-01',
      billedUntil: '2026-02-01',
      openCharges: [
        {
          ...MARCH_ON_A,
          from: '2026-01-01',
          to: '2026-02-01',
          period_start: '2026-01-01',
          period_end: '2026-02-01',
        },
      ],
    });
    const jan15 = run([billed], true, '2026-01-15');
    expect(text(jan15.lines)).toEqual([
      ['Fiber 100, 2026-02-01 to 2026-02-14 (14 of 31 days)', prorate(3100, 14, 31)],
    ]);
    const feb15 = run([{ ...billed, ...jan15.states[0] }], true, '2026-02-15');
    expect(text(feb15.lines)).toEqual([['Fiber 100, 2026-02-15 to 2026-03-14', 3100]]);
  });

  it('charges the days a moved billing day left behind, in arrears', () => {
    // Billed through 02-01 on day 1, moved to day 15 after the Jan 15 run: the Feb 15 run charges Feb 1–14.
    const billed = service({ activatedOn: '2025-12-01', billedUntil: '2026-02-01', openCharges: [] });
    expect(text(run([billed], true, '2026-02-15').lines)).toEqual([
      ['Fiber 100, 2026-02-01 to 2026-02-14 (14 of 31 days)', prorate(3100, 14, 31)],
      ['Fiber 100, 2026-02-15 to 2026-03-14', 3100],
    ]);
  });

  it('charges the used days of a service activated and terminated between runs', () => {
    const brief = service({
      billedInAdvance: false,
      activatedOn: '2026-03-10',
      terminatedOn: '2026-03-20',
      billedUntil: null,
      openCharges: [],
    });
    expect(run([brief]).lines.map((l) => l.amount)).toEqual([prorate(3100, 10, 31)]);
  });
});

/** The net count of charges per day of one service's lines: +1 for a charge, −1 for a credit. */
function coverage(lines: InvoiceLine[]): Map<string, number> {
  const days = new Map<string, number>();
  for (const line of lines) {
    const sign = line.amount < 0 || line.description.startsWith('Credit:') ? -1 : 1;
    const span = daysFrom(line.period_start!, daysBetween(line.period_start!, addDays(line.period_end!, 1)));
    for (const day of span) {
      days.set(day, (days.get(day) ?? 0) + sign);
    }
  }
  return days;
}

describe('billed-through dates (property)', () => {
  it('bills every day of a service exactly once through activations, plan and billing-day changes, terminations and runs', () => {
    const event = fc.oneof(
      fc.record({ kind: fc.constant('advance' as const), days: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ kind: fc.constant('billing_day' as const), day: fc.integer({ min: 1, max: 28 }) }),
      fc.record({ kind: fc.constant('plan' as const), plan: fc.constantFrom(A.id, B.id) }),
      fc.record({ kind: fc.constant('terminate' as const) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 28 }),
        fc.array(event, { maxLength: 30 }),
        (startOffset, firstBillingDay, events) => {
          let today = addDays('2026-01-01', startOffset);
          let billingDay = firstBillingDay;
          const activatedOn = today;
          const changes = [{ on: today, planId: A.id }];
          let terminatedOn: string | null = null;
          let state: { billedUntil: string | null; openCharges: AdvanceCharge[] } = {
            billedUntil: null,
            openCharges: [],
          };
          const lines: InvoiceLine[] = [];
          const current = (): BillableService => ({
            id: 'svc',
            planId: changes[changes.length - 1].planId,
            billedInAdvance: terminatedOn === null,
            activatedOn,
            terminatedOn,
            planChanges: changes,
            ...state,
          });
          // Every billing day from `from` to `to` runs (the scheduler, catching up).
          const runsThrough = (from: string, to: string) => {
            for (let day = from; day <= to; day = addDays(day, 1)) {
              if (Number(day.slice(8, 10)) === billingDay) {
                const result = runLines({ asOf: day, services: [current()], plans, creditTermination: true });
                lines.push(...result.lines);
                const [next] = result.settled;
                state = { billedUntil: next.state.billedUntil, openCharges: next.state.openCharges };
              }
            }
          };
          runsThrough(today, today);
          for (const step of events) {
            if (terminatedOn !== null) {
              break;
            }
            if (step.kind === 'advance') {
              runsThrough(addDays(today, 1), addDays(today, step.days));
              today = addDays(today, step.days);
            } else if (step.kind === 'billing_day') {
              billingDay = step.day;
            } else if (step.kind === 'plan') {
              changes.push({ on: today, planId: step.plan });
            } else {
              terminatedOn = today;
              const settled = settleService({
                service: current(),
                plans,
                billingDay,
                until: today,
                arrearsFrom: addMonths(today, -2),
                creditTermination: true,
                advance: false,
              });
              lines.push(...settled.lines);
              state = { billedUntil: settled.state.billedUntil, openCharges: settled.state.openCharges };
            }
          }
          // Runs go on for two more months: everything that was used is billed by then, and nothing more.
          const end = addMonths(today, 2);
          runsThrough(addDays(today, 1), end);
          const used = new Set(
            daysFrom(activatedOn, daysBetween(activatedOn, end)).filter(
              (day) => planOn(current(), day) !== null,
            ),
          );
          for (const [day, count] of coverage(lines)) {
            if (used.has(day)) {
              expect({ day, count }).toEqual({ day, count: 1 });
            } else if (day < end) {
              // Days past the end of a still-active service may be billed in advance; none before it twice.
              expect({
                day,
                count: terminatedOn === null && day >= today ? Math.min(count, 1) : count,
              }).toEqual({
                day,
                count: terminatedOn === null && day >= today ? count : 0,
              });
            }
          }
          for (const day of used) {
            expect({ day, count: coverage(lines).get(day) ?? 0 }).toEqual({ day, count: 1 });
          }
        },
      ),
      { seed: 20261126, numRuns: 300 },
    );
  });
});
