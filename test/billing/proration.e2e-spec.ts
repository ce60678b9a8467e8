import type { ServicePlan } from '../support/provisioning-factory';
import {
  actOnService,
  at,
  type BillingRun,
  chargeLine,
  createActiveService,
  createCustomer,
  createEurPlan,
  creditLine,
  type Customer,
  eventsOfTypes,
  type InvoiceLine,
  invoicesOf,
  periodLine,
  prorate,
  type RunApp,
  runToCompletion,
  setRule,
  sumOf,
  transactionsOf,
  addDays,
  balanceOf,
  halfUp,
  ledgerOf,
  runAppSuite,
  oneInvoiceRun,
} from '../support/billing-run-factory';
import { baseLines } from '../support/billing-run-factory';

/**
 * Issue #16: proration by whole days on the next run. Every case lives in March and April of a year of its own
 * (March has 31 days, April 30, the quarter from 1 March 92 and from 1 April 91, whatever the year), later than every
 * earlier case's: the clock only moves forward within the app.
 */

type PlanKey = 'A' | 'B' | 'C' | 'Q';

interface PlanSpec {
  price: number;
  billing_period?: 'monthly' | 'quarterly' | 'yearly';
}

/** One step of a case's timeline, on a day of the case's year (MM-DD), in order. */
type Step =
  | { on: string; op: 'activate'; plan: PlanKey }
  | { on: string; op: 'run' }
  | { on: string; op: 'change_plan'; plan: PlanKey }
  | { on: string; op: 'suspend' }
  | { on: string; op: 'terminate' }
  | { on: string; op: 'disable_termination_billing' };

/** What a run did for the subscriber: one invoice of these lines, one credit of this amount, or nothing at all. */
type Outcome = { invoice: InvoiceLine[] } | { credit: number } | 'nothing';

/** The plans' names, as the lines must show them. */
type Names = Record<PlanKey, string>;

interface Case {
  name: string;
  plans: Partial<Record<PlanKey, PlanSpec>>;
  steps: Step[];
  /** Per run day (MM-DD): the expected outcome, computed from the contract's rules with halfUp. */
  expect: (names: Names, y: number) => Record<string, Outcome>;
  /** Literal figures (no helper) for some runs: the invoice total or credit amount, and the lines' amounts. */
  literal?: Record<string, { total?: number; credit?: number; amounts?: number[] }>;
}

const N_MARCH = 31;

