/**
 * The one tax computation (docs/billing.md, "Taxes"): bill runs, manual invoices, pending charges, fees, prorations and
 * credit notes all price a line through `taxLine` and sum an invoice's taxes through `taxSummary`. Pure: amounts are
 * integer minor units of the line's currency, percentages decimal strings of up to 4 decimals.
 *
 * Rounding: each tax of each line is rounded once, half away from zero, to the minor unit (what most tax authorities
 * ask of a tax per line, and what Stripe, UISP and Splynx do per line); the invoice's tax rows are sums of the lines'
 * rounded taxes, so the rows, the lines and the total always add up to the cent. A line priced tax-inclusive is split
 * into the net and taxes that the same line priced tax-exclusive at that net would have, whenever such a net exists;
 * otherwise the net takes the odd minor unit (the taxes stay those of the rounded net).
 */

/** A rate as a line applies it (a snapshot: an issued invoice keeps it whatever happens to the rate later). */
export interface TaxRateInfo {
  id: string;
  name: string;
  /** Decimal string, up to 4 decimals: "21", "7.5", "21.0000". */
  percentage: string;
  /** The line's amount includes this tax (all rates of a line are inclusive, or none). */
  inclusive: boolean;
  /** Applied on top of the line's other (non-compound, then earlier compound) taxes. */
  compound: boolean;
}

/** One tax on one line. */
export interface LineTax {
  tax_rate_id: string;
  name: string;
  percentage: string;
  inclusive: boolean;
  compound: boolean;
  /** What the rate applied to: the net, plus the other taxes for a compound rate. */
  taxable_amount: number;
  amount: number;
}

/** A line's amount split into net and taxes. */
export interface TaxedAmount {
  net: number;
  tax: number;
  /** net + tax: what the customer pays for the line. */
  gross: number;
  taxes: LineTax[];
}

/** One row of an invoice's tax summary: a rate, what it taxed and the tax, over all the invoice's lines. */
export interface TaxSummaryRow {
  tax_rate_id: string;
  name: string;
  percentage: string;
  inclusive: boolean;
  compound: boolean;
  taxable_amount: number;
  amount: number;
}

/** The most rates one line carries. */
export const MAX_RATES_PER_LINE = 3;

/** Percentages are kept to 4 decimals: millionths of the whole. */
const SCALE = 1_000_000n;

export class TaxComputationError extends Error {}

/** A percentage string as millionths (21.5 → 215000), or null when it is not 0–100 with at most 4 decimals. */
export function percentageMillionths(percentage: string): bigint | null {
  const match = /^(\d{1,3})(?:\.(\d{1,4}))?$/.exec(percentage);
  if (!match) {
    return null;
  }
  const value = BigInt(match[1]) * 10_000n + BigInt((match[2] ?? '').padEnd(4, '0'));
  return value <= 1_000_000n ? value : null;
}

/** The percentage as the API writes it: exactly 4 decimals ("21.0000"). */
export function formatPercentage(percentage: string): string {
  const millionths = percentageMillionths(percentage);
  if (millionths === null) {
    throw new TaxComputationError(`not a percentage: ${percentage}`);
  }
  return `${millionths / 10_000n}.${String(millionths % 10_000n).padStart(4, '0')}`;
}

/** `amount × numerator / denominator`, rounded half away from zero, for amounts of either sign. */
function roundedShare(amount: bigint, numerator: bigint, denominator: bigint): bigint {
  const negative = amount < 0n;
  const magnitude = negative ? -amount : amount;
  const share = (magnitude * numerator * 2n + denominator) / (2n * denominator);
  return negative ? -share : share;
}

function millionthsOf(rate: TaxRateInfo): bigint {
  const millionths = percentageMillionths(rate.percentage);
  if (millionths === null) {
    throw new TaxComputationError(`rate ${rate.id} has no valid percentage: ${rate.percentage}`);
  }
  return millionths;
}

/** The rates in the order they apply: the simple ones first, then the compound ones as given. */
function applyOrder(rates: readonly TaxRateInfo[]): TaxRateInfo[] {
  return [...rates.filter((rate) => !rate.compound), ...rates.filter((rate) => rate.compound)];
}

