import { addMonths, daysBetween } from '../../common/dates';
import { periodAmount, prorate, runLines, type BillableService, type PlanInfo } from './proration';

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

function service(overrides: Partial<BillableService>): BillableService {
  return {
    id: 'svc_1',
    planId: A.id,
    billedInAdvance: true,
    activatedOn: '2026-01-05',
    terminatedOn: null,
    planChanges: [],
    ...overrides,
  };
}

function run(services: BillableService[], billed?: { plan_id: string; amount: number }, credit = true) {
  return runLines({
    asOf: '2026-04-01',
    services,
    plans,
    previousCharges: new Map(billed ? [['svc_1', { service_id: 'svc_1', ...billed }]] : []),
    creditTermination: credit,
  });
}

describe('proration', () => {
  it('rounds half up to the minor unit', () => {
    expect(prorate(1000, 15, 31)).toBe(484);
    expect(prorate(100, 1, 2)).toBe(50);
    expect(prorate(1, 1, 2)).toBe(1);
    expect(prorate(3, 1, 2)).toBe(2);
    expect(prorate(-3, 1, 2)).toBe(-2);
    expect(prorate(9_007_199_254_740_991, 30, 31)).toBe(8_716_644_440_071_927);
  });

  it('knows months and days', () => {
    expect(addMonths('2026-03-01', 1)).toBe('2026-04-01');
    expect(addMonths('2026-01-31', 1)).toBe('2026-02-28');
    expect(addMonths('2026-01-15', -1)).toBe('2025-12-15');
    expect(daysBetween('2026-03-01', '2026-04-01')).toBe(31);
    expect(periodAmount(Q, '2026-04-01')).toBe(prorate(9000, 30, 91));
  });

  it('bills a steady service its price in advance', () => {
    const result = run([service({})], { plan_id: A.id, amount: 3100 });
    expect(result.lines).toEqual([
      { description: 'Fiber 100, 2026-04-01 to 2026-04-30', quantity: 1, unit_amount: 3100, amount: 3100 },
    ]);
    expect(result.charges).toEqual([{ service_id: 'svc_1', plan_id: A.id, amount: 3100 }]);
  });

  it('credits the unused days of the old plan and charges the new one from the change day', () => {
    const changed = service({
      planId: B.id,
      planChanges: [
        { on: '2026-01-05', planId: A.id },
        { on: '2026-03-11', planId: B.id },
      ],
    });
    expect(
      run([changed], { plan_id: A.id, amount: 3100 }).lines.map((l) => [l.description, l.amount]),
    ).toEqual([
      ['Credit: Fiber 100, unused 2026-03-11 to 2026-03-31 (21 of 31 days)', -2100],
      ['Fiber 500, 2026-03-11 to 2026-03-31 (21 of 31 days)', 4200],
      ['Fiber 500, 2026-04-01 to 2026-04-30', 6200],
    ]);
  });

  it('charges the used days of a service activated after the last run', () => {
    const lines = run([service({ activatedOn: '2026-03-11' })]).lines;
    expect(lines.map((l) => l.amount)).toEqual([2100, 3100]);
    expect(lines[0].description).toBe('Fiber 100, 2026-03-11 to 2026-03-31 (21 of 31 days)');
  });

  it('credits a terminated service its unused days, unless termination billing is off', () => {
    const ended = service({ billedInAdvance: false, terminatedOn: '2026-03-11' });
    expect(run([ended], { plan_id: A.id, amount: 3100 }).lines).toEqual([
      {
        description: 'Credit: Fiber 100, unused 2026-03-11 to 2026-03-31 (21 of 31 days)',
        quantity: 1,
        unit_amount: -2100,
        amount: -2100,
      },
    ]);
    expect(run([ended], { plan_id: A.id, amount: 3100 }, false).lines).toEqual([]);
  });

  it('charges the used days of a service activated and terminated between runs', () => {
    const brief = service({ billedInAdvance: false, activatedOn: '2026-03-10', terminatedOn: '2026-03-20' });
    expect(run([brief]).lines.map((l) => l.amount)).toEqual([prorate(3100, 10, 31)]);
  });
});
