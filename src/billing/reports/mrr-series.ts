import type { ChurnRowDto, MrrMonthDto, MrrPlanMonthDto } from './dto/mrr-report.dto';
import type { MrrMovementRow } from './mrr.repository';

/** A day's calendar month as an index: year × 12 + month − 1 (the MRR statement's months). */
export function monthIndex(day: string): number {
  return Number(day.slice(0, 4)) * 12 + Number(day.slice(5, 7)) - 1;
}

/** An index's month, YYYY-MM. */
export function monthLabel(index: number): string {
  const year = Math.floor(index / 12);
  return `${String(year).padStart(4, '0')}-${String(index - year * 12 + 1).padStart(2, '0')}`;
}

type Movements = Omit<
  MrrMonthDto,
  | 'month'
  | 'currency'
  | 'opening_mrr'
  | 'closing_mrr'
  | 'net_new_mrr'
  | 'opening_subscribers'
  | 'closing_subscribers'
>;

const NO_MOVEMENT: Movements = {
  new_mrr: 0,
  new_subscribers: 0,
  expansion_mrr: 0,
  expansion_subscribers: 0,
  reactivation_mrr: 0,
  reactivated_subscribers: 0,
  contraction_mrr: 0,
  contraction_subscribers: 0,
  churned_mrr: 0,
  churned_subscribers: 0,
};

function movementsOf(row: MrrMovementRow): Movements {
  return {
    new_mrr: Number(row.new_mrr),
    new_subscribers: row.new_subscribers,
    expansion_mrr: Number(row.expansion_mrr),
    expansion_subscribers: row.expansion_subscribers,
    reactivation_mrr: Number(row.reactivation_mrr),
    reactivated_subscribers: row.reactivated_subscribers,
    contraction_mrr: Number(row.contraction_mrr),
    contraction_subscribers: row.contraction_subscribers,
    churned_mrr: Number(row.churned_mrr),
    churned_subscribers: row.churned_subscribers,
  };
}

/**
 * Every month from `first` to `last` of each series (currency, or currency and plan) the statement answered: the
 * opening is the month before's closing, the closing the opening plus the month's movements (the bridge holds by
 * construction; the e2e suite holds the closings to the services themselves).
 */
export function mrrSeries(
  rows: MrrMovementRow[],
  first: number,
  last: number,
): { months: MrrMonthDto[]; plans: MrrPlanMonthDto[] } {
  const series = new Map<string, MrrMovementRow[]>();
  for (const row of rows) {
    const key = `${row.currency}\u0000${row.plan_id ?? ''}`;
    series.set(key, [...(series.get(key) ?? []), row]);
  }
  const months: MrrMonthDto[] = [];
  const plans: MrrPlanMonthDto[] = [];
  for (const group of series.values()) {
    const { currency, plan_id: planId, plan_name: planName } = group[0];
    const byMonth = new Map(group.map((row) => [row.month, row]));
    const opening = byMonth.get(first - 1);
    let mrr = opening ? Number(opening.opening_mrr) : 0;
    let subscribers = opening ? opening.opening_subscribers : 0;
    const out: MrrMonthDto[] = [];
    for (let month = first; month <= last; month++) {
      const row = byMonth.get(month);
      const moved = row ? movementsOf(row) : NO_MOVEMENT;
      const closing =
        mrr +
        moved.new_mrr +
        moved.expansion_mrr +
        moved.reactivation_mrr -
        moved.contraction_mrr -
        moved.churned_mrr;
      const closingSubscribers =
        subscribers + moved.new_subscribers + moved.reactivated_subscribers - moved.churned_subscribers;
      out.push({
        month: monthLabel(month),
        currency,
        opening_mrr: mrr,
        ...moved,
        closing_mrr: closing,
        net_new_mrr: closing - mrr,
        opening_subscribers: subscribers,
        closing_subscribers: closingSubscribers,
      });
      mrr = closing;
      subscribers = closingSubscribers;
    }
    if (planId === null) {
      months.push(...out);
    } else if (out.some((month) => month.opening_mrr > 0 || month.closing_mrr > 0 || month.churned_mrr > 0)) {
      plans.push(...out.map((month) => ({ ...month, plan_id: planId, plan_name: planName ?? '' })));
    }
  }
  return { months, plans };
}

/** A ratio to 4 decimals, "0.0000" when the base is 0. */
export function rate(part: number, base: number): string {
  return base === 0 ? '0.0000' : (part / base).toFixed(4);
}

/** The churn of a run of months of one currency (one month, or the whole window). */
export function churnOf(currency: string, month: string | null, run: MrrMonthDto[]): ChurnRowDto {
  const sum = (pick: (month: MrrMonthDto) => number) => run.reduce((total, row) => total + pick(row), 0);
  const opening = run[0];
  const closing = run[run.length - 1];
  const churned = sum((row) => row.churned_mrr);
  const contraction = sum((row) => row.contraction_mrr);
  const expansion = sum((row) => row.expansion_mrr);
  const reactivation = sum((row) => row.reactivation_mrr);
  const churnedSubscribers = sum((row) => row.churned_subscribers);
  return {
    currency,
    month,
    opening_subscribers: opening.opening_subscribers,
    churned_subscribers: churnedSubscribers,
    subscriber_churn_rate: rate(churnedSubscribers, opening.opening_subscribers),
    opening_mrr: opening.opening_mrr,
    churned_mrr: churned,
    contraction_mrr: contraction,
    expansion_mrr: expansion,
    reactivation_mrr: reactivation,
    gross_mrr_churn_rate: rate(churned + contraction, opening.opening_mrr),
    net_mrr_churn_rate: rate(churned + contraction - expansion - reactivation, opening.opening_mrr),
    closing_subscribers: closing.closing_subscribers,
    closing_mrr: closing.closing_mrr,
  };
}
