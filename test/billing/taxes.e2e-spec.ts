import request from 'supertest';
import {
  createInvoice,
  finalizeInvoice,
  FUTURE_DATE,
  getInvoice,
  type InvoiceRecord,
  listAll,
  voidInvoice,
} from '../support/billing-factory';
import {
  actOnService,
  addDays,
  at,
  type BillingRun,
  createActiveService,
  createRunTenant,
  invoicesOf,
  type RunApp,
  runToCompletion,
  runAppSuite,
} from '../support/billing-run-factory';
import { createPlan } from '../support/provisioning-factory';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { issueToken } from '../support/test-app';
import { bearer } from '../support/factories';
import {
  createSubscriber,
  getSubscriber,
  postSubscriber,
  subscriberBody,
} from '../support/subscriber-factory';
import type { TenantWithToken, TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait-for';

type Body = Record<string, unknown>;

/**
 * Issue 29, "Done when": the tax table. Taxes from the outside, through the API, in EUR (2 decimals), JPY (none) and
 * KWD (3 decimals): exclusive and inclusive pricing, compound rates, a four-decimal rate, which rates apply (a line's
 * own, a charge's, a plan's, the profile's defaults; exemption), bill runs with proration, credit notes, the tax
 * report and the rule that a rate in use is never edited. Every expected figure below is written out by hand: each tax
 * of each line is rounded half away from zero to the minor unit (the comment next to it gives the exact value).
 */

// ---------- rates ----------

type RateKey =
  'vat' | 'vatIncl' | 'ct10Incl' | 'gst' | 'qst' | 'gstIncl' | 'qstIncl' | 'levy' | 'levyIncl' | 'red9';

interface RateSpec {
  name: string;
  percentage: string;
  inclusive: boolean;
  compound: boolean;
}

const RATES: Record<RateKey, RateSpec> = {
  vat: { name: 'VAT 21%', percentage: '21', inclusive: false, compound: false },
  vatIncl: { name: 'VAT 21% incl.', percentage: '21', inclusive: true, compound: false },
  ct10Incl: { name: 'Consumption tax 10% incl.', percentage: '10', inclusive: true, compound: false },
  gst: { name: 'GST 5%', percentage: '5', inclusive: false, compound: false },
  qst: { name: 'QST 9.975%', percentage: '9.975', inclusive: false, compound: true },
  gstIncl: { name: 'GST 5% incl.', percentage: '5', inclusive: true, compound: false },
  qstIncl: { name: 'QST 9.975% incl.', percentage: '9.975', inclusive: true, compound: true },
  levy: { name: 'Levy 6.0625%', percentage: '6.0625', inclusive: false, compound: false },
  levyIncl: { name: 'Levy 6.0625% incl.', percentage: '6.0625', inclusive: true, compound: false },
  red9: { name: 'Reduced 9%', percentage: '9', inclusive: false, compound: false },
};

/** The rate an exclusive rate is priced inclusive with (the same percentage, the same compounding). */
const INCLUSIVE_TWIN: Partial<Record<RateKey, RateKey>> = {
  vat: 'vatIncl',
  gst: 'gstIncl',
  qst: 'qstIncl',
  levy: 'levyIncl',
};

/** "21" → "21.0000", as the API writes percentages. */
function fourDecimals(percentage: string): string {
  const [whole, decimals = ''] = percentage.split('.');
  return `${whole}.${decimals.padEnd(4, '0')}`;
}

type RateIds = Record<RateKey, string>;

interface TaxRateRecord {
  id: string;
  name: string;
  percentage: string;
  inclusive: boolean;
  compound: boolean;
  active: boolean;
  first_used_at: string | null;
}

interface LineTax {
  tax_rate_id: string;
  name: string;
  percentage: string;
  inclusive: boolean;
  compound: boolean;
  taxable_amount: number;
  amount: number;
}

interface Line {
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  tax_rate_ids: string[];
  net_amount: number;
  tax_amount: number;
  taxes: LineTax[];
  service_id?: string;
  plan_id?: string;
  charge_id?: string;
  period_start?: string;
  period_end?: string;
}

interface Invoice extends Omit<InvoiceRecord, 'lines' | 'taxes'> {
  lines: Line[];
  taxes: LineTax[];
}

interface CreditNote {
  id: string;
  number: string;
  sequence: number;
  invoice_id: string;
  subscriber_id: string;
  currency: string;
  reason: string;
  lines: (Line & { invoice_line: number })[];
  subtotal: number;
  taxes: LineTax[];
  tax_amount: number;
  total: number;
  credit_transaction_id: string;
  applied_to_invoice: number;
  refund_transaction_id: string | null;
  refund_of: string | null;
  created_at: string;
}

interface Charge {
  id: string;
  status: 'pending' | 'invoiced';
  source: string;
  amount: number;
  invoice_id: string | null;
  tax_rate_ids: string[] | null;
}

interface ReportRow {
  currency: string;
  tax_rate_id: string;
  name: string;
  percentage: string;
  taxable_amount: number;
  tax_amount: number;
  invoiced_tax: number;
  credited_tax: number;
  invoices: number;
  credit_notes: number;
}

/** A tax as the expected tables write it: [rate, taxable amount, tax]. */
type Tax = [RateKey, number, number];

/** The line tax the API answers for `tax` of a line priced with these rates. */
function lineTax(ids: RateIds, [key, taxable, amount]: Tax): LineTax {
  const spec = RATES[key];
  return {
    tax_rate_id: ids[key],
    name: spec.name,
    percentage: fourDecimals(spec.percentage),
    inclusive: spec.inclusive,
    compound: spec.compound,
    taxable_amount: taxable,
    amount,
  };
}

/** round(numerator / denominator) half away from zero, exactly: for the consistency checks of bill runs. */
function halfAwayFromZero(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  const rounded = (2n * magnitude + denominator) / (2n * denominator);
  return negative ? -rounded : rounded;
}

/** "9.9750" → 99750 (millionths). */
function millionths(percentage: string): bigint {
  const [whole, decimals = ''] = percentage.split('.');
  return BigInt(whole) * 10_000n + BigInt(decimals.padEnd(4, '0'));
}

/**
 * Whatever its figures, a taxed line holds together: its tax is the sum of its taxes, each tax is its rate of what it
 * taxed rounded half away from zero, a simple rate taxes the net and a compound one the net and the taxes before it,
 * and the amount as priced is the net (exclusive) or the net and its taxes (inclusive).
 */
function expectLineConsistent(line: Line): void {
  const what = line.description;
  expect({ what, tax: line.tax_amount }).toEqual({
    what,
    tax: line.taxes.reduce((sum, tax) => sum + tax.amount, 0),
  });
  expect({ what, rates: line.taxes.map((tax) => tax.tax_rate_id).sort() }).toEqual({
    what,
    rates: [...line.tax_rate_ids].sort(),
  });
  let before = 0;
  for (const tax of line.taxes) {
    expect({ what, rate: tax.tax_rate_id, taxable: tax.taxable_amount }).toEqual({
      what,
      rate: tax.tax_rate_id,
      taxable: tax.compound ? line.net_amount + before : line.net_amount,
    });
    expect({ what, rate: tax.tax_rate_id, amount: tax.amount }).toEqual({
      what,
      rate: tax.tax_rate_id,
      amount: Number(halfAwayFromZero(BigInt(tax.taxable_amount) * millionths(tax.percentage), 1_000_000n)),
    });
    before += tax.amount;
  }
  const inclusive = line.taxes.some((tax) => tax.inclusive);
  expect({ what, amount: line.amount }).toEqual({
    what,
    amount: inclusive ? line.net_amount + line.tax_amount : line.net_amount,
  });
}

/** An invoice (or credit note) adds up: Σ nets = subtotal, Σ taxes = tax_amount = Σ rows, and subtotal + tax = total. */
function expectDocumentConsistent(doc: {
  lines: Line[];
  subtotal: number;
  taxes: LineTax[];
  tax_amount: number;
  total: number;
}) {
  doc.lines.forEach(expectLineConsistent);
  expect(doc.subtotal).toBe(doc.lines.reduce((sum, line) => sum + line.net_amount, 0));
  expect(doc.tax_amount).toBe(doc.lines.reduce((sum, line) => sum + line.tax_amount, 0));
  expect(doc.total).toBe(doc.subtotal + doc.tax_amount);
  const rows = new Map<string, { taxable: number; amount: number }>();
  for (const tax of doc.lines.flatMap((line) => line.taxes)) {
    const row = rows.get(tax.tax_rate_id) ?? { taxable: 0, amount: 0 };
    row.taxable += tax.taxable_amount;
    row.amount += tax.amount;
    rows.set(tax.tax_rate_id, row);
  }
  expect(doc.taxes.map((row) => [row.tax_rate_id, row.taxable_amount, row.amount]).sort()).toEqual(
    [...rows.entries()].map(([id, row]) => [id, row.taxable, row.amount]).sort(),
  );
  expect(doc.tax_amount).toBe(doc.taxes.reduce((sum, row) => sum + row.amount, 0));
}

// ---------- the table: manual invoices in EUR, JPY and KWD ----------

interface Case {
  label: string;
  quantity: number;
  unit_amount: number;
  /** The line's own rates; absent: the billing profile's defaults (VAT 21%). */
  rates?: RateKey[];
  net: number;
  taxes: Tax[];
}

interface CurrencyTable {
  currency: 'EUR' | 'JPY' | 'KWD';
  cases: Case[];
  subtotal: number;
  rows: Tax[];
  tax: number;
  total: number;
}

/** One row per line: the table is easier to check by eye than prettier's one field per row. */
// prettier-ignore
const TABLES: CurrencyTable[] = [
  {
    currency: 'EUR',
    cases: [
      // 150 × 21% = 31.5 → 32
      { label: 'VAT on 3 × 0.50, exactly half a cent', quantity: 3, unit_amount: 50, rates: ['vat'], net: 150, taxes: [['vat', 150, 32]] },
      // 4999 × 21% = 1049.79 → 1050
      { label: 'the profile default on 49.99', quantity: 1, unit_amount: 4999, net: 4999, taxes: [['vat', 4999, 1050]] },
      // 3 × 21% = 0.63 → 1
      { label: 'VAT on 0.03', quantity: 1, unit_amount: 3, rates: ['vat'], net: 3, taxes: [['vat', 3, 1]] },
      // gross 1000 / 1.1 = 909.09 → net 909; 909 × 10% = 90.9 → 91; 909 + 91 = 1000
      { label: '10% inclusive 10.00', quantity: 1, unit_amount: 1000, rates: ['ct10Incl'], net: 909, taxes: [['ct10Incl', 909, 91]] },
      // GST 10000 × 5% = 500; QST (10000 + 500) × 9.975% = 1047.375 → 1047
      { label: 'GST + compound QST on 100.00', quantity: 1, unit_amount: 10000, rates: ['gst', 'qst'], net: 10000, taxes: [['gst', 10000, 500], ['qst', 10500, 1047]] },
      // GST 1905 × 5% = 95.25 → 95; QST (1905 + 95) × 9.975% = 199.5 → 200
      { label: 'compound QST at exactly half a cent', quantity: 1, unit_amount: 1905, rates: ['gst', 'qst'], net: 1905, taxes: [['gst', 1905, 95], ['qst', 2000, 200]] },
      // 800 × 6.0625% = 48.5 → 49
      { label: 'a four-decimal rate at exactly half a cent', quantity: 1, unit_amount: 800, rates: ['levy'], net: 800, taxes: [['levy', 800, 49]] },
      // VAT 1000 × 21% = 210; levy 1000 × 6.0625% = 60.625 → 61 (both on the net)
      { label: 'two simple rates on 10.00', quantity: 1, unit_amount: 1000, rates: ['vat', 'levy'], net: 1000, taxes: [['vat', 1000, 210], ['levy', 1000, 61]] },
      { label: 'untaxed ([])', quantity: 2, unit_amount: 1250, rates: [], net: 2500, taxes: [] },
      // named compound first: still GST 2000 × 5% = 100 first, then QST 2100 × 9.975% = 209.475 → 209
      { label: 'compound named before the simple rate', quantity: 1, unit_amount: 2000, rates: ['qst', 'gst'], net: 2000, taxes: [['gst', 2000, 100], ['qst', 2100, 209]] },
    ],
    // 150 + 4999 + 3 + 909 + 10000 + 1905 + 800 + 1000 + 2500 + 2000
    subtotal: 24266,
    rows: [
      ['vat', 6152, 1293], // 150 + 4999 + 3 + 1000; 32 + 1050 + 1 + 210
      ['ct10Incl', 909, 91],
      ['gst', 13905, 695], // 10000 + 1905 + 2000; 500 + 95 + 100
      ['qst', 14600, 1456], // 10500 + 2000 + 2100; 1047 + 200 + 209
      ['levy', 1800, 110], // 800 + 1000; 49 + 61
    ],
    tax: 3645,
    total: 27911,
  },
  {
    currency: 'JPY',
    cases: [
      // 2350 × 21% = 493.5 → 494
      { label: 'VAT on ¥2,350, exactly half a yen', quantity: 1, unit_amount: 2350, rates: ['vat'], net: 2350, taxes: [['vat', 2350, 494]] },
      // 9850 × 21% = 2068.5 → 2069
      { label: 'the profile default on 5 × ¥1,970, exactly half a yen', quantity: 5, unit_amount: 1970, net: 9850, taxes: [['vat', 9850, 2069]] },
      // 1234 / 1.1 = 1121.82 → 1122; 1122 × 10% = 112.2 → 112; 1122 + 112 = 1234
      { label: '10% inclusive ¥1,234', quantity: 1, unit_amount: 1234, rates: ['ct10Incl'], net: 1122, taxes: [['ct10Incl', 1122, 112]] },
      // GST 250; QST 5250 × 9.975% = 523.6875 → 524
      { label: 'GST + compound QST on ¥5,000', quantity: 1, unit_amount: 5000, rates: ['gst', 'qst'], net: 5000, taxes: [['gst', 5000, 250], ['qst', 5250, 524]] },
      // GST 5714 × 5% = 285.7 → 286; QST 6000 × 9.975% = 598.5 → 599
      { label: 'compound QST at exactly half a yen', quantity: 1, unit_amount: 5714, rates: ['gst', 'qst'], net: 5714, taxes: [['gst', 5714, 286], ['qst', 6000, 599]] },
      // 800 × 6.0625% = 48.5 → 49
      { label: 'a four-decimal rate on 8 × ¥100', quantity: 8, unit_amount: 100, rates: ['levy'], net: 800, taxes: [['levy', 800, 49]] },
      { label: 'untaxed ([])', quantity: 1, unit_amount: 300, rates: [], net: 300, taxes: [] },
    ],
    // 2350 + 9850 + 1122 + 5000 + 5714 + 800 + 300
    subtotal: 25136,
    rows: [
      ['vat', 12200, 2563], // 2350 + 9850; 494 + 2069
      ['ct10Incl', 1122, 112],
      ['gst', 10714, 536], // 5000 + 5714; 250 + 286
      ['qst', 11250, 1123], // 5250 + 6000; 524 + 599
      ['levy', 800, 49],
    ],
    tax: 4383,
    total: 29519,
  },
  {
    currency: 'KWD',
    cases: [
      // 1250 × 21% = 262.5 → 263 (fils)
      { label: 'VAT on 5 × 0.250 KWD, exactly half a fils', quantity: 5, unit_amount: 250, rates: ['vat'], net: 1250, taxes: [['vat', 1250, 263]] },
      // 12345 × 21% = 2592.45 → 2592
      { label: 'the profile default on 12.345 KWD', quantity: 1, unit_amount: 12345, net: 12345, taxes: [['vat', 12345, 2592]] },
      // 5500 / 1.1 = 5000; 500
      { label: '10% inclusive 5.500 KWD', quantity: 1, unit_amount: 5500, rates: ['ct10Incl'], net: 5000, taxes: [['ct10Incl', 5000, 500]] },
      // 999 / 1.1 = 908.18 → 908; 90.8 → 91; 908 + 91 = 999
      { label: '10% inclusive 0.999 KWD', quantity: 1, unit_amount: 999, rates: ['ct10Incl'], net: 908, taxes: [['ct10Incl', 908, 91]] },
      // GST 9524 × 5% = 476.2 → 476; QST 10000 × 9.975% = 997.5 → 998
      { label: 'compound QST at exactly half a fils', quantity: 1, unit_amount: 9524, rates: ['gst', 'qst'], net: 9524, taxes: [['gst', 9524, 476], ['qst', 10000, 998]] },
      // 2400 × 6.0625% = 145.5 → 146
      { label: 'a four-decimal rate on 3 × 0.800 KWD', quantity: 3, unit_amount: 800, rates: ['levy'], net: 2400, taxes: [['levy', 2400, 146]] },
      // VAT 1234 × 21% = 259.14 → 259; levy 1234 × 6.0625% = 74.81125 → 75
      { label: 'two simple rates on 1.234 KWD', quantity: 1, unit_amount: 1234, rates: ['vat', 'levy'], net: 1234, taxes: [['vat', 1234, 259], ['levy', 1234, 75]] },
      { label: 'untaxed ([])', quantity: 1, unit_amount: 1000, rates: [], net: 1000, taxes: [] },
    ],
    // 1250 + 12345 + 5000 + 908 + 9524 + 2400 + 1234 + 1000
    subtotal: 33661,
    rows: [
      ['vat', 14829, 3114], // 1250 + 12345 + 1234; 263 + 2592 + 259
      ['ct10Incl', 5908, 591], // 5000 + 908; 500 + 91
      ['gst', 9524, 476],
      ['qst', 10000, 998],
      ['levy', 3634, 221], // 2400 + 1234; 146 + 75
    ],
    tax: 5400,
    total: 39061,
  },
];

const UNKNOWN_RATE = 'txr_01JD3Z6W3R4T5Y6U7I8O9P0QAB';

describe('Billing: taxes (issue 29, the tax table)', () => {
  let app: RunApp;
  let t: TestApp;
  /** Each bill-run test takes a year of its own, later than the one before: the clock only moves forward. */
  let year = 2080;
  const nextYear = () => ++year;

  runAppSuite(
    (started) => {
      app = started;
      t = started.t;
    },
    {},
    '2080-01-01T00:00:00.000Z',
  );

  // ---------- helpers ----------

  const api = (token: string) => ({
    get: (path: string, query: Record<string, string> = {}) =>
      request(t.http).get(path).query(query).set(bearer(token)),
    post: (path: string, body: Body) => request(t.http).post(path).set(bearer(token)).send(body),
    patch: (path: string, body: Body) => request(t.http).patch(path).set(bearer(token)).send(body),
  });

  async function createRates(token: string, keys: RateKey[] = Object.keys(RATES) as RateKey[]) {
    const ids = {} as RateIds;
    for (const key of keys) {
      const res = await api(token).post('/api/v1/tax-rates', { ...RATES[key] });
      expectSuccess(res, 201);
      ids[key] = res.body.data.id as string;
    }
    return ids;
  }

  async function createProfile(token: string, body: Body): Promise<{ id: string; tax_rate_ids: string[] }> {
    const res = await api(token).post('/api/v1/billing-profiles', {
      name: `Profile ${Math.random().toString(36).slice(2, 8)}`,
      billing_day: 1,
      payment_terms_days: 14,
      auto_suspend_after_days: null,
      ...body,
    });
    expectSuccess(res, 201);
    return res.body.data as { id: string; tax_rate_ids: string[] };
  }

  async function newSubscriber(token: string, profileId: string, overrides: Body = {}): Promise<string> {
    return (
      await createSubscriber(t, token, { status: 'active', billing_profile_id: profileId, ...overrides })
    ).id;
  }

  async function postInvoice(token: string, body: Body): Promise<Invoice> {
    const res = await api(token).post('/api/v1/invoices', { due_date: FUTURE_DATE, ...body });
    expectSuccess(res, 201);
    return res.body.data as Invoice;
  }

  async function getRate(token: string, id: string): Promise<TaxRateRecord> {
    const res = await api(token).get(`/api/v1/tax-rates/${id}`);
    expectSuccess(res);
    return res.body.data as TaxRateRecord;
  }

  async function postCharge(token: string, subscriberId: string, body: Body): Promise<Charge> {
    const res = await api(token).post(`/api/v1/subscribers/${subscriberId}/charges`, body);
    expectSuccess(res, 201);
    return res.body.data as Charge;
  }

  async function creditNote(token: string, invoiceId: string, body: Body): Promise<CreditNote> {
    const res = await api(token).post(`/api/v1/invoices/${invoiceId}/credit-notes`, {
      reason: 'Outage',
      ...body,
    });
    expectSuccess(res, 201);
    return res.body.data as CreditNote;
  }

  /** A line's figures as the tables write them. */
  function expectedLine(ids: RateIds, c: Case): Partial<Line> {
    return {
      quantity: c.quantity,
      unit_amount: c.unit_amount,
      amount: c.quantity * c.unit_amount,
      tax_rate_ids: (c.rates ?? ['vat']).map((key) => ids[key]),
      net_amount: c.net,
      tax_amount: c.taxes.reduce((sum, [, , amount]) => sum + amount, 0),
      taxes: c.taxes.map((tax) => lineTax(ids, tax)),
    };
  }

  async function runOn(token: string, day: string): Promise<BillingRun> {
    app.clock.set(at(day, '03:00'));
    const run = await runToCompletion(t, token, { as_of: day });
    expect({ day, status: run.status, errors: run.errors }).toEqual({ day, status: 'completed', errors: [] });
    return run;
  }

  // ---------- 1. the table ----------

  describe.each(TABLES)('manual invoices in $currency', (table) => {
    let tenant: TenantWithToken;
    let ids: RateIds;
    let subscriberId: string;

    beforeAll(async () => {
      tenant = await createRunTenant(t);
      ids = await createRates(tenant.token);
      const profile = await createProfile(tenant.token, {
        currency: table.currency,
        tax_rate_ids: [ids.vat],
      });
      expect(profile.tax_rate_ids).toEqual([ids.vat]);
      subscriberId = await newSubscriber(tenant.token, profile.id);
    });

    it('should tax each line as the table says and sum the invoice: subtotal, one row per rate, tax, total', async () => {
      const invoice = await postInvoice(tenant.token, {
        subscriber_id: subscriberId,
        currency: table.currency,
        lines: table.cases.map((c) => ({
          description: c.label,
          quantity: c.quantity,
          unit_amount: c.unit_amount,
          ...(c.rates ? { tax_rate_ids: c.rates.map((key) => ids[key]) } : {}),
        })),
      });
      expect(invoice.lines).toEqual(
        table.cases.map((c) => ({ description: c.label, ...expectedLine(ids, c) })),
      );
      expect({
        subtotal: invoice.subtotal,
        taxes: invoice.taxes,
        tax_amount: invoice.tax_amount,
        total: invoice.total,
        amount_due: invoice.amount_due,
        status: invoice.status,
      }).toEqual({
        subtotal: table.subtotal,
        taxes: table.rows.map((row) => lineTax(ids, row)),
        tax_amount: table.tax,
        total: table.total,
        amount_due: table.total,
        status: 'open',
      });
      expect(invoice.number).toMatch(/^INV-\d{4}-000001$/);
      expectDocumentConsistent(invoice);
      // As kept: GET answers the same figures.
      const read = (await getInvoice(t, tenant.token, invoice.id)) as unknown as Invoice;
      expect({ lines: read.lines, taxes: read.taxes, total: read.total }).toEqual({
        lines: invoice.lines,
        taxes: invoice.taxes,
        total: invoice.total,
      });
      // Issuing marked every rate it used, the profile's default too, and no other.
      for (const key of Object.keys(RATES) as RateKey[]) {
        const used = table.rows.some(([rowKey]) => rowKey === key);
        expect({ key, used: (await getRate(tenant.token, ids[key])).first_used_at !== null }).toEqual({
          key,
          used,
        });
      }
    });

    it('should price a line inclusive at the gross into the same net and taxes as priced exclusive', async () => {
      const exclusive = table.cases.filter(
        (c) => c.taxes.length > 0 && !(c.rates ?? ['vat']).includes('ct10Incl'),
      );
      expect(exclusive.length).toBeGreaterThanOrEqual(5);
      const twin = (key: RateKey): RateKey => INCLUSIVE_TWIN[key]!;
      const invoice = await postInvoice(tenant.token, {
        subscriber_id: subscriberId,
        currency: table.currency,
        lines: exclusive.map((c) => ({
          description: `${c.label}, priced inclusive`,
          quantity: 1,
          unit_amount: c.net + c.taxes.reduce((sum, [, , amount]) => sum + amount, 0),
          tax_rate_ids: (c.rates ?? ['vat']).map((key) => ids[twin(key)]),
        })),
      });
      expect(invoice.lines).toEqual(
        exclusive.map((c) => {
          const gross = c.net + c.taxes.reduce((sum, [, , amount]) => sum + amount, 0);
          return {
            description: `${c.label}, priced inclusive`,
            quantity: 1,
            unit_amount: gross,
            amount: gross,
            tax_rate_ids: (c.rates ?? ['vat']).map((key) => ids[twin(key)]),
            net_amount: c.net,
            tax_amount: gross - c.net,
            taxes: c.taxes.map(([key, taxable, amount]) => lineTax(ids, [twin(key), taxable, amount])),
          };
        }),
      );
      expect(invoice.subtotal).toBe(exclusive.reduce((sum, c) => sum + c.net, 0));
      expect(invoice.total).toBe(
        exclusive.reduce(
          (sum, c) => sum + c.quantity * c.unit_amount + c.taxes.reduce((s, [, , a]) => s + a, 0),
          0,
        ),
      );
      expectDocumentConsistent(invoice);
    });
  });

  it('should refuse a line naming an unknown rate (422 invalid_reference) or mixing inclusive and exclusive rates (422)', async () => {
    const tenant = await createRunTenant(t);
    const ids = await createRates(tenant.token, ['vat', 'vatIncl', 'gst']);
    const profile = await createProfile(tenant.token, { currency: 'EUR', tax_rate_ids: [ids.vat] });
    const subscriberId = await newSubscriber(tenant.token, profile.id);
    const line = (taxRateIds: string[]) => ({
      subscriber_id: subscriberId,
      currency: 'EUR',
      due_date: FUTURE_DATE,
      lines: [
        { description: 'ok', quantity: 1, unit_amount: 100 },
        { description: 'this one', quantity: 1, unit_amount: 100, tax_rate_ids: taxRateIds },
      ],
    });
    expectError(
      await api(tenant.token).post('/api/v1/invoices', line([ids.gst, UNKNOWN_RATE])),
      422,
      'invalid_reference',
      'lines.1.tax_rate_ids.1',
    );
    expectError(
      await api(tenant.token).post('/api/v1/invoices', line([ids.vat, ids.vatIncl])),
      422,
      'validation_failed',
      'lines.1.tax_rate_ids',
    );
    expect(await listAll(t, tenant.token, '/api/v1/invoices')).toEqual([]);
  });

  it('should split an inclusive price that no net gives back exactly: the taxes of the nearest net, the net the rest', async () => {
    const tenant = await createRunTenant(t);
    const ids = await createRates(tenant.token, ['vat', 'ct10Incl']);
    const profile = await createProfile(tenant.token, { currency: 'JPY', tax_rate_ids: [ids.vat] });
    const subscriberId = await newSubscriber(tenant.token, profile.id);
    const invoice = await postInvoice(tenant.token, {
      subscriber_id: subscriberId,
      currency: 'JPY',
      lines: [{ description: 'Cable', quantity: 1, unit_amount: 115, tax_rate_ids: [ids.ct10Incl] }],
    });
    // Nets 104 and 105 price 104 + 10 = 114 and 105 + 11 (10.5 → 11) = 116: none gives ¥115. The nearest net is
    // 115 / 1.1 = 104.5 → 105, whose tax is 11; the net takes the odd yen: 115 − 11 = 104, and the rate is restated
    // as taxing 104, so the tax rows and the report add up to the lines' nets.
    expect(invoice.lines).toEqual([
      {
        description: 'Cable',
        quantity: 1,
        unit_amount: 115,
        amount: 115,
        tax_rate_ids: [ids.ct10Incl],
        net_amount: 104,
        tax_amount: 11,
        taxes: [lineTax(ids, ['ct10Incl', 104, 11])],
      },
    ]);
    expect(invoice).toMatchObject({ subtotal: 104, tax_amount: 11, total: 115 });
  });

  // ---------- 2. which rates apply ----------

  describe('which rates apply', () => {
    it('should tax a tax-exempt subscriber nothing, on manual invoices, charges and bill runs, and again once it is not', async () => {
      const y = nextYear();
      app.clock.set(at(`${y}-03-01`, '00:30'));
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const ids = await createRates(token, ['vat', 'ct10Incl', 'red9']);
      const profile = await createProfile(token, { currency: 'EUR', tax_rate_ids: [ids.vat] });
      const plan = await createPlan(t, token, { price: 4000, currency: 'EUR', tax_rate_ids: [ids.red9] });

      expectError(
        await postSubscriber(t, token, subscriberBody({ tax_exempt: true })),
        400,
        'missing_field',
        'tax_exempt_reason',
      );
      const exemptId = await newSubscriber(token, profile.id, {
        tax_exempt: true,
        tax_exempt_reason: 'Registered charity, certificate 2026-0117',
        tax_id: 'NL123456789B01',
      });
      expect(await getSubscriber(t, token, exemptId)).toMatchObject({
        tax_exempt: true,
        tax_exempt_reason: 'Registered charity, certificate 2026-0117',
        tax_id: 'NL123456789B01',
      });
      const untaxed = { tax_rate_ids: [], tax_amount: 0, taxes: [] };

      // A manual invoice: the line's own rates, the defaults and an inclusive price all untaxed (the price is the net).
      const manual = await postInvoice(token, {
        subscriber_id: exemptId,
        currency: 'EUR',
        lines: [
          { description: 'own rates', quantity: 1, unit_amount: 1000, tax_rate_ids: [ids.vat] },
          { description: 'defaults', quantity: 2, unit_amount: 450 },
          { description: 'inclusive', quantity: 1, unit_amount: 1100, tax_rate_ids: [ids.ct10Incl] },
        ],
      });
      expect(
        manual.lines.map(({ description, amount, net_amount, tax_rate_ids, tax_amount, taxes }) => ({
          description,
          amount,
          net_amount,
          tax_rate_ids,
          tax_amount,
          taxes,
        })),
      ).toEqual([
        { description: 'own rates', amount: 1000, net_amount: 1000, ...untaxed },
        { description: 'defaults', amount: 900, net_amount: 900, ...untaxed },
        { description: 'inclusive', amount: 1100, net_amount: 1100, ...untaxed },
      ]);
      expect(manual).toMatchObject({ subtotal: 3000, taxes: [], tax_amount: 0, total: 3000 });

      // A charge with its own rates issued at once, and a pending one with them, then a bill run.
      const now = await postCharge(token, exemptId, {
        description: 'Router',
        amount: 4900,
        currency: 'EUR',
        tax_rate_ids: [ids.red9],
        invoice_now: true,
      });
      const nowInvoice = (await getInvoice(t, token, now.invoice_id!)) as unknown as Invoice;
      expect(nowInvoice).toMatchObject({ subtotal: 4900, taxes: [], tax_amount: 0, total: 4900 });
      expect(nowInvoice.lines).toEqual([
        expect.objectContaining({ charge_id: now.id, net_amount: 4900, ...untaxed }),
      ]);

      await postCharge(token, exemptId, {
        description: 'Visit',
        amount: 800,
        currency: 'EUR',
        tax_rate_ids: [ids.red9],
      });
      await createActiveService(t, token, exemptId, plan.id);
      await runOn(token, `${y}-03-01`);
      const [, , run] = (await invoicesOf(t, token, exemptId)) as unknown as Invoice[];
      expect(
        run.lines.map((line) => [
          line.amount,
          line.net_amount,
          line.tax_rate_ids,
          line.tax_amount,
          line.taxes,
        ]),
      ).toEqual([
        [4000, 4000, [], 0, []],
        [800, 800, [], 0, []],
      ]);
      expect(run).toMatchObject({ subtotal: 4800, taxes: [], tax_amount: 0, total: 4800 });

      // No longer exempt: the next invoice is taxed.
      const patched = await api(token).patch(`/api/v1/subscribers/${exemptId}`, { tax_exempt: false });
      expectSuccess(patched);
      expect(patched.body.data).toMatchObject({ tax_exempt: false, tax_exempt_reason: null });
      const taxed = await postInvoice(token, {
        subscriber_id: exemptId,
        currency: 'EUR',
        lines: [{ description: 'defaults', quantity: 2, unit_amount: 450 }],
      });
      // 900 × 21% = 189
      expect(taxed).toMatchObject({ subtotal: 900, tax_amount: 189, total: 1089 });
    });

    it("should take a plan's own rates over the profile's, [] as untaxed, a charge's own rates over both, in one bill run", async () => {
      const y = nextYear();
      app.clock.set(at(`${y}-03-01`, '00:30'));
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const ids = await createRates(token, ['vat', 'ct10Incl', 'red9']);
      const profile = await createProfile(token, { currency: 'EUR', tax_rate_ids: [ids.vat] });
      const own = await createPlan(t, token, {
        name: `Own ${y}`,
        price: 4000,
        currency: 'EUR',
        tax_rate_ids: [ids.red9],
      });
      const defaults = await createPlan(t, token, { name: `Defaults ${y}`, price: 3000, currency: 'EUR' });
      const none = await createPlan(t, token, {
        name: `None ${y}`,
        price: 2000,
        currency: 'EUR',
        tax_rate_ids: [],
      });
      expect([own.tax_rate_ids, defaults.tax_rate_ids, none.tax_rate_ids]).toEqual([[ids.red9], null, []]);

      const subscriberId = await newSubscriber(token, profile.id);
      for (const plan of [own, defaults, none]) {
        await createActiveService(t, token, subscriberId, plan.id);
      }
      const inclusive = await postCharge(token, subscriberId, {
        description: 'Installation (tax included)',
        amount: 1100,
        currency: 'EUR',
        tax_rate_ids: [ids.ct10Incl],
      });
      const plain = await postCharge(token, subscriberId, {
        description: 'Cable',
        amount: 500,
        currency: 'EUR',
      });
      const free = await postCharge(token, subscriberId, {
        description: 'Deposit',
        amount: 700,
        currency: 'EUR',
        tax_rate_ids: [],
      });
      expect([inclusive.tax_rate_ids, plain.tax_rate_ids, free.tax_rate_ids]).toEqual([
        [ids.ct10Incl],
        null,
        [],
      ]);

      const run = await runOn(token, `${y}-03-01`);
      const [invoice] = (await invoicesOf(t, token, subscriberId)) as unknown as Invoice[];
      expect(
        invoice.lines.map((line) => ({
          description: line.description,
          amount: line.amount,
          net: line.net_amount,
          rates: line.tax_rate_ids,
          tax: line.tax_amount,
          taxes: line.taxes.map((tax) => [tax.tax_rate_id, tax.taxable_amount, tax.amount]),
        })),
      ).toEqual([
        // 4000 × 9% = 360
        {
          description: `${own.name}, ${y}-03-01 to ${y}-03-31`,
          amount: 4000,
          net: 4000,
          rates: [ids.red9],
          tax: 360,
          taxes: [[ids.red9, 4000, 360]],
        },
        // 3000 × 21% = 630
        {
          description: `${defaults.name}, ${y}-03-01 to ${y}-03-31`,
          amount: 3000,
          net: 3000,
          rates: [ids.vat],
          tax: 630,
          taxes: [[ids.vat, 3000, 630]],
        },
        {
          description: `${none.name}, ${y}-03-01 to ${y}-03-31`,
          amount: 2000,
          net: 2000,
          rates: [],
          tax: 0,
          taxes: [],
        },
        // 1100 / 1.1 = 1000; 100
        {
          description: 'Installation (tax included)',
          amount: 1100,
          net: 1000,
          rates: [ids.ct10Incl],
          tax: 100,
          taxes: [[ids.ct10Incl, 1000, 100]],
        },
        // 500 × 21% = 105
        {
          description: 'Cable',
          amount: 500,
          net: 500,
          rates: [ids.vat],
          tax: 105,
          taxes: [[ids.vat, 500, 105]],
        },
        { description: 'Deposit', amount: 700, net: 700, rates: [], tax: 0, taxes: [] },
      ]);
      expect({
        subtotal: invoice.subtotal,
        rows: invoice.taxes.map((row) => [row.tax_rate_id, row.taxable_amount, row.amount]),
        tax: invoice.tax_amount,
        total: invoice.total,
      }).toEqual({
        subtotal: 11200, // 4000 + 3000 + 2000 + 1000 + 500 + 700
        rows: [
          [ids.red9, 4000, 360],
          [ids.vat, 3500, 735], // 3000 + 500; 630 + 105
          [ids.ct10Incl, 1000, 100],
        ],
        tax: 1195,
        total: 12395,
      });
      expectDocumentConsistent(invoice);
      expect(run.amount_total).toEqual([{ currency: 'EUR', amount: 12395 }]);

      // A charge issued at once is taxed the same way: its own rates, else the profile's.
      const now = await postCharge(token, subscriberId, {
        description: 'Router',
        amount: 2000,
        currency: 'EUR',
        tax_rate_ids: [ids.red9],
        invoice_now: true,
      });
      // 2000 × 9% = 180
      expect(await getInvoice(t, token, now.invoice_id!)).toMatchObject({
        subtotal: 2000,
        tax_amount: 180,
        total: 2180,
      });
      const byDefault = await postCharge(token, subscriberId, {
        description: 'Antenna',
        amount: 1550,
        currency: 'EUR',
        invoice_now: true,
      });
      // 1550 × 21% = 325.5 → 326
      expect(await getInvoice(t, token, byDefault.invoice_id!)).toMatchObject({
        subtotal: 1550,
        tax_amount: 326,
        total: 1876,
      });

      // A manual invoice carries the pending charges, each taxed at its own rates.
      await postCharge(token, subscriberId, {
        description: 'Visit',
        amount: 1000,
        currency: 'EUR',
        tax_rate_ids: [ids.red9],
      });
      const manual = await postInvoice(token, {
        subscriber_id: subscriberId,
        currency: 'EUR',
        lines: [{ description: 'Static IP', quantity: 1, unit_amount: 500, tax_rate_ids: [] }],
      });
      expect(manual.lines.map((line) => [line.description, line.tax_rate_ids, line.tax_amount])).toEqual([
        ['Static IP', [], 0],
        ['Visit', [ids.red9], 90],
      ]);
      expect(manual).toMatchObject({ subtotal: 1500, tax_amount: 90, total: 1590 });
    });

    it("should tax a late fee at the billing profile's default rates", async () => {
      const y = nextYear();
      const day = `${y}-06-10`;
      app.clock.set(at(day, '10:00'));
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const ids = await createRates(token, ['vat']);
      const profile = await createProfile(token, {
        currency: 'EUR',
        tax_rate_ids: [ids.vat],
        late_fee: { type: 'fixed', amount: 550 },
      });
      const subscriberId = await newSubscriber(token, profile.id);
      const invoice = await createInvoice(t, token, subscriberId, 1000, {
        currency: 'EUR',
        due_date: addDays(day, -1),
      });
      expect(invoice.total).toBe(1210);

      const [fee] = await waitUntil(
        async () =>
          (
            await listAll<Charge>(t, token, `/api/v1/subscribers/${subscriberId}/charges`, {
              status: 'invoiced',
            })
          ).filter((charge) => charge.source === 'late_fee'),
        (fees) => fees.length > 0,
        { what: 'an invoiced late fee' },
      );
      expect(fee).toMatchObject({ amount: 550, tax_rate_ids: null });
      const feeInvoice = (await getInvoice(t, token, fee.invoice_id!)) as unknown as Invoice;
      // 550 × 21% = 115.5 → 116
      expect(feeInvoice.lines).toEqual([
        expect.objectContaining({
          description: `Late fee for invoice ${invoice.number}`,
          amount: 550,
          charge_id: fee.id,
          tax_rate_ids: [ids.vat],
          net_amount: 550,
          tax_amount: 116,
          taxes: [lineTax(ids, ['vat', 550, 116])],
        }),
      ]);
      expect(feeInvoice).toMatchObject({ subtotal: 550, tax_amount: 116, total: 666, amount_due: 666 });
    });
  });

  // ---------- 3. proration through bill runs ----------

  it('should tax every line of bill runs with proration: a plan change, arrears, and the settlement of a termination', async () => {
    const y = nextYear();
    const day = (mmdd: string) => `${y}-${mmdd}`;
    app.clock.set(at(day('03-01'), '00:30'));
    const tenant = await createRunTenant(t);
    const token = tenant.token;
    const ids = await createRates(token, ['vat', 'gst', 'qst']);
    const profile = await createProfile(token, { currency: 'EUR', tax_rate_ids: [ids.vat] });
    const a = await createPlan(t, token, {
      name: `A ${y}`,
      price: 3174,
      currency: 'EUR',
      tax_rate_ids: [ids.vat],
    });
    const b = await createPlan(t, token, {
      name: `B ${y}`,
      price: 6200,
      currency: 'EUR',
      tax_rate_ids: [ids.gst, ids.qst],
    });
    const c = await createPlan(t, token, { name: `C ${y}`, price: 2000, currency: 'EUR' });
    const subscriberId = await newSubscriber(token, profile.id);
    const first = await createActiveService(t, token, subscriberId, a.id);

    const summary = (invoice: Invoice) => ({
      lines: invoice.lines.map((line) => ({
        description: line.description,
        amount: line.amount,
        net: line.net_amount,
        tax: line.tax_amount,
        taxes: line.taxes.map((tax) => [tax.tax_rate_id, tax.taxable_amount, tax.amount]),
      })),
      subtotal: invoice.subtotal,
      rows: invoice.taxes.map((row) => [row.tax_rate_id, row.taxable_amount, row.amount]),
      tax: invoice.tax_amount,
      total: invoice.total,
    });

    // March 1: March in advance on A. 3174 × 21% = 666.54 → 667.
    const march = await runOn(token, day('03-01'));
    let invoices = (await invoicesOf(t, token, subscriberId)) as unknown as Invoice[];
    expect(summary(invoices[0])).toEqual({
      lines: [
        {
          description: `${a.name}, ${day('03-01')} to ${day('03-31')}`,
          amount: 3174,
          net: 3174,
          tax: 667,
          taxes: [[ids.vat, 3174, 667]],
        },
      ],
      subtotal: 3174,
      rows: [[ids.vat, 3174, 667]],
      tax: 667,
      total: 3841,
    });
    expect(march.amount_total).toEqual([{ currency: 'EUR', amount: 3841 }]);

    // March 11: A → B; March 16: a second service on C (its profile's defaults).
    app.clock.set(at(day('03-11'), '01:30'));
    await actOnService(t, token, first.id, { action: 'change_plan', plan_id: b.id });
    app.clock.set(at(day('03-16'), '00:30'));
    await createActiveService(t, token, subscriberId, c.id);

    // April 1: A's unused March days credited at A's rates, B's March days and C's arrears prorated, April in advance.
    const april = await runOn(token, day('04-01'));
    invoices = (await invoicesOf(t, token, subscriberId)) as unknown as Invoice[];
    expect(invoices).toHaveLength(2);
    expect(summary(invoices[1])).toEqual({
      lines: [
        // credit 3174 − round(3174 × 10 / 31 = 1023.87) = 2150; −2150 × 21% = −451.5 → −452 (away from zero)
        {
          description: `Credit: ${a.name}, unused ${day('03-11')} to ${day('03-31')} (21 of 31 days)`,
          amount: -2150,
          net: -2150,
          tax: -452,
          taxes: [[ids.vat, -2150, -452]],
        },
        // round(6200 × 21 / 31) = 4200; GST 210; QST 4410 × 9.975% = 439.8975 → 440
        {
          description: `${b.name}, ${day('03-11')} to ${day('03-31')} (21 of 31 days)`,
          amount: 4200,
          net: 4200,
          tax: 650,
          taxes: [
            [ids.gst, 4200, 210],
            [ids.qst, 4410, 440],
          ],
        },
        // round(2000 × 16 / 31 = 1032.26) = 1032; × 21% = 216.72 → 217
        {
          description: `${c.name}, ${day('03-16')} to ${day('03-31')} (16 of 31 days)`,
          amount: 1032,
          net: 1032,
          tax: 217,
          taxes: [[ids.vat, 1032, 217]],
        },
        // GST 310; QST 6510 × 9.975% = 649.3725 → 649
        {
          description: `${b.name}, ${day('04-01')} to ${day('04-30')}`,
          amount: 6200,
          net: 6200,
          tax: 959,
          taxes: [
            [ids.gst, 6200, 310],
            [ids.qst, 6510, 649],
          ],
        },
        {
          description: `${c.name}, ${day('04-01')} to ${day('04-30')}`,
          amount: 2000,
          net: 2000,
          tax: 420,
          taxes: [[ids.vat, 2000, 420]],
        },
      ],
      subtotal: 11282, // −2150 + 4200 + 1032 + 6200 + 2000
      rows: [
        [ids.vat, 882, 185], // −2150 + 1032 + 2000; −452 + 217 + 420
        [ids.gst, 10400, 520],
        [ids.qst, 10920, 1089],
      ],
      tax: 1794,
      total: 13076,
    });
    expectDocumentConsistent(invoices[1]);
    expect(april.amount_total).toEqual([{ currency: 'EUR', amount: 13076 }]);
    const items = await api(token).get(`/api/v1/billing-runs/${april.id}/items`);
    expectList(items);
    const runItems = items.body.data as { total: number; lines: Line[] }[];
    expect(runItems.map((item) => [item.total, item.lines])).toEqual([
      [13076, invoices[1].lines.map((line) => expect.objectContaining(line) as unknown)],
    ]);

    // April 21: the B service ends; its settlement credits B's unused April days, as a pending charge at B's rates.
    app.clock.set(at(day('04-21'), '01:30'));
    await actOnService(t, token, first.id, { action: 'terminate' });
    const pending = await listAll<Charge>(t, token, `/api/v1/subscribers/${subscriberId}/charges`, {
      status: 'pending',
    });
    // 6200 − round(6200 × 20 / 30 = 4133.33) = 2067
    expect(pending.map((charge) => [charge.source, charge.amount, charge.tax_rate_ids])).toEqual([
      ['termination', -2067, [ids.gst, ids.qst]],
    ]);

    // May 1: the settlement at B's rates, C's May at the defaults.
    await runOn(token, day('05-01'));
    invoices = (await invoicesOf(t, token, subscriberId)) as unknown as Invoice[];
    expect(invoices).toHaveLength(3);
    expect(summary(invoices[2])).toEqual({
      lines: [
        // GST −2067 × 5% = −103.35 → −103; QST −2170 × 9.975% = −216.4575 → −216
        {
          description: `Credit: ${b.name}, unused ${day('04-21')} to ${day('04-30')} (10 of 30 days)`,
          amount: -2067,
          net: -2067,
          tax: -319,
          taxes: [
            [ids.gst, -2067, -103],
            [ids.qst, -2170, -216],
          ],
        },
        {
          description: `${c.name}, ${day('05-01')} to ${day('05-31')}`,
          amount: 2000,
          net: 2000,
          tax: 420,
          taxes: [[ids.vat, 2000, 420]],
        },
      ],
      subtotal: -67,
      rows: [
        [ids.gst, -2067, -103],
        [ids.qst, -2170, -216],
        [ids.vat, 2000, 420],
      ],
      tax: 101,
      total: 34,
    });
    for (const invoice of invoices) {
      expectDocumentConsistent(invoice);
      expect(invoice.status).toBe('open');
    }
  });

  // ---------- 4. credit notes and the tax report ----------

  describe('credit notes and the tax report', () => {
    let tenant: TenantWithToken;
    let ids: RateIds;
    let eurSubscriber: string;
    let jpySubscriber: string;
    let invoice: Invoice;
    const notes: CreditNote[] = [];
    /**
     * The report's period: around the app's today (invoices and credit notes are dated by its Clock, which the bill-run
     * tests above moved years ahead), well inside 400 days.
     */
    let today: string;
    let period: { from: string; to: string };

    beforeAll(async () => {
      today = app.clock.today();
      period = { from: addDays(today, -30), to: addDays(today, 30) };
      tenant = await createRunTenant(t);
      ids = await createRates(tenant.token, ['vat', 'gst', 'qst', 'ct10Incl']);
      const eur = await createProfile(tenant.token, { currency: 'EUR', tax_rate_ids: [ids.vat] });
      const jpy = await createProfile(tenant.token, { currency: 'JPY', tax_rate_ids: [ids.vat] });
      eurSubscriber = await newSubscriber(tenant.token, eur.id);
      jpySubscriber = await newSubscriber(tenant.token, jpy.id);
      invoice = await postInvoice(tenant.token, {
        subscriber_id: eurSubscriber,
        currency: 'EUR',
        lines: [
          { description: 'Fiber 500', quantity: 1, unit_amount: 10000 }, // VAT 2100 → 12100
          { description: 'Business line', quantity: 1, unit_amount: 10000, tax_rate_ids: [ids.gst, ids.qst] }, // 500 + 1047 → 11547
          { description: 'Installation', quantity: 1, unit_amount: 1100, tax_rate_ids: [ids.ct10Incl] }, // 1000 + 100
        ],
      });
      expect({ subtotal: invoice.subtotal, tax: invoice.tax_amount, total: invoice.total }).toEqual({
        subtotal: 21000,
        tax: 3747,
        total: 24747,
      });
    });

    it('should credit part of a line (tax included) at the rates of the line it reverses', async () => {
      const note = await creditNote(tenant.token, invoice.id, { lines: [{ line: 0, amount: 1210 }] });
      notes.push(note);
      expect(note).toMatchObject({
        number: expect.stringMatching(/^CN-\d{4}-000001$/),
        sequence: 1,
        invoice_id: invoice.id,
        subscriber_id: eurSubscriber,
        currency: 'EUR',
        reason: 'Outage',
        // 1210 / 1.21 = 1000; 210
        subtotal: 1000,
        taxes: [lineTax(ids, ['vat', 1000, 210])],
        tax_amount: 210,
        total: 1210,
        applied_to_invoice: 1210,
        refund_transaction_id: null,
      });
      expect(note.lines).toEqual([
        expect.objectContaining({
          invoice_line: 0,
          description: 'Fiber 500',
          amount: 1000, // the line was priced exclusive: the credit is too
          tax_rate_ids: [ids.vat],
          net_amount: 1000,
          tax_amount: 210,
          taxes: [lineTax(ids, ['vat', 1000, 210])],
        }),
      ]);
      expectDocumentConsistent(note);
      expect(await getInvoice(t, tenant.token, invoice.id)).toMatchObject({
        status: 'partially_paid',
        amount_paid: 1210,
        amount_due: 23537,
      });
    });

    it('should credit a whole compound-taxed line back to exactly its net and taxes', async () => {
      const note = await creditNote(tenant.token, invoice.id, { lines: [{ line: 1 }] });
      notes.push(note);
      expect(note).toMatchObject({
        sequence: 2,
        subtotal: 10000,
        taxes: [lineTax(ids, ['gst', 10000, 500]), lineTax(ids, ['qst', 10500, 1047])],
        tax_amount: 1547,
        total: 11547,
      });
      expect(
        note.lines.map((line) => [line.invoice_line, line.amount, line.net_amount, line.tax_rate_ids]),
      ).toEqual([[1, 10000, 10000, [ids.gst, ids.qst]]]);
      expectDocumentConsistent(note);
      expectError(
        await api(tenant.token).post(`/api/v1/invoices/${invoice.id}/credit-notes`, {
          reason: 'again',
          lines: [{ line: 1 }],
        }),
        422,
        'credit_exceeds_invoice',
        'lines.0.line',
      );
    });

    it('should spread an amount over what is left of the lines, each part taxed like its line', async () => {
      // Left: line 0 12100 − 1210 = 10890, line 1 0, line 2 1100. 2000 × 10890 / 11990 = 1816.5… and
      // 2000 × 1100 / 11990 = 183.4…: 1816 + 183 = 1999, the unit left to the larger remainder (line 0): 1817 + 183.
      const note = await creditNote(tenant.token, invoice.id, { amount: 2000 });
      notes.push(note);
      expect(
        note.lines.map((line) => [
          line.invoice_line,
          line.amount,
          line.net_amount,
          line.tax_amount,
          line.taxes.map((tax) => tax.tax_rate_id),
        ]),
      ).toEqual([
        // 1817 / 1.21 = 1501.65 → 1502; 1502 × 21% = 315.42 → 315; 1502 + 315 = 1817 (priced exclusive: amount = net)
        [0, 1502, 1502, 315, [ids.vat]],
        // 183 / 1.1 = 166.36 → 166; 16.6 → 17; 166 + 17 = 183 (priced inclusive: amount = gross)
        [2, 183, 166, 17, [ids.ct10Incl]],
      ]);
      expect(note).toMatchObject({
        subtotal: 1668,
        taxes: [lineTax(ids, ['vat', 1502, 315]), lineTax(ids, ['ct10Incl', 166, 17])],
        tax_amount: 332,
        total: 2000,
      });
      expectDocumentConsistent(note);

      // 24747 − 1210 − 11547 − 2000 = 9990 left; line 0 has 10890 − 1817 = 9073.
      expectError(
        await api(tenant.token).post(`/api/v1/invoices/${invoice.id}/credit-notes`, {
          reason: 'x',
          amount: 9991,
        }),
        422,
        'credit_exceeds_invoice',
        'amount',
      );
      expectError(
        await api(tenant.token).post(`/api/v1/invoices/${invoice.id}/credit-notes`, {
          reason: 'x',
          lines: [{ line: 0, amount: 9074 }],
        }),
        422,
        'credit_exceeds_invoice',
        'lines.0.amount',
      );
      expect(await getInvoice(t, tenant.token, invoice.id)).toMatchObject({
        status: 'partially_paid',
        amount_due: 9990,
      });
      const listed = await listAll<CreditNote>(t, tenant.token, '/api/v1/credit-notes', {
        invoice_id: invoice.id,
      });
      expect(listed.map((each) => each.id).sort()).toEqual(notes.map((each) => each.id).sort());
    });

    it('should report per currency and rate the invoices less the credit notes, leaving void and draft invoices out', async () => {
      const token = tenant.token;
      // Another EUR invoice (3333 × 21% = 699.93 → 700), a voided and a draft one, and a JPY invoice with a credit note.
      await postInvoice(token, {
        subscriber_id: eurSubscriber,
        currency: 'EUR',
        lines: [{ description: 'Static IP', quantity: 1, unit_amount: 3333 }],
      });
      const voided = await postInvoice(token, {
        subscriber_id: eurSubscriber,
        currency: 'EUR',
        lines: [{ description: 'Mistake', quantity: 1, unit_amount: 7000, tax_rate_ids: [ids.gst, ids.qst] }],
      });
      expectSuccess(await voidInvoice(t, token, voided.id));
      await postInvoice(token, {
        subscriber_id: eurSubscriber,
        currency: 'EUR',
        draft: true,
        lines: [{ description: 'Draft', quantity: 1, unit_amount: 9000 }],
      });
      const yen = await postInvoice(token, {
        subscriber_id: jpySubscriber,
        currency: 'JPY',
        lines: [
          { description: 'Fiber', quantity: 1, unit_amount: 2350 }, // 493.5 → 494 → 2844
          {
            description: 'Router (tax included)',
            quantity: 1,
            unit_amount: 1234,
            tax_rate_ids: [ids.ct10Incl],
          }, // 1122 + 112
        ],
      });
      expect(yen).toMatchObject({ subtotal: 3472, tax_amount: 606, total: 4078 });
      // 1000 over 2844 and 1234: 697.4 → 697 and 302.6 → 302, the yen left to the larger remainder (the router): 697 +
      // 303. 697 / 1.21 = 576.03 → 576, 120.96 → 121; 303 / 1.1 = 275.45 → 275, 27.5 → 28.
      const yenNote = await creditNote(token, yen.id, { amount: 1000 });
      expect(yenNote.lines.map((line) => [line.invoice_line, line.net_amount, line.tax_amount])).toEqual([
        [0, 576, 121],
        [1, 275, 28],
      ]);
      expect(yenNote).toMatchObject({ currency: 'JPY', subtotal: 851, tax_amount: 149, total: 1000 });

      const res = await api(token).get('/api/v1/reports/tax', period);
      expectSuccess(res);
      expect({ from: res.body.data.from, to: res.body.data.to }).toEqual(period);
      const rows = res.body.data.rows as ReportRow[];
      const row = (
        currency: string,
        key: RateKey,
        figures: Omit<ReportRow, 'currency' | 'tax_rate_id' | 'name' | 'percentage'>,
      ) => ({
        currency,
        tax_rate_id: ids[key],
        name: RATES[key].name,
        percentage: fourDecimals(RATES[key].percentage),
        ...figures,
      });
      const byKey = (x: ReportRow, z: ReportRow) =>
        x.currency.localeCompare(z.currency) ||
        (x.tax_rate_id < z.tax_rate_id ? -1 : x.tax_rate_id > z.tax_rate_id ? 1 : 0);
      expect([...rows].sort(byKey)).toEqual(
        [
          // 10000 + 3333 − 1000 − 1502; 2100 + 700 − 210 − 315
          row('EUR', 'vat', {
            taxable_amount: 10831,
            tax_amount: 2275,
            invoiced_tax: 2800,
            credited_tax: 525,
            invoices: 2,
            credit_notes: 2,
          }),
          // the whole line credited: nothing left to declare (the void invoice's 7000 is not counted)
          row('EUR', 'gst', {
            taxable_amount: 0,
            tax_amount: 0,
            invoiced_tax: 500,
            credited_tax: 500,
            invoices: 1,
            credit_notes: 1,
          }),
          row('EUR', 'qst', {
            taxable_amount: 0,
            tax_amount: 0,
            invoiced_tax: 1047,
            credited_tax: 1047,
            invoices: 1,
            credit_notes: 1,
          }),
          // 1000 − 166; 100 − 17
          row('EUR', 'ct10Incl', {
            taxable_amount: 834,
            tax_amount: 83,
            invoiced_tax: 100,
            credited_tax: 17,
            invoices: 1,
            credit_notes: 1,
          }),
          // 2350 − 576; 494 − 121
          row('JPY', 'vat', {
            taxable_amount: 1774,
            tax_amount: 373,
            invoiced_tax: 494,
            credited_tax: 121,
            invoices: 1,
            credit_notes: 1,
          }),
          // 1122 − 275; 112 − 28
          row('JPY', 'ct10Incl', {
            taxable_amount: 847,
            tax_amount: 84,
            invoiced_tax: 112,
            credited_tax: 28,
            invoices: 1,
            credit_notes: 1,
          }),
        ].sort(byKey),
      );
      expect(rows.map((each) => each.currency)).toEqual([...rows.map((each) => each.currency)].sort());

      // The same figures from the documents themselves: issued invoices' rows less credit notes' rows, to the unit.
      const invoices = (await listAll<Invoice>(t, token, '/api/v1/invoices')).filter(
        (each) => !['void', 'draft'].includes(each.status),
      );
      const credits = await listAll<CreditNote>(t, token, '/api/v1/credit-notes');
      expect(credits).toHaveLength(4);
      const sums = new Map<string, { taxable: number; tax: number }>();
      const add = (currency: string, taxes: LineTax[], sign: number) => {
        for (const tax of taxes) {
          const key = `${currency} ${tax.tax_rate_id}`;
          const sum = sums.get(key) ?? { taxable: 0, tax: 0 };
          sum.taxable += sign * tax.taxable_amount;
          sum.tax += sign * tax.amount;
          sums.set(key, sum);
        }
      };
      invoices.forEach((each) => add(each.currency, each.taxes, 1));
      credits.forEach((each) => add(each.currency, each.taxes, -1));
      expect(
        Object.fromEntries(
          rows.map((each) => [
            `${each.currency} ${each.tax_rate_id}`,
            { taxable: each.taxable_amount, tax: each.tax_amount },
          ]),
        ),
      ).toEqual(Object.fromEntries(sums));

      // A period before any of it: no rows.
      const before = await api(token).get('/api/v1/reports/tax', {
        from: addDays(today, -400),
        to: addDays(today, -31),
      });
      expectSuccess(before);
      expect(before.body.data.rows).toEqual([]);
    });

    it('should answer 400 invalid_query for from after to, more than 400 days or a missing day, and need billing:read', async () => {
      const get = (query: Record<string, string>, token = tenant.token) =>
        api(token).get('/api/v1/reports/tax', query);
      expectError(await get({ from: '2026-02-01', to: '2026-01-31' }), 400, 'invalid_query', 'from');
      expectError(await get({ from: '2026-01-01', to: '2027-02-05' }), 400, 'invalid_query', 'to'); // 401 days
      expectSuccess(await get({ from: '2026-01-01', to: '2027-02-04' })); // 400 days
      expectError(await get({ from: '2026-01-01' }), 400, 'invalid_query', 'to');
      expectError(await get({ from: '2026-13-01', to: '2026-12-31' }), 400, 'invalid_query', 'from');

      const reader = await issueToken(t, tenant.slug, ['billing:read']);
      const res = await get(period, reader.token);
      expectSuccess(res);
      expect(res.body.data.rows).toHaveLength(6);
      const other = await issueToken(t, tenant.slug, ['subscribers:read']);
      expectError(await get(period, other.token), 403, 'insufficient_scope');
      expectError(
        await request(t.http).get('/api/v1/reports/tax').query(period),
        401,
        'authentication_required',
      );
      // Another tenant sees none of it.
      const stranger = await createRunTenant(t);
      const theirs = await get(period, stranger.token);
      expectSuccess(theirs);
      expect(theirs.body.data.rows).toEqual([]);
    });
  });

  // ---------- 5. a rate in use ----------

  it('should let a rate be edited until an issued invoice uses it, then answer 409 tax_rate_in_use', async () => {
    const tenant = await createRunTenant(t);
    const token = tenant.token;
    const ids = await createRates(token, ['vat']);
    const profile = await createProfile(token, { currency: 'EUR', tax_rate_ids: [] });
    const subscriberId = await newSubscriber(token, profile.id);
    const path = `/api/v1/tax-rates/${ids.vat}`;

    // Unused: edited in place.
    const edited = await api(token).patch(path, { percentage: '20' });
    expectSuccess(edited);
    expect(edited.body.data).toMatchObject({ percentage: '20.0000', first_used_at: null });

    // A draft does not use it; finalising it does, at the rate as it is then.
    const draft = await postInvoice(token, {
      subscriber_id: subscriberId,
      currency: 'EUR',
      draft: true,
      lines: [{ description: 'Fiber', quantity: 1, unit_amount: 1050, tax_rate_ids: [ids.vat] }],
    });
    expect(draft.number).toBeNull();
    expect((await getRate(token, ids.vat)).first_used_at).toBeNull();
    expectSuccess(await api(token).patch(path, { percentage: '19' }));
    const finalized = await finalizeInvoice(t, token, draft.id);
    expectSuccess(finalized);
    // 1050 × 19% = 199.5 → 200
    expect(finalized.body.data).toMatchObject({
      status: 'open',
      subtotal: 1050,
      tax_amount: 200,
      total: 1250,
    });
    expect(finalized.body.data.taxes).toEqual([
      {
        tax_rate_id: ids.vat,
        name: 'VAT 21%',
        percentage: '19.0000',
        inclusive: false,
        compound: false,
        taxable_amount: 1050,
        amount: 200,
      },
    ]);
    const used = await getRate(token, ids.vat);
    expect(used.first_used_at).toEqual(expect.any(String));

    // In use: what computes or prints is fixed; archiving is not.
    for (const body of [{ percentage: '21' }, { name: 'VAT' }, { inclusive: true }, { compound: true }]) {
      expectError(await api(token).patch(path, body), 409, 'tax_rate_in_use', Object.keys(body)[0]);
    }
    const archived = await api(token).patch(path, { active: false });
    expectSuccess(archived);
    expect(archived.body.data).toMatchObject({
      active: false,
      percentage: '19.0000',
      first_used_at: used.first_used_at,
    });
    expect((await getInvoice(t, token, draft.id)).taxes).toEqual(finalized.body.data.taxes);

    // A rate used only through a profile's defaults is in use too.
    const [other] = Object.values(await createRates(token, ['gst']));
    expectSuccess(
      await api(token).patch(`/api/v1/billing-profiles/${profile.id}`, { tax_rate_ids: [other] }),
    );
    await postInvoice(token, {
      subscriber_id: subscriberId,
      currency: 'EUR',
      lines: [{ description: 'Fiber', quantity: 1, unit_amount: 1000 }],
    });
    expect((await getRate(token, other)).first_used_at).toEqual(expect.any(String));
    expectError(
      await api(token).patch(`/api/v1/tax-rates/${other}`, { percentage: '6' }),
      409,
      'tax_rate_in_use',
      'percentage',
    );
  });
});
