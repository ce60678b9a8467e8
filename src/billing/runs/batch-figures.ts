import type { BillingRun, RunError } from './billing-run.entity';
import type { Billed } from './bill-computation';

/** What a batch added to its run's figures. */
export interface BatchFigures {
  billed: number;
  invoices: number;
  credits: number;
  amounts: Map<string, number>;
  errors: RunError[];
  /** Due subscribers found with nothing to bill: they were not due after all (and are not claimed: a later run of
   * the day bills them if a service is added meanwhile). */
  empty: number;
  emptyIds: string[];
  lastId: string | null;
}

export function emptyFigures(): BatchFigures {
  return {
    billed: 0,
    invoices: 0,
    credits: 0,
    amounts: new Map(),
    errors: [],
    empty: 0,
    emptyIds: [],
    lastId: null,
  };
}

/** The progress a run writes after each batch, or a dry run at its end. */
export function addFigures(run: BillingRun, figures: BatchFigures): void {
  run.subscribersBilled += figures.billed;
  run.subscribersDue = Math.max(0, run.subscribersDue - figures.empty);
  run.invoicesCreated += figures.invoices;
  run.creditsCreated += figures.credits;
  const totals = new Map(run.amountTotal.map((entry) => [entry.currency, entry.amount]));
  for (const [currency, amount] of figures.amounts) {
    totals.set(currency, (totals.get(currency) ?? 0) + amount);
  }
  run.amountTotal = [...totals]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, amount]) => ({ currency, amount }));
  run.errors = [...run.errors, ...figures.errors];
}

/** The figures of these subscribers' outcomes: billed (an invoice or a credit), found empty, or in error. */
export function figuresOf(billed: Billed[]): BatchFigures {
  const figures = emptyFigures();
  for (const each of billed) {
    if ('error' in each) {
      figures.errors.push({ subscriber_id: each.subscriber.subscriberId, reason: each.error });
      continue;
    }
    if (each.lines.lines.length === 0) {
      figures.empty += 1;
      figures.emptyIds.push(each.subscriber.subscriberId);
      continue;
    }
    figures.billed += 1;
    if (each.lines.total < 0) {
      figures.credits += 1;
    } else {
      figures.invoices += 1;
      const currency = each.subscriber.currency;
      figures.amounts.set(currency, (figures.amounts.get(currency) ?? 0) + each.lines.total);
    }
  }
  return figures;
}
