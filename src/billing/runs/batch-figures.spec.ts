import type { InvoiceLine } from '../invoices/invoice.entity';
import { addFigures, emptyFigures, figuresOf } from './batch-figures';
import type { Billed } from './bill-computation';
import { BillingRun } from './billing-run.entity';

const subscriber = (subscriberId: string, currency = 'EUR') => ({
  subscriberId,
  currency,
  paymentTermsDays: 14,
  billingDay: 1,
});

const line = (amount: number): InvoiceLine => ({
  description: 'x',
  quantity: 1,
  unit_amount: amount,
  amount,
});

const billed = (id: string, total: number, currency = 'EUR', lines = [line(total)]): Billed => ({
  subscriber: subscriber(id, currency),
  lines: { lines, total, taxAmount: 0, taxes: [], states: [], chargeIds: [] },
});

const failed = (id: string, error: string): Billed => ({ subscriber: subscriber(id), error });

const run = (fields: Partial<BillingRun> = {}): BillingRun =>
  Object.assign(new BillingRun(), {
    subscribersDue: 10,
    subscribersBilled: 0,
    invoicesCreated: 0,
    creditsCreated: 0,
    amountTotal: [],
    errors: [],
    ...fields,
  });

describe('figuresOf', () => {
  it('should count an invoice, a credit, an empty subscriber and an error each where it belongs', () => {
    const figures = figuresOf([
      billed('sub_a', 3100),
      billed('sub_b', -500),
      billed('sub_c', 0, 'EUR', []),
      failed('sub_d', 'plan plan_x is priced in USD; the subscriber is billed in EUR'),
    ]);
    expect(figures).toEqual({
      billed: 2,
      invoices: 1,
      credits: 1,
      amounts: new Map([['EUR', 3100]]),
      errors: [
        { subscriber_id: 'sub_d', reason: 'plan plan_x is priced in USD; the subscriber is billed in EUR' },
      ],
      empty: 1,
      emptyIds: ['sub_c'],
      lastId: null,
    });
  });

  it('should count an invoice of 0 (lines that cancel out) as an invoice, and leave a credit out of the amounts', () => {
    const figures = figuresOf([billed('sub_a', 0, 'EUR', [line(1000), line(-1000)]), billed('sub_b', -1)]);
    expect(figures.invoices).toBe(1);
    expect(figures.credits).toBe(1);
    expect(figures.empty).toBe(0);
    expect(figures.amounts).toEqual(new Map([['EUR', 0]]));
  });

  it('should sum the amounts per currency', () => {
    const figures = figuresOf([billed('sub_a', 100), billed('sub_b', 250, 'USD'), billed('sub_c', 50)]);
    expect(figures.amounts).toEqual(
      new Map([
        ['EUR', 150],
        ['USD', 250],
      ]),
    );
  });

  it('should answer empty figures for no subscribers', () => {
    expect(figuresOf([])).toEqual(emptyFigures());
  });
});

describe('addFigures', () => {
  it("should add a batch to the run's figures, merging the currencies in code order", () => {
    const progress = run({
      subscribersBilled: 3,
      invoicesCreated: 2,
      creditsCreated: 1,
      amountTotal: [{ currency: 'USD', amount: 1000 }],
      errors: [{ subscriber_id: 'sub_old', reason: 'earlier' }],
    });
    addFigures(
      progress,
      figuresOf([billed('sub_a', 500), billed('sub_b', 700, 'USD'), failed('sub_c', 'boom')]),
    );
    expect(progress.subscribersBilled).toBe(5);
    expect(progress.invoicesCreated).toBe(4);
    expect(progress.creditsCreated).toBe(1);
    expect(progress.amountTotal).toEqual([
      { currency: 'EUR', amount: 500 },
      { currency: 'USD', amount: 1700 },
    ]);
    expect(progress.errors).toEqual([
      { subscriber_id: 'sub_old', reason: 'earlier' },
      { subscriber_id: 'sub_c', reason: 'boom' },
    ]);
  });

  it('should take the subscribers found empty off those due, never below zero', () => {
    const progress = run({ subscribersDue: 2 });
    addFigures(progress, { ...emptyFigures(), empty: 1 });
    expect(progress.subscribersDue).toBe(1);
    addFigures(progress, { ...emptyFigures(), empty: 5 });
    expect(progress.subscribersDue).toBe(0);
  });

  it('should leave the run as it was for an empty batch', () => {
    const progress = run({ amountTotal: [{ currency: 'EUR', amount: 10 }] });
    addFigures(progress, emptyFigures());
    expect(progress).toEqual(run({ amountTotal: [{ currency: 'EUR', amount: 10 }] }));
  });
});
