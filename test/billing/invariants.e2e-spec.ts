import fc from 'fast-check';
import request, { type Response } from 'supertest';
import {
  allocate,
  type BillingTenant,
  type CurrencyBalance,
  finalizeInvoice,
  getBalances,
  type InvoiceLine,
  type InvoiceRecord,
  type LedgerEntryRecord,
  listAll,
  newSubscriberId,
  postInvoice,
  postTransaction,
  type TransactionRecord,
  voidInvoice,
  billingSuite,
} from '../support/billing-factory';
import type { EventBody } from '../support/subscriber-factory';
import type { TestApp } from '../support/test-app';

const CURRENCIES = ['USD', 'EUR'];
const DUE_DATES = ['2020-06-01', '2024-01-15', '2099-01-01', '2099-06-30', '2099-12-31'];
const OPERATIONS = 500;
const SEED = 20_261_121;

type Op =
  | {
      type: 'invoice';
      sub: number;
      cur: number;
      due: number;
      draft: boolean;
      lines: { q: number; u: number }[];
    }
  | { type: 'finalize'; pick: number }
  | { type: 'void'; pick: number }
  | {
      type: 'transaction';
      kind: 'payment' | 'credit' | 'debit';
      sub: number;
      cur: number;
      amount: number;
      /** A payment or credit left for an allocation by hand (auto_apply false); else auto-applied. */
      hold: boolean;
    }
  | { type: 'refund'; pick: number; amount: number; flip: number }
  | { type: 'allocate'; pick: number; items: { pick: number; amount: number }[]; anyInvoice: boolean }
  | { type: 'balance'; pick: number; amount: number }
  | { type: 'oldest_first'; pick: number };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant('invoice' as const),
      sub: fc.nat(),
      cur: fc.nat(),
      due: fc.nat(),
      draft: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
      lines: fc.array(
        fc.record({ q: fc.integer({ min: 1, max: 3 }), u: fc.integer({ min: 1, max: 2000 }) }),
        {
          minLength: 1,
          maxLength: 3,
        },
      ),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('finalize' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('void' as const), pick: fc.nat() }) },
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant('transaction' as const),
      kind: fc.constantFrom('payment' as const, 'payment' as const, 'credit' as const, 'debit' as const),
      sub: fc.nat(),
      cur: fc.nat(),
      amount: fc.integer({ min: 1, max: 4000 }),
      hold: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('refund' as const),
      pick: fc.nat(),
      amount: fc.integer({ min: 1, max: 2500 }),
      // 0 of 0..7: the refund names the other currency (a currency_mismatch).
      flip: fc.integer({ min: 0, max: 7 }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('allocate' as const),
      pick: fc.nat(),
      items: fc.array(fc.record({ pick: fc.nat(), amount: fc.integer({ min: 1, max: 600 }) }), {
        minLength: 1,
        maxLength: 2,
      }),
      anyInvoice: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('balance' as const),
      pick: fc.nat(),
      amount: fc.integer({ min: 1, max: 800 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('oldest_first' as const), pick: fc.nat() }) },
);

/** A pending charge (GET /subscribers/{id}/charges), as far as this suite reads it. */
interface ChargeRecord {
  id: string;
  subscriber_id: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  currency: string;
  status: 'pending' | 'invoiced';
  source: string;
  source_id: string | null;
  invoice_id: string | null;
}

/** An invoice line; the ones carrying a pending charge name it. */
type ChargedLine = InvoiceLine & { charge_id?: string };

interface KnownInvoice {
  id: string;
  subscriberId: string;
  currency: string;
}
interface KnownTransaction {
  id: string;
  kind: string;
  subscriberId: string;
  currency: string;
}

function at<T>(list: T[], pick: number): T | undefined {
  return list.length === 0 ? undefined : list[pick % list.length];
}

function sumBy<T>(rows: T[], value: (row: T) => number): number {
  return rows.reduce((total, row) => total + value(row), 0);
}

