import { Invoice, InvoiceStatus } from '../invoices/invoice.entity';
import { autoApplyPlans } from './auto-apply';
import { Transaction, TransactionKind } from './transaction.entity';

const invoice = (id: string, total: number, dueDate: string, fields: Partial<Invoice> = {}): Invoice =>
  Object.assign(new Invoice(), {
    tenantId: 'ten_1',
    id,
    sequence: Number(id.replace(/\D/g, '')),
    subscriberId: 'sub_1',
    currency: 'EUR',
    status: InvoiceStatus.Open,
    total,
    amountPaid: 0,
    dueDate,
    ...fields,
  });

const money = (
  id: string,
  amount: number,
  occurredAt: string,
  fields: Partial<Transaction> = {},
): Transaction =>
  Object.assign(new Transaction(), {
    tenantId: 'ten_1',
    id,
    subscriberId: 'sub_1',
    currency: 'EUR',
    kind: TransactionKind.Payment,
    amount,
    allocatedAmount: 0,
    refundedAmount: 0,
    occurredAt: new Date(occurredAt),
    ...fields,
  });

/** The plans as [money, [invoice, amount]…], in the order the money is used. */
const shown = (plans: ReturnType<typeof autoApplyPlans>) =>
  [...plans].map(([transaction, plan]) => [
    transaction.id,
    plan.map((item) => [item.invoice?.id, item.amount]),
  ]);

describe('autoApplyPlans', () => {
  it('should pay the oldest due invoice first, then the next, with what the money has left', () => {
    const later = invoice('inv_2', 3000, '2026-04-15');
    const sooner = invoice('inv_1', 1000, '2026-03-15');
    expect(shown(autoApplyPlans([later, sooner], [money('txn_1', 2500, '2026-03-01T00:00:00Z')]))).toEqual([
      [
        'txn_1',
        [
          ['inv_1', 1000],
          ['inv_2', 1500],
        ],
      ],
    ]);
  });

  it('should use the oldest money first and hand the next what the invoices still owe', () => {
    const owed = [invoice('inv_1', 1000, '2026-03-15'), invoice('inv_2', 1000, '2026-03-20')];
    const plans = autoApplyPlans(owed, [
      money('txn_new', 5000, '2026-02-10T00:00:00Z'),
      money('txn_old', 700, '2026-02-01T00:00:00Z'),
    ]);
    expect(shown(plans)).toEqual([
      ['txn_old', [['inv_1', 700]]],
      [
        'txn_new',
        [
          ['inv_1', 300],
          ['inv_2', 1000],
        ],
      ],
    ]);
  });

  it('should order money received at the same instant by id, and invoices due the same day by number', () => {
    const owed = [invoice('inv_9', 100, '2026-03-15'), invoice('inv_3', 100, '2026-03-15')];
    const plans = autoApplyPlans(owed, [
      money('txn_b', 100, '2026-02-01T00:00:00Z'),
      money('txn_a', 100, '2026-02-01T00:00:00Z'),
    ]);
    expect(shown(plans)).toEqual([
      ['txn_a', [['inv_3', 100]]],
      ['txn_b', [['inv_9', 100]]],
    ]);
  });

  it('should count only what an invoice still owes and what the money has not yet allocated or refunded', () => {
    const partly = invoice('inv_1', 1000, '2026-03-15', {
      status: InvoiceStatus.PartiallyPaid,
      amountPaid: 600,
    });
    const used = money('txn_1', 1000, '2026-02-01T00:00:00Z', { allocatedAmount: 500, refundedAmount: 300 });
    expect(shown(autoApplyPlans([partly], [used]))).toEqual([['txn_1', [['inv_1', 200]]]]);
  });

  it("should pay only a subscriber's invoices in the money's currency", () => {
    const owed = [
      invoice('inv_1', 1000, '2026-03-15', { currency: 'USD' }),
      invoice('inv_2', 1000, '2026-03-15', { subscriberId: 'sub_2' }),
      invoice('inv_3', 1000, '2026-03-16'),
    ];
    expect(shown(autoApplyPlans(owed, [money('txn_1', 5000, '2026-02-01T00:00:00Z')]))).toEqual([
      ['txn_1', [['inv_3', 1000]]],
    ]);
  });

  it('should plan nothing for money with nothing to pay, or nothing left', () => {
    const owed = [invoice('inv_1', 1000, '2026-03-15')];
    expect(
      autoApplyPlans(owed, [money('txn_1', 500, '2026-02-01T00:00:00Z', { allocatedAmount: 500 })]).size,
    ).toBe(0);
    expect(autoApplyPlans([], [money('txn_1', 500, '2026-02-01T00:00:00Z')]).size).toBe(0);
    const plans = autoApplyPlans(owed, [
      money('txn_1', 1000, '2026-02-01T00:00:00Z'),
      money('txn_2', 1000, '2026-02-02T00:00:00Z'),
    ]);
    expect([...plans.keys()].map((transaction) => transaction.id)).toEqual(['txn_1']);
  });
});
