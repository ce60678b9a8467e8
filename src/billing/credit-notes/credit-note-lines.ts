import { lineGross, lineNet, type InvoiceLine } from '../invoices/invoice.entity';
import {
  taxLine,
  taxSummary,
  type LineTax,
  type TaxRateInfo,
  type TaxSummaryRow,
} from '../taxes/tax-computation';

/**
 * What a credit note credits, as pure functions of the invoice's lines (docs/billing.md, "Credit notes"). Amounts are
 * tax included, as the invoice shows them: a line's gross is its net and its taxes. A credit of part of a line is
 * taxed like the line it reverses, at the rates the line was issued with (its snapshot, not today's rates), as a
 * tax-inclusive amount of those rates: crediting a whole line gives back exactly its net and taxes.
 */

/** One line of a credit note: the invoice line it reverses, and the part of it credited. */
export interface CreditNoteLine extends InvoiceLine {
  /** The index of the invoice line it credits (0-based, as in the invoice's `lines`). */
  invoice_line: number;
}

/** What is asked: some lines (each whole, or an amount of it), or an amount spread over the invoice. */
export type CreditRequest = { lines: { line: number; amount?: number }[] } | { amount: number };

/** Why a request cannot be credited, and which field to point at. */
export class CreditNoteProblem extends Error {
  constructor(
    readonly code: 'validation_failed' | 'credit_exceeds_invoice',
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

export interface CreditNotePlan {
  lines: CreditNoteLine[];
  subtotal: number;
  taxAmount: number;
  taxes: TaxSummaryRow[];
  /** Tax included: what the credit note is worth. */
  total: number;
}

/** What is left to credit of each invoice line (never below 0: a credit line of the invoice is not credited). */
export function creditableByLine(
  lines: readonly InvoiceLine[],
  credited: readonly CreditNoteLine[],
): number[] {
  const left = lines.map((line) => Math.max(0, lineGross(line)));
  for (const each of credited) {
    if (each.invoice_line >= 0 && each.invoice_line < left.length) {
      left[each.invoice_line] = Math.max(0, left[each.invoice_line] - lineGross(each));
    }
  }
  return left;
}

/** The rates a line was issued with, as a tax-inclusive split of a gross amount applies them. */
function ratesOf(line: InvoiceLine): TaxRateInfo[] {
  return (line.taxes ?? []).map((tax) => ({
    id: tax.tax_rate_id,
    name: tax.name,
    percentage: tax.percentage,
    inclusive: true,
    compound: tax.compound,
  }));
}

/** The split of a fresh part of a line: `gross` taxed as a tax-inclusive amount of the line's rates. */
function freshSplit(line: InvoiceLine, gross: number): { net: number; tax: number; taxes: LineTax[] } {
  return taxLine(gross, ratesOf(line));
}

/**
 * The split of what is left of a line once earlier credit notes took their parts: the line's net and each of its
 * taxes less what those parts took, so all the credits of a line add up to exactly what it was invoiced.
 */
function restSplit(
  line: InvoiceLine,
  earlier: readonly CreditNoteLine[],
): { net: number; tax: number; taxes: LineTax[] } {
  const taxes = (line.taxes ?? []).map((tax) => {
    const took = earlier.flatMap((part) =>
      (part.taxes ?? []).filter((each) => each.tax_rate_id === tax.tax_rate_id),
    );
    return {
      ...tax,
      taxable_amount: tax.taxable_amount - took.reduce((sum, each) => sum + each.taxable_amount, 0),
      amount: tax.amount - took.reduce((sum, each) => sum + each.amount, 0),
    };
  });
  const net = lineNet(line) - earlier.reduce((sum, part) => sum + lineNet(part), 0);
  return { net, tax: taxes.reduce((sum, each) => sum + each.amount, 0), taxes };
}

/**
 * A credit of `gross` (tax included) of invoice line `index`, priced as that line was (inclusive or exclusive): a
 * fresh split, or, when it takes all that is left of the line, the line's net and taxes less the earlier parts'.
 */
function creditLine(
  line: InvoiceLine,
  index: number,
  gross: number,
  left: number,
  earlier: readonly CreditNoteLine[],
): CreditNoteLine {
  const split = gross === left ? restSplit(line, earlier) : freshSplit(line, gross);
  const inclusive = (line.taxes ?? []).some((tax) => tax.inclusive);
  const amount = inclusive || split.taxes.length === 0 ? gross : split.net;
  return {
    invoice_line: index,
    description: line.description,
    quantity: 1,
    unit_amount: amount,
    amount,
    ...(line.service_id ? { service_id: line.service_id } : {}),
    ...(line.plan_id ? { plan_id: line.plan_id } : {}),
    ...(line.charge_id ? { charge_id: line.charge_id } : {}),
    ...(line.period_start ? { period_start: line.period_start, period_end: line.period_end } : {}),
    tax_rate_ids: (line.taxes ?? []).map((tax) => tax.tax_rate_id),
    net_amount: split.net,
    tax_amount: split.tax,
    taxes: split.taxes.map((tax) => ({ ...tax, inclusive: (line.taxes ?? [])[0]?.inclusive ?? false })),
  };
}

/** The gross to credit of each invoice line (its index), tax included. */
interface CreditPart {
  index: number;
  gross: number;
}

/**
 * The parts a request by lines asks for: each item a line of the invoice, its amount (or, left out, all that is left
 * of the line) at most what is left of it, counting the request's earlier items on the same line.
 */
function askedParts(
  lines: readonly InvoiceLine[],
  left: readonly number[],
  items: { line: number; amount?: number }[],
): CreditPart[] {
  const parts: CreditPart[] = [];
  const asked = new Map<number, number>();
  items.forEach((item, position) => {
    if (!Number.isInteger(item.line) || item.line < 0 || item.line >= lines.length) {
      throw new CreditNoteProblem(
        'validation_failed',
        `The invoice has lines 0 to ${lines.length - 1}; there is no line ${item.line}.`,
        `lines.${position}.line`,
      );
    }
    const gross = item.amount ?? left[item.line] - (asked.get(item.line) ?? 0);
    const total = (asked.get(item.line) ?? 0) + gross;
    if (gross <= 0 || total > left[item.line]) {
      throw new CreditNoteProblem(
        'credit_exceeds_invoice',
        `Line ${item.line} has ${Math.max(0, left[item.line] - (asked.get(item.line) ?? 0))} left to credit (tax included); ${gross} was asked.`,
        item.amount === undefined ? `lines.${position}.line` : `lines.${position}.amount`,
      );
    }
    asked.set(item.line, total);
    parts.push({ index: item.line, gross });
  });
  return parts;
}

/**
 * The parts of a request by amount, at most `room`: spread over the lines in proportion to what is left of each, by
 * largest remainder (each line's exact share rounded down, the units left over to the largest remainders), so the
 * parts add up to it exactly.
 */
function spreadAmount(amount: number, left: readonly number[], room: number): CreditPart[] {
  if (amount > room) {
    throw new CreditNoteProblem(
      'credit_exceeds_invoice',
      `The invoice has ${Math.max(0, room)} left to credit (tax included); ${amount} was asked.`,
      'amount',
    );
  }
  const weight = left.reduce((sum, each) => sum + each, 0);
  const shares = left.map((each, index) => {
    const exact = (BigInt(amount) * BigInt(each)) / BigInt(weight);
    const remainder = (BigInt(amount) * BigInt(each)) % BigInt(weight);
    return { index, gross: Number(exact), remainder };
  });
  let short = amount - shares.reduce((sum, share) => sum + share.gross, 0);
  for (const share of [...shares].sort((a, b) =>
    a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1,
  )) {
    if (short === 0) {
      break;
    }
    if (share.gross < left[share.index]) {
      share.gross += 1;
      short -= 1;
    }
  }
  return shares.filter((share) => share.gross > 0).map(({ index, gross }) => ({ index, gross }));
}

/**
 * Plans a credit note of an invoice of `invoiceTotal` (tax included) with `lines`, given the credit notes already
 * issued against it: at most what was invoiced less those, per line at most the line's gross less what was credited
 * of it. `amount` is spread over the lines in proportion to what is left of each (largest remainder, so the parts add
 * up to it exactly).
 */
export function planCreditNote(
  lines: readonly InvoiceLine[],
  invoiceTotal: number,
  credited: readonly CreditNoteLine[],
  request: CreditRequest,
): CreditNotePlan {
  const left = creditableByLine(lines, credited);
  const creditedTotal = credited.reduce((sum, line) => sum + lineGross(line), 0);
  const room = Math.min(
    invoiceTotal - creditedTotal,
    left.reduce((sum, each) => sum + each, 0),
  );
  const parts =
    'lines' in request ? askedParts(lines, left, request.lines) : spreadAmount(request.amount, left, room);
  // Two parts of one line in one request: the second is "the rest" only of what the first left.
  const taken = new Map<number, CreditNoteLine[]>();
  for (const each of credited) {
    taken.set(each.invoice_line, [...(taken.get(each.invoice_line) ?? []), each]);
  }
  const planned = parts.map((part) => {
    const earlier = taken.get(part.index) ?? [];
    const remaining = Math.max(
      0,
      lineGross(lines[part.index]) - earlier.reduce((sum, each) => sum + lineGross(each), 0),
    );
    const line = creditLine(lines[part.index], part.index, part.gross, remaining, earlier);
    taken.set(part.index, [...earlier, line]);
    return line;
  });
  const total = planned.reduce((sum, line) => sum + lineGross(line), 0);
  if (total > room) {
    throw new CreditNoteProblem(
      'credit_exceeds_invoice',
      `The invoice has ${Math.max(0, room)} left to credit (tax included); ${total} was asked.`,
      'lines',
    );
  }
  const taxAmount = planned.reduce((sum, line) => sum + (line.tax_amount ?? 0), 0);
  return { lines: planned, subtotal: total - taxAmount, taxAmount, taxes: taxSummary(planned), total };
}