const CASES: Case[] = [
  {
    name: 'activation on 03-11, after the 03-01 run: 21 of 31 days of A, then April in advance',
    plans: { A: { price: 3100 } },
    steps: [
      { on: '03-01', op: 'run' },
      { on: '03-11', op: 'activate', plan: 'A' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': 'nothing',
      '04-01': {
        invoice: [
          chargeLine(n.A, 3100, `${y}-03-11`, `${y}-03-31`, N_MARCH),
          periodLine(n.A, 3100, `${y}-04-01`),
        ],
      },
    }),
    literal: { '04-01': { total: 5200, amounts: [2100, 3100] } },
  },
  {
    name: 'activation on 03-17 of a 1000 plan: 1000 × 15 / 31 = 483.87 rounds to 484',
    plans: { A: { price: 1000 } },
    steps: [
      { on: '03-17', op: 'activate', plan: 'A' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '04-01': {
        invoice: [
          chargeLine(n.A, 1000, `${y}-03-17`, `${y}-03-31`, N_MARCH),
          periodLine(n.A, 1000, `${y}-04-01`),
        ],
      },
    }),
    literal: { '04-01': { total: 1484, amounts: [484, 1000] } },
  },
  {
    name: 'plan change up A (3100) → B (6200) on 03-11: credit 21 unused days of A, charge 21 days of B, April on B',
    plans: { A: { price: 3100 }, B: { price: 6200 } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'A' },
      { on: '03-01', op: 'run' },
      { on: '03-11', op: 'change_plan', plan: 'B' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.A, 3100, `${y}-03-01`)] },
      '04-01': {
        invoice: [
          creditLine(n.A, 3100, `${y}-03-11`, `${y}-03-31`, N_MARCH),
          chargeLine(n.B, 6200, `${y}-03-11`, `${y}-03-31`, N_MARCH),
          periodLine(n.B, 6200, `${y}-04-01`),
        ],
      },
    }),
    literal: { '03-01': { total: 3100 }, '04-01': { total: 8300, amounts: [-2100, 4200, 6200] } },
  },
  {
    name: 'plan change down B (6200) → A (3100) on 03-11: credit 4200, charge 2100, April on A',
    plans: { A: { price: 3100 }, B: { price: 6200 } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'B' },
      { on: '03-01', op: 'run' },
      { on: '03-11', op: 'change_plan', plan: 'A' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.B, 6200, `${y}-03-01`)] },
      '04-01': {
        invoice: [
          creditLine(n.B, 6200, `${y}-03-11`, `${y}-03-31`, N_MARCH),
          chargeLine(n.A, 3100, `${y}-03-11`, `${y}-03-31`, N_MARCH),
          periodLine(n.A, 3100, `${y}-04-01`),
        ],
      },
    }),
    literal: { '03-01': { total: 6200 }, '04-01': { total: 1000, amounts: [-4200, 2100, 3100] } },
  },
  {
    name: 'plan change down B (6200) → C (1000) on 03-11: the lines sum below zero, so a credit of 2523 and no invoice',
    plans: { B: { price: 6200 }, C: { price: 1000 } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'B' },
      { on: '03-01', op: 'run' },
      { on: '03-11', op: 'change_plan', plan: 'C' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.B, 6200, `${y}-03-01`)] },
      '04-01': {
        credit: -sumOf([
          creditLine(n.B, 6200, `${y}-03-11`, `${y}-03-31`, N_MARCH),
          chargeLine(n.C, 1000, `${y}-03-11`, `${y}-03-31`, N_MARCH),
          periodLine(n.C, 1000, `${y}-04-01`),
        ]),
      },
    }),
    literal: { '04-01': { credit: 2523 } },
  },
  {
    name: 'termination on 03-11: 21 unused days credited (2100), no April line: a credit, no invoice',
    plans: { A: { price: 3100 } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'A' },
      { on: '03-01', op: 'run' },
      { on: '03-11', op: 'terminate' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.A, 3100, `${y}-03-01`)] },
      '04-01': { credit: -creditLine(n.A, 3100, `${y}-03-11`, `${y}-03-31`, N_MARCH).amount },
    }),
    literal: { '04-01': { credit: 2100 } },
  },
  {
    name: 'termination on 03-11 with the termination_billing rule disabled: no credit, nothing to bill',
    plans: { A: { price: 3100 } },
    steps: [
      { on: '02-20', op: 'disable_termination_billing' },
      { on: '03-01', op: 'activate', plan: 'A' },
      { on: '03-01', op: 'run' },
      { on: '03-11', op: 'terminate' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.A, 3100, `${y}-03-01`)] },
      '04-01': 'nothing',
    }),
  },
  {
    name: 'suspension on 03-11: a suspended service is still billed, in full and in advance',
    plans: { A: { price: 3100 } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'A' },
      { on: '03-01', op: 'run' },
      { on: '03-11', op: 'suspend' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.A, 3100, `${y}-03-01`)] },
      '04-01': { invoice: [periodLine(n.A, 3100, `${y}-04-01`)] },
    }),
    literal: { '04-01': { total: 3100 } },
  },
  {
    name: 'plan changes A → B on 03-05 and back B → A on 03-20: credit the 15 days off A, charge them on B',
    plans: { A: { price: 3100 }, B: { price: 6200 } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'A' },
      { on: '03-01', op: 'run' },
      { on: '03-05', op: 'change_plan', plan: 'B' },
      { on: '03-20', op: 'change_plan', plan: 'A' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.A, 3100, `${y}-03-01`)] },
      '04-01': {
        invoice: [
          creditLine(n.A, 3100, `${y}-03-05`, `${y}-03-19`, N_MARCH),
          chargeLine(n.B, 6200, `${y}-03-05`, `${y}-03-19`, N_MARCH),
          periodLine(n.A, 3100, `${y}-04-01`),
        ],
      },
    }),
    literal: { '04-01': { total: 4600, amounts: [-1500, 3000, 3100] } },
  },
  {
    name: 'plan changes A → B on 03-05 and B → C on 03-20: credit 27 days of A, charge B then C',
    plans: { A: { price: 3100 }, B: { price: 6200 }, C: { price: 1000 } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'A' },
      { on: '03-01', op: 'run' },
      { on: '03-05', op: 'change_plan', plan: 'B' },
      { on: '03-20', op: 'change_plan', plan: 'C' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.A, 3100, `${y}-03-01`)] },
      '04-01': {
        invoice: [
          creditLine(n.A, 3100, `${y}-03-05`, `${y}-03-31`, N_MARCH),
          chargeLine(n.B, 6200, `${y}-03-05`, `${y}-03-19`, N_MARCH),
          chargeLine(n.C, 1000, `${y}-03-20`, `${y}-03-31`, N_MARCH),
          periodLine(n.C, 1000, `${y}-04-01`),
        ],
      },
    }),
    literal: { '04-01': { total: 1687, amounts: [-2700, 3000, 387, 1000] } },
  },
  {
    name: 'activated on 03-11 and terminated on 03-21, never billed in advance: 10 days charged, nothing for April',
    plans: { A: { price: 3100 } },
    steps: [
      { on: '03-01', op: 'run' },
      { on: '03-11', op: 'activate', plan: 'A' },
      { on: '03-21', op: 'terminate' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': 'nothing',
      '04-01': { invoice: [chargeLine(n.A, 3100, `${y}-03-11`, `${y}-03-20`, N_MARCH)] },
    }),
    literal: { '04-01': { total: 1000, amounts: [1000] } },
  },
  {
    // Issue #28: a service never billed is charged from its activation, at most two months back (NEVER_BILLED_MONTHS),
    // each period's days by that period: activated 01-20, first billed 04-01: all of February, all of March (each a
    // full period, so leap years do not matter), then April in advance.
    name: 'first run long after activation (01-20): the two periods before the run charged in full, then April',
    plans: { A: { price: 3100 } },
    steps: [
      { on: '01-20', op: 'activate', plan: 'A' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '04-01': {
        invoice: [
          chargeLine(n.A, 3100, `${y}-02-01`, `${y}-02-${febDays(y)}`, febDays(y)),
          chargeLine(n.A, 3100, `${y}-03-01`, `${y}-03-31`, N_MARCH),
          periodLine(n.A, 3100, `${y}-04-01`),
        ],
      },
    }),
    literal: { '04-01': { total: 9300, amounts: [3100, 3100, 3100] } },
  },
  {
    name: 'plan change A → B on the billing day itself, before the run: March untouched, April in advance on B',
    plans: { A: { price: 3100 }, B: { price: 6200 } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'A' },
      { on: '03-01', op: 'run' },
      { on: '04-01', op: 'change_plan', plan: 'B' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.A, 3100, `${y}-03-01`)] },
      '04-01': { invoice: [periodLine(n.B, 6200, `${y}-04-01`)] },
    }),
    literal: { '04-01': { total: 6200 } },
  },
  {
    name: 'termination on the billing day itself, before the run: March fully used, no credit, nothing to bill',
    plans: { A: { price: 3100 } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'A' },
      { on: '03-01', op: 'run' },
      { on: '04-01', op: 'terminate' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [periodLine(n.A, 3100, `${y}-03-01`)] },
      '04-01': 'nothing',
    }),
  },
  {
    name: 'a quarterly plan (9000) is billed monthly its share: 9000 × 31 / 92 in March, 9000 × 30 / 91 in April',
    plans: { Q: { price: 9000, billing_period: 'quarterly' } },
    steps: [
      { on: '03-01', op: 'activate', plan: 'Q' },
      { on: '03-01', op: 'run' },
      { on: '04-01', op: 'run' },
    ],
    expect: (n, y) => ({
      '03-01': { invoice: [share(n.Q, 9000, `${y}-03-01`, 31, 92)] },
      '04-01': { invoice: [share(n.Q, 9000, `${y}-04-01`, 30, 91)] },
    }),
    literal: { '03-01': { total: 3033, amounts: [3033] }, '04-01': { total: 2967, amounts: [2967] } },
  },
];