/** The taxes of a net amount: simple rates on the net, each compound rate on the net and the taxes before it. */
function taxesOfNet(net: bigint, rates: readonly TaxRateInfo[]): { taxes: LineTax[]; tax: bigint } {
  let simpleTax = 0n;
  let compoundBase = net;
  const taxes: LineTax[] = [];
  for (const rate of applyOrder(rates)) {
    const base = rate.compound ? compoundBase + simpleTax : net;
    const amount = roundedShare(base, millionthsOf(rate), SCALE);
    taxes.push({
      tax_rate_id: rate.id,
      name: rate.name,
      percentage: formatPercentage(rate.percentage),
      inclusive: rate.inclusive,
      compound: rate.compound,
      taxable_amount: Number(base),
      amount: Number(amount),
    });
    if (rate.compound) {
      compoundBase += amount;
    } else {
      simpleTax += amount;
    }
  }
  return { taxes, tax: taxes.reduce((sum, each) => sum + BigInt(each.amount), 0n) };
}

/** Checks a line's rates: at most three, no rate twice, all inclusive or all exclusive. */
export function assertRates(rates: readonly TaxRateInfo[]): void {
  if (rates.length > MAX_RATES_PER_LINE) {
    throw new TaxComputationError(`a line takes at most ${MAX_RATES_PER_LINE} tax rates`);
  }
  if (new Set(rates.map((rate) => rate.id)).size !== rates.length) {
    throw new TaxComputationError('a line takes each tax rate once');
  }
  if (rates.some((rate) => rate.inclusive !== rates[0].inclusive)) {
    throw new TaxComputationError('the tax rates of a line are all inclusive or all exclusive');
  }
  rates.forEach(millionthsOf);
}

/**
 * Splits a line's `amount` (as priced: the gross when its rates are inclusive, the net otherwise) into net and taxes.
 * No rates: the amount is the net and the gross.
 */
export function taxLine(amount: number, rates: readonly TaxRateInfo[]): TaxedAmount {
  assertRates(rates);
  if (!Number.isSafeInteger(amount)) {
    throw new TaxComputationError(`not an amount in minor units: ${amount}`);
  }
  if (rates.length === 0) {
    return { net: amount, tax: 0, gross: amount, taxes: [] };
  }
  if (!rates[0].inclusive) {
    const { taxes, tax } = taxesOfNet(BigInt(amount), rates);
    return { net: amount, tax: Number(tax), gross: amount + Number(tax), taxes };
  }
  const gross = BigInt(amount);
  // The exact net is gross / factor, factor = (1 + Σ simple) × Π (1 + compound): an exclusive line at the nearest
  // integer net (or one of its neighbours, rounding of up to three taxes can move the gross by a unit or two) gives
  // back exactly this gross in the common case.
  let numerator = SCALE + rates.filter((r) => !r.compound).reduce((sum, r) => sum + millionthsOf(r), 0n);
  let denominator = SCALE;
  for (const rate of rates.filter((r) => r.compound)) {
    numerator *= SCALE + millionthsOf(rate);
    denominator *= SCALE;
  }
  const estimate = roundedShare(gross, denominator, numerator);
  for (const delta of [0n, -1n, 1n, -2n, 2n]) {
    const net = estimate + delta;
    const { taxes, tax } = taxesOfNet(net, rates);
    if (net + tax === gross) {
      return { net: Number(net), tax: Number(tax), gross: amount, taxes };
    }
  }
  // No net reaches the gross: the taxes are those of the nearest net, and the net takes the odd unit. Each rate's
  // taxable amount is restated on that net (plus the taxes before a compound rate), so the tax rows and the report
  // add up to the lines' nets.
  const { taxes, tax } = taxesOfNet(estimate, rates);
  const net = gross - tax;
  let before = 0n;
  for (const each of taxes) {
    each.taxable_amount = Number(each.compound ? net + before : net);
    before += BigInt(each.amount);
  }
  return { net: Number(net), tax: Number(tax), gross: amount, taxes };
}

/** The invoice's tax rows: per rate (in the order the rates first appear on the lines), the sums of its lines' taxes. */
export function taxSummary(lines: readonly { taxes?: readonly LineTax[] }[]): TaxSummaryRow[] {
  const rows = new Map<string, TaxSummaryRow>();
  for (const line of lines) {
    for (const tax of line.taxes ?? []) {
      const key = `${tax.tax_rate_id}\u0000${tax.percentage}`;
      const row = rows.get(key);
      if (row) {
        row.taxable_amount += tax.taxable_amount;
        row.amount += tax.amount;
      } else {
        rows.set(key, {
          tax_rate_id: tax.tax_rate_id,
          name: tax.name,
          percentage: tax.percentage,
          inclusive: tax.inclusive,
          compound: tax.compound,
          taxable_amount: tax.taxable_amount,
          amount: tax.amount,
        });
      }
    }
  }
  return [...rows.values()];
}
