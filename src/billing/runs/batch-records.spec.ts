import { isId } from '../../common/ids';
import { type InvoiceLine, InvoiceStatus } from '../invoices/invoice.entity';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { TransactionKind, TransactionSource } from '../transactions/transaction.entity';
import { creditOf, eventsOf, invoiceOf, itemOf, ledgerRowsOf, periodsOf } from './batch-records';
import { type Computed, runDay } from './bill-computation';
import { BillingRun } from './billing-run.entity';

const NOW = new Date('2026-01-31T03:00:00.000Z');
const RUN = Object.assign(new BillingRun(), { tenantId: 'ten_1', id: 'brun_1' });

const planLine = (amount: number, periodStart: string, planId = 'plan_a'): InvoiceLine => ({
  description: 'Fiber',
  quantity: 1,
  unit_amount: amount,
  amount,
  service_id: 'svc_1',
  plan_id: planId,
  period_start: periodStart,
  period_end: '2026-02-27',
});

const computed = (subscriberId: string, lines: InvoiceLine[], paymentTermsDays = 14): Computed => {
  const total = lines.reduce((sum, line) => sum + line.amount, 0);
  return {
    subscriber: { subscriberId, currency: 'EUR', paymentTermsDays, billingDay: 31 },
    lines: { lines, total, taxAmount: 0, taxes: [], states: [], chargeIds: [] },
  };
};