describe('Billing: invariants under a random sequence of operations', () => {
  let t: TestApp;
  let tenant: BillingTenant;
  let subscribers: string[];
  /** Status counts per operation type, e.g. { 'allocate 200': 40, 'allocate 422': 30 }. */
  const outcomes: Record<string, number> = {};
  const crashes: string[] = [];

  billingSuite((suite) => ({ t, a: tenant } = suite));

  describe('a random sequence of 500 billing operations through the API', () => {
    it('should require authentication', async () => {
      const res = await request(t.http).get('/api/v1/transactions');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('authentication_required');
    });

    it(
      'should answer every operation without a 5xx',
      async () => {
        const [plan] = fc.sample(
          fc.record({
            subscriberCount: fc.integer({ min: 2, max: 3 }),
            ops: fc.array(opArbitrary, { minLength: OPERATIONS, maxLength: OPERATIONS }),
          }),
          { numRuns: 1, seed: SEED },
        );
        subscribers = [tenant.subscriberId];
        while (subscribers.length < plan.subscriberCount) {
          subscribers.push(await newSubscriberId(t, tenant.token));
        }

        const invoices: KnownInvoice[] = [];
        const transactions: KnownTransaction[] = [];
        const payments = () => transactions.filter((txn) => txn.kind === 'payment');
        const allocatable = () =>
          transactions.filter((txn) => txn.kind === 'payment' || txn.kind === 'credit');

        for (const [index, op] of plan.ops.entries()) {
          let res: Response | undefined;
          switch (op.type) {
            case 'invoice': {
              const subscriberId = subscribers[op.sub % subscribers.length];
              const currency = CURRENCIES[op.cur % CURRENCIES.length];
              res = await postInvoice(t, tenant.token, {
                subscriber_id: subscriberId,
                currency,
                due_date: DUE_DATES[op.due % DUE_DATES.length],
                lines: op.lines.map((line, i) => ({
                  description: `Line ${i}`,
                  quantity: line.q,
                  unit_amount: line.u,
                })),
                ...(op.draft ? { draft: true } : {}),
              });
              if (res.status === 201) {
                invoices.push({ id: res.body.data.id, subscriberId, currency });
              }
              break;
            }
            case 'finalize':
            case 'void': {
              const invoice = at(op.type === 'finalize' ? invoices.slice(-10) : invoices, op.pick);
              if (!invoice) {
                break;
              }
              res =
                op.type === 'finalize'
                  ? await finalizeInvoice(t, tenant.token, invoice.id)
                  : await voidInvoice(t, tenant.token, invoice.id);
              break;
            }
            case 'transaction': {
              const subscriberId = subscribers[op.sub % subscribers.length];
              const currency = CURRENCIES[op.cur % CURRENCIES.length];
              res = await postTransaction(t, tenant.token, {
                subscriber_id: subscriberId,
                kind: op.kind,
                source: op.kind === 'payment' ? 'external' : 'adjustment',
                amount: op.amount,
                currency,
                ...(op.hold && op.kind !== 'debit' ? { auto_apply: false } : {}),
              });
              if (res.status === 201) {
                transactions.push({ id: res.body.data.id, kind: op.kind, subscriberId, currency });
              }
              break;
            }
            case 'refund': {
              const payment = at(payments(), op.pick);
              if (!payment) {
                break;
              }
              const mismatch = op.flip === 0;
              const currency = mismatch ? CURRENCIES.find((c) => c !== payment.currency)! : payment.currency;
              res = await postTransaction(t, tenant.token, {
                subscriber_id: payment.subscriberId,
                kind: 'refund',
                source: 'external',
                amount: op.amount,
                currency,
                refund_of: payment.id,
              });
              if (res.status === 201) {
                transactions.push({
                  id: res.body.data.id,
                  kind: 'refund',
                  subscriberId: payment.subscriberId,
                  currency,
                });
              }
              break;
            }
            case 'allocate': {
              // Mostly a recent payment or credit and recent invoices of its subscriber and currency (the likeliest to
              // have money left and amounts due); sometimes any transaction and any invoice.
              const txn = op.anyInvoice ? at(transactions, op.pick) : at(allocatable().slice(-10), op.pick);
              if (!txn) {
                break;
              }
              const candidates = op.anyInvoice
                ? invoices
                : invoices
                    .filter((inv) => inv.subscriberId === txn.subscriberId && inv.currency === txn.currency)
                    .slice(-6);
              const items = op.items
                .map((item) => ({ invoice: at(candidates, item.pick), amount: item.amount }))
                .filter(
                  (item): item is { invoice: KnownInvoice; amount: number } => item.invoice !== undefined,
                );
              if (items.length === 0) {
                break;
              }
              res = await allocate(t, tenant.token, txn.id, {
                allocations: items.map((item) => ({ invoice_id: item.invoice.id, amount: item.amount })),
              });
              break;
            }
            case 'balance':
            case 'oldest_first': {
              const txn = at(allocatable().slice(-15), op.pick);
              if (!txn) {
                break;
              }
              res = await allocate(
                t,
                tenant.token,
                txn.id,
                op.type === 'balance'
                  ? { target: 'balance', amount: op.amount }
                  : { strategy: 'oldest_first' },
              );
              break;
            }
          }
          if (!res) {
            continue;
          }
          const key = `${op.type} ${res.status}`;
          outcomes[key] = (outcomes[key] ?? 0) + 1;
          if (res.status >= 500) {
            crashes.push(`#${index} ${JSON.stringify(op)} → ${res.status} ${JSON.stringify(res.body)}`);
          }
        }

        expect(crashes).toEqual([]);
        // The sequence exercised the success paths of every operation, not only their refusals.
        const successes = [
          'invoice 201',
          'finalize 200',
          'void 200',
          'transaction 201',
          'refund 201',
          'allocate 200',
          'balance 200',
          'oldest_first 200',
        ];
        expect(successes.filter((key) => !outcomes[key])).toEqual([]);
        // …and some of the refusals.
        const refused = Object.entries(outcomes)
          .filter(([key]) => / (409|422)$/.test(key))
          .reduce((total, [, n]) => total + n, 0);
        expect(refused).toBeGreaterThan(0);
      },
      5 * 60_000,
    );

    describe('afterwards', () => {
      let allTransactions: TransactionRecord[];
      let allInvoices: InvoiceRecord[];
      let allCharges: ChargeRecord[];
      let allocationSums: Map<string, number>;
      let invoiceAllocationSums: Map<string, number>;

      beforeAll(async () => {
        allTransactions = await listAll<TransactionRecord>(t, tenant.token, '/api/v1/transactions');
        allInvoices = await listAll<InvoiceRecord>(t, tenant.token, '/api/v1/invoices');
        allCharges = [];
        for (const subscriberId of subscribers) {
          for (const status of ['pending', 'invoiced']) {
            allCharges.push(
              ...(await listAll<ChargeRecord>(
                t,
                tenant.token,
                `/api/v1/subscribers/${subscriberId}/charges`,
                {
                  status,
                },
              )),
            );
          }
        }
        const byTransaction: { transaction_id: string; total: string }[] = await t.dataSource.query(
          `SELECT transaction_id, SUM(amount) AS total FROM allocations WHERE tenant_id = $1 GROUP BY transaction_id`,
          [tenant.tenantId],
        );
        allocationSums = new Map(byTransaction.map((row) => [row.transaction_id, Number(row.total)]));
        const byInvoice: { invoice_id: string; total: string }[] = await t.dataSource.query(
          `SELECT invoice_id, SUM(amount) AS total FROM allocations
           WHERE tenant_id = $1 AND invoice_id IS NOT NULL GROUP BY invoice_id`,
          [tenant.tenantId],
        );
        invoiceAllocationSums = new Map(byInvoice.map((row) => [row.invoice_id, Number(row.total)]));
      }, 120_000);

      it('should require authentication', async () => {
        const res = await request(t.http).get('/api/v1/invoices');
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('authentication_required');
      });

      it('should never leave auto-applicable money unapplied while an invoice of its subscriber and currency is owed', () => {
        // Auto-apply: money received pays open invoices at once, and an invoice issued takes the money waiting. Only
        // payments and credits recorded with auto_apply false may wait beside an open invoice.
        const waiting = allTransactions.filter((txn) => txn.auto_apply && (txn.unallocated_amount ?? 0) > 0);
        const owed = new Set(
          allInvoices
            .filter(
              (invoice) => ['open', 'partially_paid'].includes(invoice.status) && invoice.amount_due > 0,
            )
            .map((invoice) => `${invoice.subscriber_id}/${invoice.currency}`),
        );
        expect(owed.size).toBeGreaterThan(0);
        expect(allTransactions.some((txn) => txn.auto_apply && txn.allocated_amount > 0)).toBe(true);
        expect(
          waiting.filter((txn) => owed.has(`${txn.subscriber_id}/${txn.currency}`)).map((txn) => txn.id),
        ).toEqual([]);
      });

      it('should keep allocated + unallocated + refunded = amount, never negative, for every payment and credit', () => {
        expect(allTransactions.length).toBeGreaterThan(50);
        const allocatable = allTransactions.filter((txn) => txn.kind === 'payment' || txn.kind === 'credit');
        expect(allocatable.length).toBeGreaterThan(25);
        for (const txn of allocatable) {
          expect({
            id: txn.id,
            sum: txn.allocated_amount + txn.unallocated_amount + txn.refunded_amount,
          }).toEqual({
            id: txn.id,
            sum: txn.amount,
          });
          expect({ id: txn.id, unallocated: txn.unallocated_amount >= 0 }).toEqual({
            id: txn.id,
            unallocated: true,
          });
          expect(txn.allocated_amount).toBeGreaterThanOrEqual(0);
          expect(txn.refunded_amount).toBeGreaterThanOrEqual(0);
        }
      });

      it('should answer unallocated_amount null for every debit and refund (they are not applied)', () => {
        const notApplied = allTransactions.filter((txn) => txn.kind === 'debit' || txn.kind === 'refund');
        expect(notApplied.some((txn) => txn.kind === 'debit')).toBe(true);
        expect(notApplied.some((txn) => txn.kind === 'refund')).toBe(true);
        for (const txn of notApplied) {
          expect({ id: txn.id, unallocated: txn.unallocated_amount }).toEqual({
            id: txn.id,
            unallocated: null,
          });
        }
      });

      it('should make every debit one charge, pending or carried by exactly one line of one issued invoice', () => {
        const debits = allTransactions.filter((txn) => txn.kind === 'debit');
        expect(debits.length).toBeGreaterThan(10);
        const linesByCharge = new Map<string, { invoice: InvoiceRecord; line: ChargedLine }[]>();
        for (const invoice of allInvoices) {
          for (const line of invoice.lines as ChargedLine[]) {
            if (line.charge_id) {
              linesByCharge.set(line.charge_id, [
                ...(linesByCharge.get(line.charge_id) ?? []),
                { invoice, line },
              ]);
            }
          }
        }
        const debitCharges = allCharges.filter((charge) => charge.source === 'debit');
        expect(debitCharges).toHaveLength(debits.length);
        for (const debit of debits) {
          const charges = debitCharges.filter((charge) => charge.source_id === debit.id);
          expect({ debit: debit.id, charges: charges.length }).toEqual({ debit: debit.id, charges: 1 });
          const [charge] = charges;
          expect(charge).toMatchObject({
            subscriber_id: debit.subscriber_id,
            currency: debit.currency,
            amount: debit.amount,
            quantity: 1,
            unit_amount: debit.amount,
          });
          const carried = linesByCharge.get(charge.id) ?? [];
          if (charge.status === 'pending') {
            expect({ charge: charge.id, invoice_id: charge.invoice_id, lines: carried.length }).toEqual({
              charge: charge.id,
              invoice_id: null,
              lines: 0,
            });
            continue;
          }
          expect(charge.status).toBe('invoiced');
          expect({ charge: charge.id, lines: carried.length }).toEqual({ charge: charge.id, lines: 1 });
          const [{ invoice, line }] = carried;
          expect({ charge: charge.id, invoice_id: charge.invoice_id, amount: line.amount }).toEqual({
            charge: charge.id,
            invoice_id: invoice.id,
            amount: debit.amount,
          });
          expect(invoice).toMatchObject({ subscriber_id: debit.subscriber_id, currency: debit.currency });
          expect(invoice.status).not.toBe('draft');
        }
        // The sequence saw both: debits an invoice issued after them carried, and debits still waiting.
        expect(debitCharges.some((charge) => charge.status === 'invoiced')).toBe(true);
        // Every charge line of an invoice is one charge the invoice carried.
        for (const [chargeId, carried] of linesByCharge) {
          const charge = allCharges.find((row) => row.id === chargeId);
          expect({ chargeId, status: charge?.status, invoice_id: charge?.invoice_id }).toEqual({
            chargeId,
            status: 'invoiced',
            invoice_id: carried[0].invoice.id,
          });
        }
      });

      it('should keep allocated_amount equal to the sum of the allocations of every transaction', () => {
        for (const txn of allTransactions) {
          expect({ id: txn.id, allocated: txn.allocated_amount }).toEqual({
            id: txn.id,
            allocated: allocationSums.get(txn.id) ?? 0,
          });
        }
        const allocatedIds = new Set(
          allTransactions.filter((txn) => txn.allocated_amount > 0).map((txn) => txn.id),
        );
        for (const id of allocationSums.keys()) {
          expect(allocatedIds.has(id)).toBe(true);
        }
        for (const txn of allTransactions.filter((row) => row.kind === 'debit' || row.kind === 'refund')) {
          expect(txn.allocated_amount).toBe(0);
          expect(txn.refunded_amount).toBe(0);
        }
      });

      it('should keep refunded_amount of every payment equal to the sum of its refunds', () => {
        const refunds = allTransactions.filter((txn) => txn.kind === 'refund');
        expect(refunds.length).toBeGreaterThan(0);
        for (const payment of allTransactions.filter((txn) => txn.kind === 'payment')) {
          const refunded = sumBy(
            refunds.filter((refund) => refund.refund_of === payment.id),
            (refund) => refund.amount,
          );
          expect({ id: payment.id, refunded: payment.refunded_amount }).toEqual({ id: payment.id, refunded });
        }
        for (const refund of refunds) {
          const payment = allTransactions.find((txn) => txn.id === refund.refund_of);
          expect(payment).toMatchObject({
            kind: 'payment',
            currency: refund.currency,
            subscriber_id: refund.subscriber_id,
          });
        }
      });

      it('should keep amount_paid + amount_due = total and amount_paid = the sum of its allocations for every invoice', () => {
        expect(allInvoices.length).toBeGreaterThan(50);
        for (const invoice of allInvoices) {
          expect({ id: invoice.id, sum: invoice.amount_paid + invoice.amount_due }).toEqual({
            id: invoice.id,
            sum: invoice.total,
          });
          expect({ id: invoice.id, paid: invoice.amount_paid }).toEqual({
            id: invoice.id,
            paid: invoiceAllocationSums.get(invoice.id) ?? 0,
          });
          expect(invoice.total).toBe(sumBy(invoice.lines, (line) => line.quantity * line.unit_amount));
          expect(invoice.amount_due).toBeGreaterThanOrEqual(0);
        }
      });

      it("should keep every invoice's status in line with what is paid", () => {
        const seen = new Set<string>();
        for (const invoice of allInvoices) {
          seen.add(invoice.status);
          const state = {
            id: invoice.id,
            status: invoice.status,
            paid: invoice.amount_paid,
            due: invoice.amount_due,
          };
          switch (invoice.status) {
            case 'draft':
            case 'void':
            case 'open':
              expect(state).toEqual({ ...state, paid: 0 });
              break;
            case 'partially_paid':
              expect(state.paid > 0 && state.due > 0).toBe(true);
              break;
            case 'paid':
              expect(state).toEqual({ ...state, due: 0 });
              expect(invoice.paid_at).not.toBeNull();
              break;
          }
        }
        expect([...seen].sort()).toEqual(['draft', 'open', 'paid', 'partially_paid', 'void']);
      });

      it('should only allocate within one subscriber and currency', async () => {
        const rows: { n: string }[] = await t.dataSource.query(
          `SELECT COUNT(*) AS n FROM allocations a
             JOIN transactions t ON t.id = a.transaction_id
             LEFT JOIN invoices i ON i.id = a.invoice_id
           WHERE a.tenant_id = $1
             AND (t.subscriber_id <> a.subscriber_id OR t.currency <> a.currency
                  OR t.kind NOT IN ('payment', 'credit')
                  OR (i.id IS NOT NULL AND (i.subscriber_id <> a.subscriber_id OR i.currency <> a.currency)))`,
          [tenant.tenantId],
        );
        expect(Number(rows[0].n)).toBe(0);
      });

      it('should keep the ledger running: each balance_after is the one before plus the amount', async () => {
        for (const subscriberId of subscribers) {
          const entries = (
            await listAll<LedgerEntryRecord>(t, tenant.token, `/api/v1/subscribers/${subscriberId}/ledger`)
          ).reverse();
          for (const currency of CURRENCIES) {
            let running = 0;
            for (const entry of entries.filter((row) => row.currency === currency)) {
              running += entry.amount;
              expect({ id: entry.id, balance_after: entry.balance_after }).toEqual({
                id: entry.id,
                balance_after: running,
              });
            }
          }
        }
      });

      it("should make the balance endpoint agree with the ledger and with the subscriber's invoices and transactions", async () => {
        for (const subscriberId of subscribers) {
          const entries = await listAll<LedgerEntryRecord>(
            t,
            tenant.token,
            `/api/v1/subscribers/${subscriberId}/ledger`,
          );
          const balances = await getBalances(t, tenant.token, subscriberId);
          for (const currency of CURRENCIES) {
            const ofCurrency = entries.filter((entry) => entry.currency === currency);
            const ledgerSum = sumBy(ofCurrency, (entry) => entry.amount);
            const latest = ofCurrency[0]?.balance_after ?? 0;
            expect({ subscriberId, currency, latest }).toEqual({ subscriberId, currency, latest: ledgerSum });

            const invoices = allInvoices.filter(
              (i) => i.subscriber_id === subscriberId && i.currency === currency,
            );
            const txns = allTransactions.filter(
              (x) => x.subscriber_id === subscriberId && x.currency === currency,
            );
            const owed =
              sumBy(
                invoices.filter((i) => i.status !== 'draft' && i.status !== 'void'),
                (i) => i.total,
              ) +
              // A debit is owed once an invoice carries it (its total has the charge's line), not before.
              sumBy(
                txns.filter((x) => x.kind === 'refund'),
                (x) => x.amount,
              ) -
              sumBy(
                txns.filter((x) => x.kind === 'payment' || x.kind === 'credit'),
                (x) => x.amount,
              );
            const expected: CurrencyBalance = {
              currency,
              balance: owed,
              open_invoices_due: sumBy(
                invoices.filter((i) => i.status === 'open' || i.status === 'partially_paid'),
                (i) => i.amount_due,
              ),
              unallocated_credit: sumBy(
                txns.filter((x) => x.kind === 'payment' || x.kind === 'credit'),
                (x) => x.unallocated_amount,
              ),
            };
            expect(ledgerSum).toBe(owed);
            const row = balances.find((b) => b.currency === currency) ?? {
              currency,
              balance: 0,
              open_invoices_due: 0,
              unallocated_credit: 0,
            };
            expect({ subscriberId, ...row }).toEqual({ subscriberId, ...expected });
          }
        }
      });

      it('should have written one created event per invoice and per transaction', async () => {
        const invoiceEvents = await listAll<EventBody>(t, tenant.token, '/api/v1/events', {
          type: 'invoice.created',
        });
        const transactionEvents = await listAll<EventBody>(t, tenant.token, '/api/v1/events', {
          type: 'transaction.created',
        });
        expect(new Set(invoiceEvents.map((event) => event.subject_id))).toEqual(
          new Set(allInvoices.map((invoice) => invoice.id)),
        );
        expect(invoiceEvents).toHaveLength(allInvoices.length);
        expect(new Set(transactionEvents.map((event) => event.subject_id))).toEqual(
          new Set(allTransactions.map((txn) => txn.id)),
        );
        expect(transactionEvents).toHaveLength(allTransactions.length);
        const paidEvents = await listAll<EventBody>(t, tenant.token, '/api/v1/events', {
          type: 'invoice.paid',
        });
        expect(paidEvents).toHaveLength(allInvoices.filter((invoice) => invoice.status === 'paid').length);
        expect(new Set(paidEvents.map((event) => event.subject_id))).toEqual(
          new Set(allInvoices.filter((invoice) => invoice.status === 'paid').map((invoice) => invoice.id)),
        );
      });
    });
  });
});
