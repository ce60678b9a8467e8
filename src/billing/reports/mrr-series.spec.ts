import fc from 'fast-check';
import { churnOf, monthIndex, monthLabel, mrrSeries, rate } from './mrr-series';
import type { MrrMovementRow } from './mrr.repository';

function row(month: number, overrides: Partial<MrrMovementRow> = {}): MrrMovementRow {
  return {
    currency: 'EUR',
    plan_id: null,
    plan_name: null,
    month,
    opening_mrr: '0',
    opening_subscribers: 0,
    new_mrr: '0',
    new_subscribers: 0,
    expansion_mrr: '0',
    expansion_subscribers: 0,
    reactivation_mrr: '0',
    reactivated_subscribers: 0,
    contraction_mrr: '0',
    contraction_subscribers: 0,
    churned_mrr: '0',
    churned_subscribers: 0,
    ...overrides,
  };
}

describe('mrrSeries', () => {
  const jan = monthIndex('2030-01-15');

  it('should number months from year 0 and write them back as YYYY-MM', () => {
    expect(jan).toBe(2030 * 12);
    expect(monthLabel(jan)).toBe('2030-01');
    expect(monthLabel(monthIndex('2031-12-31'))).toBe('2031-12');
  });

  it('should fill every month of the window, carrying the closing into the next opening', () => {
    const { months } = mrrSeries(
      [
        row(jan - 1, { opening_mrr: '8000', opening_subscribers: 2 }),
        row(jan + 1, { churned_mrr: '3000', churned_subscribers: 1, new_mrr: '500', new_subscribers: 1 }),
      ],
      jan,
      jan + 2,
    );
    expect(months.map((m) => [m.month, m.opening_mrr, m.closing_mrr, m.closing_subscribers])).toEqual([
      ['2030-01', 8000, 8000, 2],
      ['2030-02', 8000, 5500, 2],
      ['2030-03', 5500, 5500, 2],
    ]);
  });

  it('should bridge opening to closing by the movements for any movements', () => {
    const amount = fc.nat({ max: 100_000 }).map(String);
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ offset: fc.nat({ max: 5 }), n: amount, e: amount, r: amount, c: amount, x: amount }),
        ),
        (moves) => {
          const rows = moves.map((m) =>
            row(jan + m.offset, {
              new_mrr: m.n,
              expansion_mrr: m.e,
              reactivation_mrr: m.r,
              contraction_mrr: m.c,
              churned_mrr: m.x,
            }),
          );
          const unique = [...new Map(rows.map((r) => [r.month, r])).values()];
          const { months } = mrrSeries(unique, jan, jan + 5);
          months.forEach((m, i) => {
            expect(m.closing_mrr).toBe(
              m.opening_mrr +
                m.new_mrr +
                m.expansion_mrr +
                m.reactivation_mrr -
                m.contraction_mrr -
                m.churned_mrr,
            );
            expect(m.net_new_mrr).toBe(m.closing_mrr - m.opening_mrr);
            if (i > 0) {
              expect(m.opening_mrr).toBe(months[i - 1].closing_mrr);
            }
          });
        },
      ),
    );
  });

  it('should leave out a plan with no MRR in the window, and keep one that churned in it', () => {
    const { plans } = mrrSeries(
      [
        row(jan - 1, { plan_id: 'pln_a', plan_name: 'A', opening_mrr: '0' }),
        row(jan - 1, { plan_id: 'pln_b', plan_name: 'B', opening_mrr: '3000', opening_subscribers: 1 }),
        row(jan, { plan_id: 'pln_b', plan_name: 'B', churned_mrr: '3000', churned_subscribers: 1 }),
      ],
      jan,
      jan,
    );
    expect(plans.map((p) => [p.plan_id, p.opening_mrr, p.closing_mrr, p.closing_subscribers])).toEqual([
      ['pln_b', 3000, 0, 0],
    ]);
  });

  it('should rate churn against the opening, 4 decimals, 0 without a base', () => {
    expect(rate(1, 3)).toBe('0.3333');
    expect(rate(5, 0)).toBe('0.0000');
    const { months } = mrrSeries(
      [
        row(jan - 1, { opening_mrr: '14000', opening_subscribers: 3 }),
        row(jan, { churned_mrr: '5000', churned_subscribers: 1, contraction_mrr: '1000' }),
      ],
      jan,
      jan,
    );
    expect(churnOf('EUR', null, months)).toMatchObject({
      subscriber_churn_rate: '0.3333',
      gross_mrr_churn_rate: '0.4286',
      net_mrr_churn_rate: '0.4286',
      closing_mrr: 8000,
    });
  });
});