describe('bill run records', () => {
  const day = runDay('2026-01-31');

  it('should claim a period of one month from the run day, clamped to the end of a shorter month', () => {
    const [period] = periodsOf(RUN, day, [computed('sub_1', [planLine(3100, '2026-01-31')])], NOW);
    expect(period).toMatchObject({
      tenantId: 'ten_1',
      subscriberId: 'sub_1',
      periodStart: '2026-01-31',
      periodEnd: '2026-02-28',
      runId: 'brun_1',
      creditId: null,
      createdAt: NOW,
    });
    expect(isId('inv', period.invoiceId!)).toBe(true);
  });

  it('should name an invoice for a total of 0 or more and a credit below 0', () => {
    const [free, credit] = periodsOf(
      RUN,
      day,
      [computed('sub_1', []), computed('sub_2', [planLine(-400, '2026-01-10')])],
      NOW,
    );
    expect(isId('inv', free.invoiceId!)).toBe(true);
    expect(free.creditId).toBeNull();
    expect(credit.invoiceId).toBeNull();
    expect(isId('txn', credit.creditId!)).toBe(true);
  });

  it("should keep as the period's advance charges only positive plan lines starting on the run day", () => {
    const lines: InvoiceLine[] = [
      planLine(-1200, '2026-01-15'), // credit for unused days of the previous period
      planLine(800, '2026-01-15', 'plan_b'), // true-up of the previous period
      planLine(3100, '2026-01-31'), // this period, in advance
      planLine(-50, '2026-01-31', 'plan_c'), // a credit line starting today is no charge
      { description: 'Router', quantity: 1, unit_amount: 900, amount: 900, charge_id: 'chg_1' },
    ];
    const [period] = periodsOf(RUN, day, [computed('sub_1', lines)], NOW);
    expect(period.charges).toEqual([{ service_id: 'svc_1', plan_id: 'plan_a', amount: 3100 }]);
  });

  it('should issue the invoice under its reserved number, due after the payment terms', () => {
    const bill = computed('sub_1', [planLine(3100, '2026-01-31')], 30);
    const [period] = periodsOf(RUN, day, [bill], NOW);
    const invoice = invoiceOf(RUN, day, period, bill, { number: 'INV-2026-000042', sequence: 42 }, NOW);
    expect(invoice).toMatchObject({
      id: period.invoiceId,
      number: 'INV-2026-000042',
      sequence: 42,
      status: InvoiceStatus.Open,
      total: 3100,
      amountPaid: 0,
      dueDate: '2026-03-02', // 30 days after 2026-01-31, across a 28-day February
      finalizedAt: NOW,
      paidAt: null,
    });
    expect(invoice.amountDue).toBe(3100);
  });

  it('should issue an invoice of 0 already paid', () => {
    const bill = computed('sub_1', []);
    const [period] = periodsOf(RUN, day, [bill], NOW);
    const invoice = invoiceOf(RUN, day, period, bill, { number: 'INV-1', sequence: 1 }, NOW);
    expect(invoice.status).toBe(InvoiceStatus.Paid);
    expect(invoice.paidAt).toBe(NOW);
    expect(invoice.amountDue).toBe(0);
  });

  it('should give back a total below zero as a credit of its size', () => {
    const bill = computed('sub_2', [planLine(-1234, '2026-01-10')]);
    const [period] = periodsOf(RUN, day, [bill], NOW);
    const credit = creditOf(RUN, day, period, bill, NOW);
    expect(credit).toMatchObject({
      id: period.creditId,
      subscriberId: 'sub_2',
      kind: TransactionKind.Credit,
      source: TransactionSource.Adjustment,
      amount: 1234,
      currency: 'EUR',
      reference: 'brun_1',
      allocatedAmount: 0,
      metadata: { billing_run_id: 'brun_1', period_start: '2026-01-31' },
    });
    expect(credit.unallocatedAmount).toBe(1234);
  });

  it('should announce each invoice as created and finalized, paid too when free, then each credit', () => {
    const open = computed('sub_1', [planLine(3100, '2026-01-31')]);
    const free = computed('sub_2', []);
    const refund = computed('sub_3', [planLine(-10, '2026-01-10')]);
    const periods = periodsOf(RUN, day, [open, free, refund], NOW);
    const invoices = [
      invoiceOf(RUN, day, periods[0], open, { number: 'INV-1', sequence: 1 }, NOW),
      invoiceOf(RUN, day, periods[1], free, { number: 'INV-2', sequence: 2 }, NOW),
    ];
    const credits = [creditOf(RUN, day, periods[2], refund, NOW)];
    const events = eventsOf('ten_1', invoices, credits, NOW);
    expect(events.map((event) => [event.type, event.subjectId])).toEqual([
      ['invoice.created', invoices[0].id],
      ['invoice.finalized', invoices[0].id],
      ['invoice.created', invoices[1].id],
      ['invoice.finalized', invoices[1].id],
      ['invoice.paid', invoices[1].id],
      ['transaction.created', credits[0].id],
    ]);
    expect(events.every((event) => event.tenantId === 'ten_1')).toBe(true);
  });

  it('should post what each invoice owes and each credit gives back, and nothing for a free invoice', () => {
    const open = computed('sub_1', [planLine(3100, '2026-01-31')]);
    const free = computed('sub_2', []);
    const refund = computed('sub_3', [planLine(-10, '2026-01-10')]);
    const periods = periodsOf(RUN, day, [open, free, refund], NOW);
    const invoices = [
      invoiceOf(RUN, day, periods[0], open, { number: 'INV-1', sequence: 1 }, NOW),
      invoiceOf(RUN, day, periods[1], free, { number: 'INV-2', sequence: 2 }, NOW),
    ];
    const credit = creditOf(RUN, day, periods[2], refund, NOW);
    const rows = ledgerRowsOf('ten_1', invoices, [credit], NOW);
    expect(
      rows.map(({ type, amount, sourceId, subscriberId }) => ({ type, amount, sourceId, subscriberId })),
    ).toEqual([
      { type: LedgerEntryType.Invoice, amount: 3100, sourceId: invoices[0].id, subscriberId: 'sub_1' },
      { type: LedgerEntryType.Credit, amount: -10, sourceId: credit.id, subscriberId: 'sub_3' },
    ]);
    expect(rows.every((row) => isId('led', row.id))).toBe(true);
  });

  it('should record what a subscriber was billed, or why not', () => {
    const bill = computed('sub_1', [planLine(3100, '2026-01-31')]);
    const item = itemOf(RUN, bill, 'inv_x', null, NOW);
    expect(item).toMatchObject({
      runId: 'brun_1',
      subscriberId: 'sub_1',
      currency: 'EUR',
      lines: bill.lines.lines,
      total: 3100,
      invoiceId: 'inv_x',
      creditId: null,
      error: null,
    });
    const failed = itemOf(RUN, { subscriber: bill.subscriber, error: 'no plan' }, null, null, NOW);
    expect(failed).toMatchObject({ lines: [], total: 0, invoiceId: null, creditId: null, error: 'no plan' });
    expect(isId('bri', failed.id)).toBe(true);
  });
});
