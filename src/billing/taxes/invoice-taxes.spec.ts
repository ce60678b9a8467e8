import type { InvoiceLine } from '../invoices/invoice.entity';
import { rateIdsOf, type TaxContext, taxLines } from './invoice-taxes';
import { TaxComputationError, type TaxRateInfo } from './tax-computation';

const rate = (id: string, percentage: string, inclusive = false): TaxRateInfo => ({
  id,
  name: id.toUpperCase(),
  percentage,
  inclusive,
  compound: false,
});

const RATES = new Map(
  [rate('vat', '21'), rate('reduced', '9'), rate('telecom', '5'), rate('incl', '20', true)].map((r) => [
    r.id,
    r,
  ]),
);

const context = (fields: Partial<TaxContext> = {}): TaxContext => ({
  exempt: false,
  defaults: ['vat'],
  plans: new Map<string, string[] | null>([
    ['plan_own', ['reduced', 'telecom']],
    ['plan_defaults', null],
    ['plan_untaxed', []],
  ]),
  charges: new Map<string, string[] | null>([
    ['chg_own', ['telecom']],
    ['chg_defaults', null],
    ['chg_untaxed', []],
  ]),
  rates: RATES,
  ...fields,
});

const line = (amount: number, fields: Partial<InvoiceLine> = {}): InvoiceLine => ({
  description: 'x',
  quantity: 1,
  unit_amount: amount,
  amount,
  ...fields,
});

describe('rateIdsOf', () => {
  it("should take a line's own list first, even an empty one", () => {
    expect(rateIdsOf(line(100, { tax_rate_ids: ['reduced'], plan_id: 'plan_own' }), context())).toEqual([
      'reduced',
    ]);
    expect(rateIdsOf(line(100, { tax_rate_ids: [] }), context())).toEqual([]);
  });

  it("should take a charge's list, then the profile's defaults, never the plan's for a charge line", () => {
    expect(rateIdsOf(line(100, { charge_id: 'chg_own' }), context())).toEqual(['telecom']);
    expect(rateIdsOf(line(100, { charge_id: 'chg_untaxed' }), context())).toEqual([]);
    expect(rateIdsOf(line(100, { charge_id: 'chg_defaults' }), context())).toEqual(['vat']);
    expect(rateIdsOf(line(100, { charge_id: 'chg_defaults', plan_id: 'plan_own' }), context())).toEqual([
      'vat',
    ]);
    expect(rateIdsOf(line(100, { charge_id: 'chg_unknown', plan_id: 'plan_own' }), context())).toEqual([
      'vat',
    ]);
  });

  it("should take a plan's list, then the profile's defaults", () => {
    expect(rateIdsOf(line(100, { plan_id: 'plan_own' }), context())).toEqual(['reduced', 'telecom']);
    expect(rateIdsOf(line(100, { plan_id: 'plan_untaxed' }), context())).toEqual([]);
    expect(rateIdsOf(line(100, { plan_id: 'plan_defaults' }), context())).toEqual(['vat']);
    expect(rateIdsOf(line(100, { plan_id: 'plan_unknown' }), context())).toEqual(['vat']);
    expect(rateIdsOf(line(100), context())).toEqual(['vat']);
    expect(rateIdsOf(line(100), context({ defaults: [] }))).toEqual([]);
  });

  it('should tax nothing for an exempt subscriber, whatever the lists say', () => {
    const exempt = context({ exempt: true });
    expect(rateIdsOf(line(100, { tax_rate_ids: ['vat'] }), exempt)).toEqual([]);
    expect(rateIdsOf(line(100, { charge_id: 'chg_own' }), exempt)).toEqual([]);
    expect(rateIdsOf(line(100, { plan_id: 'plan_own' }), exempt)).toEqual([]);
    expect(rateIdsOf(line(100), exempt)).toEqual([]);
  });
});

describe('taxLines', () => {
  it('should tax each line at its rates and sum the invoice from the lines', () => {
    const taxed = taxLines(
      [line(1000), line(2000, { plan_id: 'plan_own' }), line(-500), line(700, { charge_id: 'chg_untaxed' })],
      context(),
    );
    expect(taxed.lines.map((l) => [l.tax_rate_ids, l.net_amount, l.tax_amount])).toEqual([
      [['vat'], 1000, 210],
      [['reduced', 'telecom'], 2000, 280], // 180 + 100
      [['vat'], -500, -105], // a credit line gives its tax back
      [[], 700, 0],
    ]);
    expect(taxed.subtotal).toBe(3200);
    expect(taxed.taxAmount).toBe(385);
    expect(taxed.total).toBe(3585);
    expect(taxed.taxes.map((row) => [row.tax_rate_id, row.taxable_amount, row.amount])).toEqual([
      ['vat', 500, 105],
      ['reduced', 2000, 180],
      ['telecom', 2000, 100],
    ]);
  });

  it('should keep the amount as priced on an inclusive line and take the tax out of it', () => {
    const [taxed] = taxLines([line(1200, { tax_rate_ids: ['incl'] })], context()).lines;
    expect(taxed).toMatchObject({ amount: 1200, net_amount: 1000, tax_amount: 200 });
  });

  it('should round each line half away from zero', () => {
    // 21 % of 5 is 1.05 → 1; of 50 is 10.5 → 11; of -50 is -10.5 → -11.
    const taxed = taxLines([line(5), line(50), line(-50)], context());
    expect(taxed.lines.map((l) => l.tax_amount)).toEqual([1, 11, -11]);
    expect(taxed.taxAmount).toBe(1);
  });

  it('should answer nothing owed for no lines', () => {
    expect(taxLines([], context())).toEqual({ lines: [], subtotal: 0, taxAmount: 0, taxes: [], total: 0 });
  });

  it('should refuse a line whose rate is not known', () => {
    expect(() => taxLines([line(100, { tax_rate_ids: ['gone'] })], context())).toThrow(
      new TaxComputationError('tax rate gone not found'),
    );
  });
});