/** The monthly share of a longer plan: the in-advance line with round_half_up(price × days / days_of_the_plan_period). */
function share(name: string, price: number, asOf: string, days: number, planDays: number): InvoiceLine {
  const amount = prorate(price, days, planDays);
  return { ...periodLine(name, amount, asOf), unit_amount: amount, amount };
}

/** Days of February in year `y`. */
function febDays(y: number): number {
  return new Date(Date.UTC(y, 2, 0)).getUTCDate();
}

describe('Bill runs: proration', () => {
  let app: RunApp;
  let lastYear = 2069;

  runAppSuite((started) => (app = started), { BILLING_RUN_BATCH_SIZE: '3' }, '2069-01-01T00:00:00.000Z');

  it('should round half up exactly as the contract says (helper self-check)', () => {
    expect(halfUp(1000 * 15, 31)).toBe(484);
    expect(halfUp(100 * 1, 2)).toBe(50);
    expect(halfUp(1 * 1, 2)).toBe(1);
    expect(halfUp(3100 * 21, 31)).toBe(2100);
    expect(creditLine('A', 3100, '2026-03-11', '2026-03-31', 31)).toEqual({
      description: 'Credit: A, unused 2026-03-11 to 2026-03-31 (21 of 31 days)',
      quantity: 1,
      unit_amount: -2100,
      amount: -2100,
    });
    expect(chargeLine('B', 6200, '2026-03-11', '2026-03-31', 31)).toEqual({
      description: 'B, 2026-03-11 to 2026-03-31 (21 of 31 days)',
      quantity: 1,
      unit_amount: 4200,
      amount: 4200,
    });
    expect(periodLine('B', 6200, '2026-04-01')).toEqual({
      description: 'B, 2026-04-01 to 2026-04-30',
      quantity: 1,
      unit_amount: 6200,
      amount: 6200,
    });
    expect(addDays('2026-03-01', 31)).toBe('2026-04-01');
  });

  it.each(CASES)('$name', async (spec) => {
    const { t, clock } = app;
    const y = ++lastYear;
    const day = (mmdd: string) => `${y}-${mmdd}`;
    const c: Customer = await createCustomer(t, { billing_day: 1, payment_terms_days: 14, currency: 'EUR' });
    const token = c.tenant.token;
    const plans: Partial<Record<PlanKey, ServicePlan>> = {};
    for (const [key, plan] of Object.entries(spec.plans) as [PlanKey, PlanSpec][]) {
      plans[key] = await createEurPlan(t, token, plan.price, {
        name: `${key}-plan ${y}-${Math.random().toString(36).slice(2, 8)}`,
        ...(plan.billing_period ? { billing_period: plan.billing_period } : {}),
      });
    }
    const names = Object.fromEntries(Object.entries(plans).map(([key, plan]) => [key, plan.name])) as Names;
    const expected = spec.expect(names, y);

    let serviceId: string | null = null;
    const runs: Record<string, BillingRun> = {};
    for (const step of spec.steps) {
      switch (step.op) {
        case 'activate':
          clock.set(at(day(step.on), '00:30'));
          serviceId = (await createActiveService(t, token, c.subscriberId, plans[step.plan]!.id)).id;
          break;
        case 'run': {
          clock.set(at(day(step.on), '03:00'));
          const invoicesBefore = (await invoicesOf(t, token, c.subscriberId)).length;
          const creditsBefore = (await transactionsOf(t, token, c.subscriberId, 'credit')).length;
          const run = await runToCompletion(t, token, { as_of: day(step.on) });
          runs[step.on] = run;
          await checkRun(step.on, run, invoicesBefore, creditsBefore);
          break;
        }
        case 'change_plan': {
          clock.set(at(day(step.on), '01:30'));
          const after = await actOnService(t, token, serviceId!, {
            action: 'change_plan',
            plan_id: plans[step.plan]!.id,
          });
          expect(after.plan_id).toBe(plans[step.plan]!.id);
          break;
        }
        case 'suspend':
        case 'terminate': {
          clock.set(at(day(step.on), '01:30'));
          const after = await actOnService(t, token, serviceId!, { action: step.op });
          expect(after.status).toBe(step.op === 'suspend' ? 'suspended' : 'terminated');
          if (step.op === 'terminate') {
            expect(after.terminated_at?.slice(0, 10)).toBe(day(step.on));
          }
          break;
        }
        case 'disable_termination_billing':
          clock.set(at(day(step.on), '01:30'));
          await setRule(t, token, 'termination_billing', false);
          break;
      }
    }
    expect(Object.keys(runs).sort()).toEqual(Object.keys(expected).sort());

    async function checkRun(on: string, run: BillingRun, invoicesBefore: number, creditsBefore: number) {
      const outcome = expected[on];
      const literal = spec.literal?.[on];
      const asOf = day(on);
      expect({ on, status: run.status, errors: run.errors }).toEqual({ on, status: 'completed', errors: [] });
      const invoices = await invoicesOf(t, token, c.subscriberId);
      const credits = await transactionsOf(t, token, c.subscriberId, 'credit');
      if (outcome === 'nothing') {
        expect({ on, run: summary(run) }).toEqual({
          on,
          run: { due: 0, billed: 0, invoices: 0, credits: 0, amount_total: [] },
        });
        expect(invoices).toHaveLength(invoicesBefore);
        expect(credits).toHaveLength(creditsBefore);
      } else if ('invoice' in outcome) {
        const total = sumOf(outcome.invoice);
        expect({ on, run: summary(run) }).toEqual({
          on,
          run: {
            due: 1,
            billed: 1,
            invoices: 1,
            credits: 0,
            amount_total: [{ currency: 'EUR', amount: total }],
          },
        });
        expect(invoices).toHaveLength(invoicesBefore + 1);
        expect(credits).toHaveLength(creditsBefore);
        const invoice = invoices[invoices.length - 1];
        expect({ on, lines: baseLines(invoice.lines) }).toEqual({ on, lines: outcome.invoice });
        expect(invoice).toMatchObject({
          currency: 'EUR',
          status: total === 0 ? 'paid' : 'open',
          total,
          amount_due: total,
          due_date: addDays(asOf, 14),
        });
        if (literal?.total !== undefined) {
          expect(invoice.total).toBe(literal.total);
        }
        if (literal?.amounts) {
          expect(invoice.lines.map((line) => line.amount)).toEqual(literal.amounts);
        }
      } else {
        expect({ on, run: summary(run) }).toEqual({
          on,
          run: { due: 1, billed: 1, invoices: 0, credits: 1, amount_total: [] },
        });
        expect(invoices).toHaveLength(invoicesBefore);
        expect(credits).toHaveLength(creditsBefore + 1);
        expect(credits[credits.length - 1]).toMatchObject({
          subscriber_id: c.subscriberId,
          kind: 'credit',
          amount: outcome.credit,
          currency: 'EUR',
        });
        expect(outcome.credit).toBeGreaterThan(0);
        if (literal?.credit !== undefined) {
          expect(outcome.credit).toBe(literal.credit);
        }
      }
    }

    // Every invoice the runs issued, and only those, has its invoice.created.
    const issued = Object.values(expected).filter((outcome) => outcome !== 'nothing' && 'invoice' in outcome);
    expect(await eventsOfTypes(t, token, ['invoice.created'])).toHaveLength(issued.length);
  });

  it('should put every adjustment first, per service in creation order, then the services billed in advance', async () => {
    const { t, clock } = app;
    const y = ++lastYear;
    const day = (mmdd: string) => `${y}-${mmdd}`;
    const c = await createCustomer(t, { billing_day: 1, payment_terms_days: 14, currency: 'EUR' });
    const token = c.tenant.token;
    const a = await createEurPlan(t, token, 3100);
    const b = await createEurPlan(t, token, 6200);
    const cheap = await createEurPlan(t, token, 1000);

    clock.set(at(day('03-01'), '00:30'));
    const first = await createActiveService(t, token, c.subscriberId, a.id);
    const second = await createActiveService(t, token, c.subscriberId, b.id);
    clock.set(at(day('03-01'), '03:00'));
    const march = await runToCompletion(t, token, { as_of: day('03-01') });
    expect(march).toMatchObject({ invoices_created: 1, amount_total: [{ currency: 'EUR', amount: 9300 }] });

    clock.set(at(day('03-11'), '10:00'));
    await actOnService(t, token, first.id, { action: 'change_plan', plan_id: b.id });
    await createActiveService(t, token, c.subscriberId, cheap.id);
    clock.set(at(day('03-21'), '10:00'));
    await actOnService(t, token, second.id, { action: 'terminate' });

    clock.set(at(day('04-01'), '03:00'));
    const april = await runToCompletion(t, token, { as_of: day('04-01') });
    const expected = [
      creditLine(a.name, 3100, day('03-11'), day('03-31'), N_MARCH),
      chargeLine(b.name, 6200, day('03-11'), day('03-31'), N_MARCH),
      chargeLine(cheap.name, 1000, day('03-11'), day('03-31'), N_MARCH),
      // The terminated service was settled when it ended (a pending charge): after the runs' own adjustments.
      creditLine(b.name, 6200, day('03-21'), day('03-31'), N_MARCH),
      periodLine(b.name, 6200, day('04-01')),
      periodLine(cheap.name, 1000, day('04-01')),
    ];
    expect(april).toMatchObject(oneInvoiceRun([{ currency: 'EUR', amount: sumOf(expected) }]));
    const invoices = await invoicesOf(t, token, c.subscriberId);
    expect(invoices).toHaveLength(2);
    expect(baseLines(invoices[1].lines)).toEqual(expected);
    expect(invoices[1].lines.map((line) => line.amount)).toEqual([-2100, 4200, 677, -2200, 6200, 1000]);
    expect(invoices[1].lines[3].description).toBe(
      `Credit: ${b.name}, unused ${y}-03-21 to ${y}-03-31 (11 of 31 days)`,
    );
    expect(invoices[1].total).toBe(7777);
  });

  it('should, in a dry run of a negative net, report the credit yet write no transaction; the real run writes it', async () => {
    const { t, clock } = app;
    const y = ++lastYear;
    const day = (mmdd: string) => `${y}-${mmdd}`;
    const c = await createCustomer(t, { billing_day: 1, currency: 'EUR' });
    const token = c.tenant.token;
    const a = await createEurPlan(t, token, 3100);
    clock.set(at(day('03-01'), '00:30'));
    const service = await createActiveService(t, token, c.subscriberId, a.id);
    clock.set(at(day('03-01'), '03:00'));
    await runToCompletion(t, token, { as_of: day('03-01') });
    clock.set(at(day('03-11'), '10:00'));
    await actOnService(t, token, service.id, { action: 'terminate' });
    clock.set(at(day('04-01'), '03:00'));

    const ledger = await ledgerOf(t, token, c.subscriberId);
    const balance = await balanceOf(t, token, c.subscriberId);
    const dry = await runToCompletion(t, token, { as_of: day('04-01'), dry_run: true });
    expect(dry).toMatchObject({
      dry_run: true,
      status: 'completed',
      subscribers_due: 1,
      subscribers_billed: 1,
      invoices_created: 0,
      credits_created: 1,
      amount_total: [],
      errors: [],
    });
    expect(await transactionsOf(t, token, c.subscriberId)).toEqual([]);
    expect(await ledgerOf(t, token, c.subscriberId)).toEqual(ledger);
    expect(await balanceOf(t, token, c.subscriberId)).toEqual(balance);
    expect(await eventsOfTypes(t, token, ['transaction.*'])).toEqual([]);

    const real = await runToCompletion(t, token, { as_of: day('04-01') });
    expect(summary(real)).toEqual(summary(dry));
    const credits = await transactionsOf(t, token, c.subscriberId, 'credit');
    expect(credits).toHaveLength(1);
    expect(credits[0]).toMatchObject({ kind: 'credit', amount: 2100, currency: 'EUR' });
    expect((await eventsOfTypes(t, token, ['transaction.created'])).map((event) => event.subject_id)).toEqual(
      [credits[0].id],
    );
    expect(await invoicesOf(t, token, c.subscriberId)).toHaveLength(1);
    // The credit lowers the balance: 3100 owed on the March invoice, 2100 credited.
    const entries = await ledgerOf(t, token, c.subscriberId);
    expect(entries[0]).toMatchObject({ type: 'credit', currency: 'EUR', amount: -2100, balance_after: 1000 });
    expect((await balanceOf(t, token, c.subscriberId)).balances).toEqual([
      expect.objectContaining({ currency: 'EUR', balance: 1000 }),
    ]);
  });
});

function summary(run: BillingRun) {
  return {
    due: run.subscribers_due,
    billed: run.subscribers_billed,
    invoices: run.invoices_created,
    credits: run.credits_created,
    amount_total: run.amount_total,
  };
}
