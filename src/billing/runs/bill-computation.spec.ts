import type { EntityManager } from 'typeorm';
import { Charge, ChargeSource, ChargeStatus } from '../charges/charge.entity';
import type { ChargesRepository } from '../charges/charges.repository';
import { InvoiceTaxes } from '../taxes/invoice-taxes';
import type { TaxContextRepository } from '../taxes/tax-context.repository';
import type { TaxRateInfo } from '../taxes/tax-computation';
import type { TaxRatesRepository } from '../taxes/tax-rates.repository';
import { BillComputation, type Computed, runDay } from './bill-computation';
import type { PlanInfo } from './plan-days';
import type { ServiceBillingRepository, ServiceRow } from './service-billing.repository';
import { TerminationCredit } from './termination-credit';

describe('runDay', () => {
  it('should bill never-billed services from two months back, across a year end', () => {
    expect(runDay('2026-01-15')).toEqual({ asOf: '2026-01-15', previousStart: '2025-11-15', billingDay: 15 });
  });

  it("should clamp the look-back to a shorter month's end and keep the run's own day as its billing day", () => {
    expect(runDay('2026-04-30')).toEqual({ asOf: '2026-04-30', previousStart: '2026-02-28', billingDay: 30 });
    expect(runDay('2024-04-29')).toEqual({ asOf: '2024-04-29', previousStart: '2024-02-29', billingDay: 29 });
    expect(runDay('2026-03-01').billingDay).toBe(1);
  });
});

const MANAGER = {} as EntityManager;
const PLANS: PlanInfo[] = [
  { id: 'plan_eur', name: 'Fiber 100', price: 3100, currency: 'EUR', billingPeriod: 'monthly' },
  { id: 'plan_usd', name: 'Fiber US', price: 5000, currency: 'USD', billingPeriod: 'monthly' },
];
const VAT: TaxRateInfo = { id: 'txr_vat', name: 'VAT', percentage: '21', inclusive: false, compound: false };

const serviceRow = (id: string, subscriberId: string, planId: string): ServiceRow => ({
  id,
  subscriberId,
  planId,
  status: 'active',
  activatedAt: new Date('2026-02-01T10:00:00.000Z'),
  terminatedAt: null,
  updatedAt: new Date('2026-02-01T10:00:00.000Z'),
  billedUntil: null,
  openCharges: [],
});

const charge = (id: string, source: ChargeSource, amount: number, currency = 'EUR'): Charge =>
  Object.assign(new Charge(), {
    tenantId: 'ten_1',
    id,
    subscriberId: 'sub_1',
    serviceId: source === ChargeSource.Termination ? 'svc_old' : null,
    description: id,
    quantity: 1,
    unitAmount: amount,
    amount,
    currency,
    status: ChargeStatus.Pending,
    source,
    sourceId: null,
    periodStart: source === ChargeSource.Termination ? '2026-02-20' : null,
    periodEnd: source === ChargeSource.Termination ? '2026-02-28' : null,
    taxRateIds: null,
  });

function computation(services: ServiceRow[], pending: Charge[]): BillComputation {
  const serviceBilling = {
    services: () => Promise.resolve(services),
    planChanges: () => Promise.resolve([]),
    plans: (_m: EntityManager, _t: string, ids: string[]) =>
      Promise.resolve(PLANS.filter((plan) => ids.includes(plan.id))),
  } as unknown as ServiceBillingRepository;
  const charges = { pendingOf: () => Promise.resolve(pending) } as unknown as ChargesRepository;
  const taxReads = {
    subscribers: () => Promise.resolve(new Map([['sub_1', { exempt: false, defaults: ['txr_vat'] }]])),
    plans: () => Promise.resolve(new Map()),
    // The router is untaxed; the other charges take the profile's defaults.
    charges: () => Promise.resolve(new Map([['chg_router', []]])),
    rates: (_m: EntityManager, _t: string, ids: readonly string[]) =>
      Promise.resolve(new Map(ids.includes(VAT.id) ? [[VAT.id, VAT]] : [])),
  } as unknown as TaxContextRepository;
  return new BillComputation(
    serviceBilling,
    charges,
    new InvoiceTaxes(taxReads, {} as TaxRatesRepository),
    taxReads,
    new TerminationCredit(),
  );
}

const due = (subscriberId: string, currency = 'EUR') => ({
  subscriberId,
  currency,
  paymentTermsDays: 14,
  billingDay: 1,
});

describe('BillComputation.compute', () => {
  it('should order the lines: adjustments, settlements, this period in advance, then the one-off charges', async () => {
    const [billed] = await computation(
      [serviceRow('svc_1', 'sub_1', 'plan_eur')],
      [
        charge('chg_router', ChargeSource.Api, 900),
        charge('chg_usd', ChargeSource.Api, 400, 'USD'),
        charge('chg_settle', ChargeSource.Termination, -700),
      ],
    ).compute(MANAGER, 'ten_1', runDay('2026-03-01'), [due('sub_1')]);
    const { lines } = billed as Computed;
    expect(lines.lines.map((line) => line.charge_id ?? `${line.plan_id} from ${line.period_start}`)).toEqual([
      'plan_eur from 2026-02-01', // February, never billed: in arrears
      'chg_settle',
      'plan_eur from 2026-03-01', // March, in advance
      'chg_router',
    ]);
    // The USD charge waits for an invoice in USD.
    expect(lines.chargeIds).toEqual(['chg_settle', 'chg_router']);
  });

  it("should tax each line at its own rates, else the profile's, and sum the invoice from the lines", async () => {
    const [billed] = await computation(
      [serviceRow('svc_1', 'sub_1', 'plan_eur')],
      [charge('chg_router', ChargeSource.Api, 900)],
    ).compute(MANAGER, 'ten_1', runDay('2026-03-01'), [due('sub_1')]);
    const { lines } = billed as Computed;
    expect(lines.lines.map((line) => [line.net_amount, line.tax_amount])).toEqual([
      [3100, 651],
      [3100, 651],
      [900, 0],
    ]);
    expect(lines.taxAmount).toBe(1302);
    expect(lines.total).toBe(3100 + 3100 + 900 + 1302);
    expect(lines.taxes).toEqual([expect.objectContaining({ tax_rate_id: 'txr_vat', amount: 1302 })]);
    expect(lines.states).toEqual([
      expect.objectContaining({ serviceId: 'svc_1', billedUntil: '2026-04-01' }),
    ]);
  });

  it('should refuse to bill a subscriber a plan priced in another currency, and bill the others', async () => {
    const billed = await computation(
      [serviceRow('svc_1', 'sub_1', 'plan_eur'), serviceRow('svc_2', 'sub_2', 'plan_usd')],
      [],
    ).compute(MANAGER, 'ten_1', runDay('2026-03-01'), [due('sub_1'), due('sub_2'), due('sub_3')]);
    expect(billed.map((each) => ('error' in each ? each.error : each.lines.lines.length))).toEqual([
      2,
      'plan plan_usd is priced in USD; the subscriber is billed in EUR',
      0, // nothing to bill: found empty
    ]);
  });
});
