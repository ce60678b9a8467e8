import { randomBytes } from 'node:crypto';
import request, { type Response } from 'supertest';
import {
  allocate,
  type Body,
  byHand,
  createBillingTenant,
  createInvoice,
  createPayment,
  eventsOf,
  eventTypesOf,
  FUTURE_DATE,
  getBalance,
  getInvoice,
  getTransaction,
  type InvoiceRecord,
  type LedgerEntryRecord,
  listAll,
  newSubscriberId,
  postInvoice,
  type TransactionRecord,
  TRANSACTION_ID,
  voidInvoice,
  startBillingApp,
  type BillingTenant,
  taxedLines,
} from '../support/billing-factory';
import {
  expectError,
  expectList,
  expectReplayOf,
  expectSuccess,
  expectNotFound,
  successRecord,
} from '../support/envelope';
import { bearer } from '../support/factories';
import { createBillingProfile, createSubscriber, ISO_MS, listen } from '../support/subscriber-factory';
import { createTenantWithToken, type TestApp } from '../support/test-app';

const CREDIT_NOTE_ID = /^cn_[0-9A-HJKMNP-TV-Z]{26}$/;
const YEAR = new Date().getUTCFullYear();
const cnNumber = (sequence: number) => `CN-${YEAR}-${String(sequence).padStart(6, '0')}`;
const invNumber = (sequence: number) => `INV-${YEAR}-${String(sequence).padStart(6, '0')}`;
const UNKNOWN_INVOICE = 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB';

const CREDIT_NOTE_KEYS = [
  'applied_to_invoice',
  'created_at',
  'credit_transaction_id',
  'currency',
  'id',
  'invoice_id',
  'lines',
  'number',
  'reason',
  'refund_of',
  'refund_transaction_id',
  'sequence',
  'subscriber_id',
  'subtotal',
  'tax_amount',
  'taxes',
  'total',
];

interface CreditNoteLineRecord {
  invoice_line: number;
  description: string;
  amount: number;
  net_amount: number;
  tax_amount: number;
  tax_rate_ids: string[];
  taxes: { tax_rate_id: string; name: string; percentage: string; taxable_amount: number; amount: number }[];
}

interface CreditNoteRecord {
  id: string;
  number: string;
  sequence: number;
  invoice_id: string;
  subscriber_id: string;
  currency: string;
  reason: string;
  lines: CreditNoteLineRecord[];
  subtotal: number;
  taxes: { tax_rate_id: string; name: string; percentage: string; taxable_amount: number; amount: number }[];
  tax_amount: number;
  total: number;
  credit_transaction_id: string;
  applied_to_invoice: number;
  refund_transaction_id: string | null;
  refund_of: string | null;
  created_at: string;
}

/** An invoice line as POST /invoices takes it: description, price of one unit, the rates ([]: untaxed). */
type LineSpec = [description: string, unitAmount: number, taxRateIds: string[]];

/** Issue 29 item 7: credit notes against finalised invoices, and what they do to invoices, money and the ledger. */
describe('Billing: credit notes', () => {
  let t: TestApp;
  let a: BillingTenant;
  /** VAT 21 % (exclusive) and 21 % inclusive, of tenant a. */
  let vat: string;
  let vatIncl: string;

  const postCreditNote = (
    invoiceId: string,
    body: unknown,
    token = a.token,
    headers: Record<string, string> = {},
  ) =>
    request(t.http)
      .post(`/api/v1/invoices/${invoiceId}/credit-notes`)
      .set(bearer(token))
      .set(headers)
      .send(body as object);

  async function creditNote(invoiceId: string, body: Body, token = a.token): Promise<CreditNoteRecord> {
    const res = await postCreditNote(invoiceId, { reason: 'Outage 3-5 December', ...body }, token);
    expectSuccess(res, 201);
    const note = res.body.data as CreditNoteRecord;
    expectNoteAddsUp(note);
    return note;
  }

  /** A credit note's figures add up: its lines to its subtotal and tax, its tax rows to its tax, net + tax to total. */
  function expectNoteAddsUp(note: CreditNoteRecord): void {
    expect({
      subtotal: note.lines.reduce((sum, line) => sum + line.net_amount, 0),
      tax: note.lines.reduce((sum, line) => sum + line.tax_amount, 0),
      rows: note.taxes.reduce((sum, row) => sum + row.amount, 0),
      total: note.subtotal + note.tax_amount,
    }).toEqual({ subtotal: note.subtotal, tax: note.tax_amount, rows: note.tax_amount, total: note.total });
  }

  async function createRate(token: string, body: Body): Promise<string> {
    const res = await request(t.http).post('/api/v1/tax-rates').set(bearer(token)).send(body);
    expectSuccess(res, 201);
    return res.body.data.id as string;
  }

  /** An open invoice of these lines, due `dueDate`. */
  function issue(
    subscriberId: string,
    lines: LineSpec[],
    dueDate = FUTURE_DATE,
    token = a.token,
    overrides: Body = {},
  ): Promise<InvoiceRecord> {
    return createInvoice(t, token, subscriberId, 0, {
      due_date: dueDate,
      lines: taxedLines(lines),
      ...overrides,
    });
  }

  function writeOff(invoiceId: string, token = a.token) {
    return request(t.http)
      .post(`/api/v1/invoices/${invoiceId}/write-off`)
      .set(bearer(token))
      .send({ reason: 'moved away' });
  }

  async function balanceOf(subscriberId: string, token = a.token): Promise<number> {
    return (await getBalance(t, token, subscriberId))?.balance ?? 0;
  }

  /**
   * The ledger's invariants for one subscriber in USD: Σ of its entries = its latest balance_after = GET /balance,
   * each balance_after the running sum; answers the balance.
   */
  async function expectLedgerAgrees(subscriberId: string, token = a.token): Promise<number> {
    const entries = (
      await listAll<LedgerEntryRecord>(t, token, `/api/v1/subscribers/${subscriberId}/ledger`)
    ).filter((entry) => entry.currency === 'USD');
    let running = 0;
    for (const entry of [...entries].reverse()) {
      running += entry.amount;
      expect(entry.balance_after).toBe(running);
    }
    const balance = await balanceOf(subscriberId, token);
    expect({ sum: running, latest: entries[0]?.balance_after ?? 0 }).toEqual({
      sum: balance,
      latest: balance,
    });
    return balance;
  }

  /** An invoice's money agrees with its allocations: Σ allocations = amount_paid, amount_due = total − paid. */
  async function expectInvoiceAgrees(invoiceId: string, token = a.token): Promise<InvoiceRecord> {
    const invoice = await getInvoice(t, token, invoiceId);
    const allocated = (invoice.allocations ?? []).reduce((sum, each) => sum + each.amount, 0);
    expect(allocated).toBe(invoice.amount_paid);
    expect(invoice.amount_due).toBe(invoice.total - invoice.amount_paid);
    return invoice;
  }

  /** A transaction's allocated_amount agrees with its allocations. */
  async function expectTransactionAgrees(id: string, token = a.token): Promise<TransactionRecord> {
    const transaction = await getTransaction(t, token, id);
    const allocated = (transaction.allocations ?? []).reduce((sum, each) => sum + each.amount, 0);
    expect(transaction.allocated_amount).toBe(allocated);
    return transaction;
  }

  async function creditNotesOf(query: Record<string, string>, token = a.token) {
    return listAll<CreditNoteRecord>(t, token, '/api/v1/credit-notes', query);
  }

  beforeAll(async () => {
    t = await startBillingApp();
    await listen(t);
    a = await createBillingTenant(t);
    vat = await createRate(a.token, { name: 'VAT 21%', percentage: '21' });
    vatIncl = await createRate(a.token, { name: 'VAT 21% incl.', percentage: '21', inclusive: true });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('on an open invoice', () => {
    it('should answer 201 with the numbered credit note, taxed like the line, and lower what is due', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500', 10000, [vat]]]);
      expect(invoice).toMatchObject({ status: 'open', subtotal: 10000, tax_amount: 2100, total: 12100 });
      expect(await balanceOf(subscriberId)).toBe(12100);

      const res = await postCreditNote(invoice.id, { reason: 'Outage 3-5 December', amount: 1210 });
      const note = successRecord<CreditNoteRecord>(res, CREDIT_NOTE_KEYS, 201);
      expect(note).toMatchObject({
        id: expect.stringMatching(CREDIT_NOTE_ID),
        number: expect.stringMatching(new RegExp(`^CN-${YEAR}-\\d{6}$`)),
        invoice_id: invoice.id,
        subscriber_id: subscriberId,
        currency: 'USD',
        reason: 'Outage 3-5 December',
        subtotal: 1000,
        tax_amount: 210,
        total: 1210,
        credit_transaction_id: expect.stringMatching(TRANSACTION_ID),
        applied_to_invoice: 1210,
        refund_transaction_id: null,
        refund_of: null,
        created_at: expect.stringMatching(ISO_MS),
      });
      expect(note.number).toBe(cnNumber(note.sequence));
      expect(note.lines).toHaveLength(1);
      expect(note.lines[0]).toMatchObject({
        invoice_line: 0,
        description: 'Fiber 500',
        net_amount: 1000,
        tax_amount: 210,
        tax_rate_ids: [vat],
        taxes: [expect.objectContaining({ tax_rate_id: vat, percentage: '21.0000', amount: 210 })],
      });
      expect(note.taxes).toEqual([
        expect.objectContaining({ tax_rate_id: vat, name: 'VAT 21%', taxable_amount: 1000, amount: 210 }),
      ]);

      const after = await expectInvoiceAgrees(invoice.id);
      expect(after).toMatchObject({ total: 12100, amount_due: 10890 });
      expect(after.allocations!.map((each) => [each.transaction_id, each.amount])).toEqual([
        [note.credit_transaction_id, 1210],
      ]);

      const credit = await expectTransactionAgrees(note.credit_transaction_id);
      expect(credit).toMatchObject({
        kind: 'credit',
        source: 'adjustment',
        amount: 1210,
        reference: note.number,
        allocated_amount: 1210,
        unallocated_amount: 0,
        metadata: expect.objectContaining({ credit_note_id: note.id }),
      });
      expect(await expectLedgerAgrees(subscriberId)).toBe(10890);
    });

    it('should make the invoice paid when it credits all it still owes', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [
        ['Fiber 500', 4000, [vat]],
        ['Router', 1000, []],
      ]);
      const note = await creditNote(invoice.id, { amount: invoice.total });
      expect(note).toMatchObject({ total: 5840, applied_to_invoice: 5840 });
      expect(await expectInvoiceAgrees(invoice.id)).toMatchObject({ status: 'paid', amount_due: 0 });
      expect(await expectLedgerAgrees(subscriberId)).toBe(0);
    });

    it('should split a line priced tax-inclusive the same way: the whole line gives back exactly its net and tax', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500 (incl. VAT)', 1210, [vatIncl]]]);
      expect(invoice).toMatchObject({ total: 1210, subtotal: 1000, tax_amount: 210 });

      const part = await creditNote(invoice.id, { lines: [{ line: 0, amount: 500 }] });
      // 500 tax included at 21 %: net round(500 / 1.21) = 413, tax round(413 × 0.21) = 87.
      expect(part).toMatchObject({ total: 500, subtotal: 413, tax_amount: 87 });
      const rest = await creditNote(invoice.id, { lines: [{ line: 0 }] });
      expect(rest).toMatchObject({ total: 710, subtotal: 587, tax_amount: 123 });
      expect(part.subtotal + rest.subtotal).toBe(invoice.subtotal);
      expect(part.tax_amount + rest.tax_amount).toBe(invoice.tax_amount);
      expect(await expectInvoiceAgrees(invoice.id)).toMatchObject({ status: 'paid', amount_due: 0 });
      expect(await expectLedgerAgrees(subscriberId)).toBe(0);
    });

    it.each<[string, number, boolean, Body, Body]>([
      // 10.00 priced tax-inclusive at 21 %: no net gives exactly 10.00 (8.26 + 1.73 = 9.99, 8.27 + 1.74 = 10.01), so
      // the invoice splits it 8.27 + 1.73; 5.00 and the rest (5.00) each split 4.13 + 0.87.
      [
        '10.00 tax-inclusive, credited 5.00 then the rest',
        1000,
        true,
        { net: 827, tax: 173 },
        { amount: 500 },
      ],
      // 49.99 + 21 % (10.50) = 60.49; 10.00 splits 8.27 + 1.73 and the rest (50.49) 41.73 + 8.76.
      [
        '49.99 tax-exclusive, credited 10.00 then the rest',
        4999,
        false,
        { net: 4999, tax: 1050 },
        { amount: 1000 },
      ],
    ])(
      'should give back exactly what a line was invoiced, net and tax, once all of it is credited in parts: %s',
      async (_label, unitAmount, inclusive, invoiced, first) => {
        // Otherwise a fully credited line credits a cent more (or less) tax than was ever charged, and the tax report
        // (net of credit notes) shows tax on an invoice that was reversed in full.
        const subscriberId = await newSubscriberId(t, a.token);
        const invoice = await issue(subscriberId, [['Fiber 500', unitAmount, [inclusive ? vatIncl : vat]]]);
        expect({ net: invoice.subtotal, tax: invoice.tax_amount }).toEqual(invoiced);

        const part = await creditNote(invoice.id, { lines: [{ line: 0, ...first }] });
        const rest = await creditNote(invoice.id, { lines: [{ line: 0 }] });
        expect(part.total + rest.total).toBe(invoice.total);
        expect({ net: part.subtotal + rest.subtotal, tax: part.tax_amount + rest.tax_amount }).toEqual(
          invoiced,
        );
      },
    );
  });

  describe('on a partially paid invoice', () => {
    it("with auto_apply on: pays what it still owes, and the rest pays the subscriber's other open invoices, oldest due first", async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const target = await issue(subscriberId, [['Fiber 500', 10000, []]]);
      const payment = await createPayment(t, a.token, subscriberId, 6000);
      expect(payment.allocations!.map((each) => [each.invoice_id, each.amount])).toEqual([[target.id, 6000]]);
      const laterDue = await issue(subscriberId, [['Router', 2000, []]], '2099-06-01');
      const earlierDue = await issue(subscriberId, [['Install', 2000, []]], '2099-03-01');
      expect(await balanceOf(subscriberId)).toBe(8000);

      const note = await creditNote(target.id, { amount: 7000 });
      expect(note).toMatchObject({ total: 7000, applied_to_invoice: 4000 });

      expect(await expectInvoiceAgrees(target.id)).toMatchObject({ status: 'paid', amount_paid: 10000 });
      expect(await expectInvoiceAgrees(earlierDue.id)).toMatchObject({ status: 'paid', amount_due: 0 });
      expect(await expectInvoiceAgrees(laterDue.id)).toMatchObject({
        status: 'partially_paid',
        amount_due: 1000,
      });
      const credit = await expectTransactionAgrees(note.credit_transaction_id);
      expect(credit).toMatchObject({ allocated_amount: 7000, unallocated_amount: 0 });
      expect(credit.allocations!.map((each) => [each.invoice_id, each.amount])).toEqual([
        [target.id, 4000],
        [earlierDue.id, 2000],
        [laterDue.id, 1000],
      ]);
      expect(await expectLedgerAgrees(subscriberId)).toBe(1000);
    });

    it('with auto_apply off: pays what it still owes and the rest stays credit (the balance goes negative)', async () => {
      const profile = await createBillingProfile(t, a.token, { name: 'Manual money', auto_apply: false });
      const subscriberId = (await createSubscriber(t, a.token, { billing_profile_id: profile.id })).id;
      const target = await issue(subscriberId, [['Fiber 500', 10000, []]]);
      const payment = await byHand.createPayment(t, a.token, subscriberId, 6000);
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: target.id, amount: 6000 }] }),
      );
      const other = await issue(subscriberId, [['Router', 2000, []]], '2099-03-01');
      expect(await balanceOf(subscriberId)).toBe(6000);

      const note = await creditNote(target.id, { amount: 7000 });
      expect(note).toMatchObject({ total: 7000, applied_to_invoice: 4000 });
      expect(await expectInvoiceAgrees(target.id)).toMatchObject({ status: 'paid', amount_due: 0 });
      expect(await expectInvoiceAgrees(other.id)).toMatchObject({ status: 'open', amount_due: 2000 });
      expect(await expectTransactionAgrees(note.credit_transaction_id)).toMatchObject({
        allocated_amount: 4000,
        unallocated_amount: 3000,
      });
      expect(await getBalance(t, a.token, subscriberId)).toMatchObject({
        balance: -1000,
        unallocated_credit: 3000,
      });
      expect(await expectLedgerAgrees(subscriberId)).toBe(-1000);
    });
  });

  describe('on a paid invoice', () => {
    it('without refund: becomes credit, which auto-apply spends on the next invoice', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500', 5000, []]]);
      await createPayment(t, a.token, subscriberId, 5000);
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({ status: 'paid' });

      const note = await creditNote(invoice.id, { amount: 2000 });
      expect(note).toMatchObject({ total: 2000, applied_to_invoice: 0, refund_transaction_id: null });
      expect(await expectInvoiceAgrees(invoice.id)).toMatchObject({
        status: 'paid',
        amount_paid: 5000,
        amount_due: 0,
      });
      expect(await getTransaction(t, a.token, note.credit_transaction_id)).toMatchObject({
        allocated_amount: 0,
        unallocated_amount: 2000,
      });
      expect(await expectLedgerAgrees(subscriberId)).toBe(-2000);

      const next = await issue(subscriberId, [['Fiber 500', 3000, []]]);
      expect(await expectInvoiceAgrees(next.id)).toMatchObject({ amount_paid: 2000, amount_due: 1000 });
      expect(await expectLedgerAgrees(subscriberId)).toBe(1000);
    });

    it('with refund and payment_id: the invoice stays paid, the payment is refunded that much, the balance is back where it was', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500', 10000, [vat]]]);
      const payment = await createPayment(t, a.token, subscriberId, 12100, { method: 'card' });
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({ status: 'paid' });
      const before = await expectLedgerAgrees(subscriberId);
      expect(before).toBe(0);

      const note = await creditNote(invoice.id, { amount: 2420, refund: true, payment_id: payment.id });
      expect(note).toMatchObject({
        total: 2420,
        subtotal: 2000,
        tax_amount: 420,
        applied_to_invoice: 0,
        refund_transaction_id: expect.stringMatching(TRANSACTION_ID),
        refund_of: payment.id,
      });

      const after = await expectInvoiceAgrees(invoice.id);
      expect(after).toMatchObject({ status: 'paid', amount_paid: 12100, amount_due: 0 });
      expect(
        after
          .allocations!.map((each) => [each.transaction_id, each.amount])
          .sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      ).toEqual(
        [
          [payment.id, 9680],
          [note.credit_transaction_id, 2420],
        ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      );

      const refund = await getTransaction(t, a.token, note.refund_transaction_id!);
      expect(refund).toMatchObject({
        kind: 'refund',
        amount: 2420,
        currency: 'USD',
        refund_of: payment.id,
        subscriber_id: subscriberId,
      });
      expect(await expectTransactionAgrees(payment.id)).toMatchObject({
        refunded_amount: 2420,
        allocated_amount: 9680,
      });
      expect(await expectTransactionAgrees(note.credit_transaction_id)).toMatchObject({
        kind: 'credit',
        allocated_amount: 2420,
        unallocated_amount: 0,
      });

      const entries = await listAll<LedgerEntryRecord>(
        t,
        a.token,
        `/api/v1/subscribers/${subscriberId}/ledger`,
      );
      expect(entries.slice(0, 2).map((entry) => [entry.type, entry.amount, entry.source_id])).toEqual([
        ['refund', 2420, refund.id],
        ['credit', -2420, note.credit_transaction_id],
      ]);
      expect(await expectLedgerAgrees(subscriberId)).toBe(before);

      // The rest of the invoice, refunded through the same payment: all of it is now the credit notes'.
      const rest = await creditNote(invoice.id, { amount: 9680, refund: true, payment_id: payment.id });
      expect(rest.total).toBe(9680);
      expect(await expectTransactionAgrees(payment.id)).toMatchObject({
        refunded_amount: 12100,
        allocated_amount: 0,
        unallocated_amount: 0,
      });
      // Nothing of the payment is left to refund by hand either.
      expectError(
        await request(t.http).post('/api/v1/transactions').set(bearer(a.token)).send({
          subscriber_id: subscriberId,
          kind: 'refund',
          source: 'external',
          amount: 1,
          currency: 'USD',
          refund_of: payment.id,
        }),
        422,
        'refund_exceeds_refundable',
        'amount',
      );
      expect(await expectInvoiceAgrees(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 12100 });
      expect(await expectLedgerAgrees(subscriberId)).toBe(before);
    });

    it('with refund: 422 refund_exceeds_refundable when the payment paid less of this invoice than the refund', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500', 12100, []]]);
      const first = await createPayment(t, a.token, subscriberId, 6000);
      const second = await createPayment(t, a.token, subscriberId, 6100);
      const elsewhere = await issue(subscriberId, [['Router', 3000, []]]);
      const third = await createPayment(t, a.token, subscriberId, 3000);
      expect(
        (await getTransaction(t, a.token, third.id)).allocations!.map((each) => each.invoice_id),
      ).toEqual([elsewhere.id]);
      const ledger = await expectLedgerAgrees(subscriberId);

      const over = await postCreditNote(invoice.id, {
        reason: 'x',
        amount: 6001,
        refund: true,
        payment_id: first.id,
      });
      expectError(over, 422, 'refund_exceeds_refundable', 'payment_id');
      // A payment of the subscriber that paid another invoice paid none of this one.
      expectError(
        await postCreditNote(invoice.id, { reason: 'x', amount: 100, refund: true, payment_id: third.id }),
        422,
        'refund_exceeds_refundable',
        'payment_id',
      );
      expect(await creditNotesOf({ invoice_id: invoice.id })).toEqual([]);
      expect(await expectLedgerAgrees(subscriberId)).toBe(ledger);

      const note = await creditNote(invoice.id, { amount: 6100, refund: true, payment_id: second.id });
      expect(note.refund_of).toBe(second.id);
      expect(await expectTransactionAgrees(second.id)).toMatchObject({
        refunded_amount: 6100,
        allocated_amount: 0,
      });
      expect(await expectTransactionAgrees(first.id)).toMatchObject({
        refunded_amount: 0,
        allocated_amount: 6000,
      });
      expect(await expectInvoiceAgrees(invoice.id)).toMatchObject({ status: 'paid' });
      expect(await expectLedgerAgrees(subscriberId)).toBe(ledger);
    });
  });

  describe('on a paid invoice, more', () => {
    it("without refund, auto_apply on: pays the subscriber's other open invoice at once", async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500', 5000, []]]);
      await createPayment(t, a.token, subscriberId, 5000);
      const other = await issue(subscriberId, [['Router', 3000, []]], '2099-01-31');
      const note = await creditNote(invoice.id, { amount: 2000 });
      expect(note.applied_to_invoice).toBe(0);
      expect(await expectInvoiceAgrees(other.id)).toMatchObject({ amount_paid: 2000, amount_due: 1000 });
      expect(await expectTransactionAgrees(note.credit_transaction_id)).toMatchObject({
        allocated_amount: 2000,
        unallocated_amount: 0,
      });
      expect(await expectLedgerAgrees(subscriberId)).toBe(1000);
    });

    it('with refund: takes the place of a payment allocated to the invoice in two parts', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500', 3000, []]]);
      const payment = await byHand.createPayment(t, a.token, subscriberId, 3000);
      for (const amount of [1000, 2000]) {
        expectSuccess(
          await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount }] }),
        );
      }
      const note = await creditNote(invoice.id, { amount: 2500, refund: true, payment_id: payment.id });
      expect(note.refund_of).toBe(payment.id);
      const after = await expectInvoiceAgrees(invoice.id);
      expect(after).toMatchObject({ status: 'paid', amount_paid: 3000 });
      const byTransaction = (id: string) =>
        after
          .allocations!.filter((each) => each.transaction_id === id)
          .reduce((sum, each) => sum + each.amount, 0);
      expect([byTransaction(payment.id), byTransaction(note.credit_transaction_id)]).toEqual([500, 2500]);
      expect(await expectTransactionAgrees(payment.id)).toMatchObject({
        allocated_amount: 500,
        refunded_amount: 2500,
        unallocated_amount: 0,
      });
      expect(await expectLedgerAgrees(subscriberId)).toBe(0);
    });
  });

  describe('by lines and by amount', () => {
    let subscriberId: string;
    let invoice: InvoiceRecord;

    beforeAll(async () => {
      subscriberId = await newSubscriberId(t, a.token);
      invoice = await issue(subscriberId, [
        ['Fiber 500', 10000, [vat]],
        ['Static IP', 5000, [vat]],
        ['Router (untaxed)', 2000, []],
      ]);
      expect(invoice).toMatchObject({ subtotal: 17000, tax_amount: 3150, total: 20150 });
    });

    it('should credit a whole line: exactly its net and its tax', async () => {
      const note = await creditNote(invoice.id, { lines: [{ line: 0 }] });
      expect(note).toMatchObject({ subtotal: 10000, tax_amount: 2100, total: 12100 });
      expect(note.lines).toEqual([
        expect.objectContaining({
          invoice_line: 0,
          description: 'Fiber 500',
          net_amount: 10000,
          tax_amount: 2100,
        }),
      ]);
      expect(note.taxes).toEqual([
        expect.objectContaining({ tax_rate_id: vat, taxable_amount: 10000, amount: 2100 }),
      ]);
    });

    it('should credit an amount of a line, tax included', async () => {
      const note = await creditNote(invoice.id, { lines: [{ line: 1, amount: 1210 }] });
      expect(note).toMatchObject({ subtotal: 1000, tax_amount: 210, total: 1210 });
      expect(note.lines).toEqual([
        expect.objectContaining({ invoice_line: 1, net_amount: 1000, tax_amount: 210 }),
      ]);
    });

    it('should credit two lines at once: what is left of one (whole) and an amount of the other', async () => {
      const note = await creditNote(invoice.id, { lines: [{ line: 1 }, { line: 2, amount: 500 }] });
      // Line 1 had 6050 and 1210 of it was credited: 4840 left, 4000 net and 840 tax; line 2 is untaxed.
      expect(note.lines).toEqual([
        expect.objectContaining({ invoice_line: 1, net_amount: 4000, tax_amount: 840 }),
        expect.objectContaining({ invoice_line: 2, net_amount: 500, tax_amount: 0, taxes: [] }),
      ]);
      expect(note).toMatchObject({ subtotal: 4500, tax_amount: 840, total: 5340 });
    });

    it('should refuse more of a line than is left of it (422 credit_exceeds_invoice on the line)', async () => {
      expectError(
        await postCreditNote(invoice.id, { reason: 'x', lines: [{ line: 0, amount: 1 }] }),
        422,
        'credit_exceeds_invoice',
        'lines.0.amount',
      );
      expectError(
        await postCreditNote(invoice.id, { reason: 'x', lines: [{ line: 0 }] }),
        422,
        'credit_exceeds_invoice',
        'lines.0.line',
      );
      // Line 2 has 1500 left: two parts of it adding up to more are refused on the second.
      expectError(
        await postCreditNote(invoice.id, {
          reason: 'x',
          lines: [
            { line: 2, amount: 1000 },
            { line: 2, amount: 501 },
          ],
        }),
        422,
        'credit_exceeds_invoice',
        'lines.1.amount',
      );
      expectError(
        await postCreditNote(invoice.id, { reason: 'x', lines: [{ line: 3 }] }),
        422,
        'validation_failed',
        'lines.0.line',
      );
      expect(await creditNotesOf({ invoice_id: invoice.id })).toHaveLength(3);
    });

    it('should credit the rest by amount, then nothing more (422 credit_exceeds_invoice on amount)', async () => {
      // Credited so far 12100 + 1210 + 5340 = 18650 of 20150: 1500 left, all of it line 2 (untaxed).
      expectError(
        await postCreditNote(invoice.id, { reason: 'x', amount: 1501 }),
        422,
        'credit_exceeds_invoice',
        'amount',
      );
      const note = await creditNote(invoice.id, { amount: 1500 });
      expect(note.lines).toEqual([
        expect.objectContaining({ invoice_line: 2, net_amount: 1500, tax_amount: 0 }),
      ]);
      expectError(
        await postCreditNote(invoice.id, { reason: 'x', amount: 1 }),
        422,
        'credit_exceeds_invoice',
        'amount',
      );
      const notes = await creditNotesOf({ invoice_id: invoice.id });
      expect(notes.reduce((sum, each) => sum + each.total, 0)).toBe(invoice.total);
      expect(await expectInvoiceAgrees(invoice.id)).toMatchObject({ status: 'paid', amount_due: 0 });
      expect(await expectLedgerAgrees(subscriberId)).toBe(0);
    });

    it('should credit a whole line of several units, and one taxed at a simple and a compound rate, exactly', async () => {
      const other = await newSubscriberId(t, a.token);
      const local = await createRate(a.token, { name: 'Local 10%', percentage: '10' });
      const compound = await createRate(a.token, {
        name: 'Surtax 5% compound',
        percentage: '5',
        compound: true,
      });
      const issued = await createInvoice(t, a.token, other, 0, {
        lines: [
          { description: 'Static IPs', quantity: 3, unit_amount: 1000, tax_rate_ids: [vat] },
          { description: 'Fiber 1000', quantity: 1, unit_amount: 1999, tax_rate_ids: [local, compound] },
        ],
      });
      // 3 × 10.00 at 21 %: 30.00 + 6.30. 19.99 + 10 % (2.00) + 5 % of 21.99 (1.10): 23.09.
      expect(issued).toMatchObject({ subtotal: 4999, tax_amount: 940, total: 5939 });
      const first = await creditNote(issued.id, { lines: [{ line: 0 }] });
      expect(first).toMatchObject({ subtotal: 3000, tax_amount: 630, total: 3630 });
      const second = await creditNote(issued.id, { lines: [{ line: 1 }] });
      expect(second).toMatchObject({ subtotal: 1999, tax_amount: 310, total: 2309 });
      expect(second.lines[0].taxes.map((tax) => [tax.tax_rate_id, tax.taxable_amount, tax.amount])).toEqual([
        [local, 1999, 200],
        [compound, 2199, 110],
      ]);
      expect(await expectInvoiceAgrees(issued.id)).toMatchObject({ status: 'paid', amount_due: 0 });
    });

    it('should spread an amount over the lines in proportion to what is left of each', async () => {
      const other = await newSubscriberId(t, a.token);
      const two = await issue(other, [
        ['Fiber 500', 10000, [vat]],
        ['Static IP', 5000, [vat]],
      ]);
      const note = await creditNote(two.id, { amount: 1815 });
      // 12100 : 6050 = 2 : 1, so 1210 and 605: nets 1000 and 500, taxes 210 and 105.
      expect(note.lines).toEqual([
        expect.objectContaining({ invoice_line: 0, net_amount: 1000, tax_amount: 210 }),
        expect.objectContaining({ invoice_line: 1, net_amount: 500, tax_amount: 105 }),
      ]);
      expect(note).toMatchObject({ subtotal: 1500, tax_amount: 315, total: 1815 });
      expect(note.taxes).toEqual([
        expect.objectContaining({ tax_rate_id: vat, taxable_amount: 1500, amount: 315 }),
      ]);

      // An odd amount still adds up exactly.
      const odd = await creditNote(two.id, { amount: 1001 });
      expect(odd.total).toBe(1001);
      expect(odd.lines.reduce((sum, line) => sum + line.net_amount + line.tax_amount, 0)).toBe(1001);
      expect(odd.subtotal + odd.tax_amount).toBe(1001);
      expect(await expectInvoiceAgrees(two.id)).toMatchObject({ amount_due: 18150 - 1815 - 1001 });
      expect(await expectLedgerAgrees(other)).toBe(18150 - 1815 - 1001);
    });

    it('should cap a taxed invoice at its total less earlier credit notes', async () => {
      const other = await newSubscriberId(t, a.token);
      const taxed = await issue(other, [['Fiber 500', 10000, [vat]]]);
      expectError(
        await postCreditNote(taxed.id, { reason: 'x', amount: 12101 }),
        422,
        'credit_exceeds_invoice',
        'amount',
      );
      await creditNote(taxed.id, { amount: 6050 });
      expectError(
        await postCreditNote(taxed.id, { reason: 'x', amount: 6051 }),
        422,
        'credit_exceeds_invoice',
        'amount',
      );
      expectError(
        await postCreditNote(taxed.id, { reason: 'x', lines: [{ line: 0, amount: 6051 }] }),
        422,
        'credit_exceeds_invoice',
        'lines.0.amount',
      );
      const rest = await creditNote(taxed.id, { lines: [{ line: 0 }] });
      expect(rest).toMatchObject({ total: 6050, subtotal: 5000, tax_amount: 1050 });
      expect(await expectLedgerAgrees(other)).toBe(0);
    });
  });

  describe('refused', () => {
    it('should answer 409 invalid_state_transition for a draft, a void and a written-off invoice', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const draft = await issue(subscriberId, [['Fiber 500', 1000, []]], FUTURE_DATE, a.token, {
        draft: true,
      });
      const voided = await issue(subscriberId, [['Fiber 500', 1000, []]]);
      expectSuccess(await voidInvoice(t, a.token, voided.id));
      const writtenOff = await issue(subscriberId, [['Fiber 500', 1000, []]]);
      expectSuccess(await writeOff(writtenOff.id));
      const ledger = await expectLedgerAgrees(subscriberId);

      for (const invoice of [draft, voided, writtenOff]) {
        expectError(
          await postCreditNote(invoice.id, { reason: 'x', amount: 100 }),
          409,
          'invalid_state_transition',
        );
      }
      expect(await creditNotesOf({ subscriber_id: subscriberId })).toEqual([]);
      expect(await expectLedgerAgrees(subscriberId)).toBe(ledger);
    });

    it("should answer 404 not_found for an unknown invoice and another tenant's", async () => {
      expectNotFound(await postCreditNote(UNKNOWN_INVOICE, { reason: 'x', amount: 100 }));
      const other = await createBillingTenant(t);
      const theirs = await issue(other.subscriberId, [['Fiber 500', 1000, []]], FUTURE_DATE, other.token);
      expectNotFound(await postCreditNote(theirs.id, { reason: 'x', amount: 100 }));
    });

    describe('validation', () => {
      let subscriberId: string;
      let invoice: InvoiceRecord;
      let payment: TransactionRecord;

      beforeAll(async () => {
        subscriberId = await newSubscriberId(t, a.token);
        invoice = await issue(subscriberId, [['Fiber 500', 5000, []]]);
        payment = await createPayment(t, a.token, subscriberId, 5000);
      });
      afterAll(async () => {
        // Nothing refused was written: no credit note, and the invoice as it was.
        expect(await creditNotesOf({ invoice_id: invoice.id })).toEqual([]);
        expect(await expectInvoiceAgrees(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 5000 });
        await expectLedgerAgrees(subscriberId);
      });

      it.each<[string, Body, number, string, string]>([
        ['both lines and amount', { lines: [{ line: 0 }], amount: 100 }, 422, 'validation_failed', 'lines'],
        ['neither lines nor amount', {}, 422, 'validation_failed', 'lines'],
        ['no lines (empty list)', { lines: [] }, 422, 'validation_failed', 'lines'],
        ['an amount of 0', { amount: 0 }, 422, 'validation_failed', 'amount'],
        ['a negative amount', { amount: -5 }, 422, 'validation_failed', 'amount'],
        [
          'a line amount of 0',
          { lines: [{ line: 0, amount: 0 }] },
          422,
          'validation_failed',
          'lines.0.amount',
        ],
        ['a negative line index', { lines: [{ line: -1 }] }, 422, 'validation_failed', 'lines.0.line'],
        ['refund as a string', { amount: 100, refund: 'yes' }, 422, 'validation_failed', 'refund'],
        ['refund without payment_id', { amount: 100, refund: true }, 400, 'missing_field', 'payment_id'],
        ['an unknown field', { amount: 100, note: 'x' }, 400, 'unknown_field', 'note'],
      ])('should refuse %s', async (_label, body, status, code, field) => {
        expectError(await postCreditNote(invoice.id, { reason: 'x', ...body }), status, code, field);
      });

      it('should refuse no reason (400 missing_field) and a blank one', async () => {
        expectError(await postCreditNote(invoice.id, { amount: 100 }), 400, 'missing_field', 'reason');
        expectError(
          await postCreditNote(invoice.id, { reason: '', amount: 100 }),
          422,
          'validation_failed',
          'reason',
        );
      });

      it('should refuse payment_id without refund: true (422 validation_failed)', async () => {
        expectError(
          await postCreditNote(invoice.id, { reason: 'x', amount: 100, payment_id: payment.id }),
          422,
          'validation_failed',
          'payment_id',
        );
        expectError(
          await postCreditNote(invoice.id, {
            reason: 'x',
            amount: 100,
            refund: false,
            payment_id: payment.id,
          }),
          422,
          'validation_failed',
          'payment_id',
        );
      });

      it("should refuse a payment_id that is unknown, another subscriber's or not a payment (422 invalid_reference)", async () => {
        const someoneElse = await newSubscriberId(t, a.token);
        const theirs = await byHand.createPayment(t, a.token, someoneElse, 5000);
        const credit = await byHand.createTransaction(t, a.token, subscriberId, {
          kind: 'credit',
          source: 'adjustment',
          amount: 100,
        });
        for (const paymentId of ['txn_01JD3Z6W3R4T5Y6U7I8O9P0QAB', theirs.id, credit.id]) {
          expectError(
            await postCreditNote(invoice.id, {
              reason: 'x',
              amount: 100,
              refund: true,
              payment_id: paymentId,
            }),
            422,
            'invalid_reference',
            'payment_id',
          );
        }
      });

      it('should refuse a token without billing:write (403) and no token (401)', async () => {
        const reader = await createTenantWithToken(t, ['billing:read']);
        expectError(
          await postCreditNote(invoice.id, { reason: 'x', amount: 100 }, reader.token),
          403,
          'insufficient_scope',
        );
        expectError(
          await request(t.http)
            .post(`/api/v1/invoices/${invoice.id}/credit-notes`)
            .send({ reason: 'x', amount: 100 }),
          401,
          'authentication_required',
        );
      });
    });
  });

  describe('numbering', () => {
    it('should number CN-YYYY-000001 on, gapless per tenant and independent of the invoice series', async () => {
      const fresh = await createBillingTenant(t);
      const first = await issue(fresh.subscriberId, [['Fiber 500', 5000, []]], FUTURE_DATE, fresh.token);
      expect(first.number).toBe(invNumber(1));
      const n1 = await creditNote(first.id, { amount: 100 }, fresh.token);
      const second = await issue(fresh.subscriberId, [['Fiber 500', 5000, []]], FUTURE_DATE, fresh.token);
      const third = await issue(fresh.subscriberId, [['Fiber 500', 5000, []]], FUTURE_DATE, fresh.token);
      const n2 = await creditNote(second.id, { amount: 100 }, fresh.token);
      // A refused one takes no number.
      expectError(
        await postCreditNote(third.id, { reason: 'x', amount: 5001 }, fresh.token),
        422,
        'credit_exceeds_invoice',
        'amount',
      );
      const n3 = await creditNote(first.id, { amount: 100 }, fresh.token);
      expect([second.number, third.number]).toEqual([invNumber(2), invNumber(3)]);
      expect([n1, n2, n3].map((note) => [note.number, note.sequence])).toEqual([
        [cnNumber(1), 1],
        [cnNumber(2), 2],
        [cnNumber(3), 3],
      ]);
      // The invoice series went on by itself.
      const fourth = await issue(fresh.subscriberId, [['Fiber 500', 5000, []]], FUTURE_DATE, fresh.token);
      expect(fourth.number).toBe(invNumber(4));

      // Another tenant's series starts at 1.
      const other = await createBillingTenant(t);
      const theirs = await issue(other.subscriberId, [['Fiber 500', 5000, []]], FUTURE_DATE, other.token);
      expect((await creditNote(theirs.id, { amount: 100 }, other.token)).number).toBe(cnNumber(1));
    });
  });

  describe('concurrency', () => {
    it('should let exactly floor(room / X) of 10 parallel credit notes through, the rest 422, numbered without a gap', async () => {
      const fresh = await createBillingTenant(t);
      const invoice = await issue(fresh.subscriberId, [['Fiber 500', 10000, []]], FUTURE_DATE, fresh.token);
      const earlier = await creditNote(invoice.id, { amount: 2500 }, fresh.token);
      expect(earlier.sequence).toBe(1);
      const room = 10000 - 2500;
      const x = 1000;

      const results: Response[] = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          postCreditNote(invoice.id, { reason: `Parallel ${i}`, amount: x }, fresh.token),
        ),
      );
      expect(results.filter((res) => res.status >= 500).map((res) => JSON.stringify(res.body))).toEqual([]);
      const created = results.filter((res) => res.status === 201);
      const refused = results.filter((res) => res.status !== 201);
      expect(created).toHaveLength(Math.floor(room / x));
      for (const res of refused) {
        expectError(res, 422, 'credit_exceeds_invoice', 'amount');
      }
      const sequences = created
        .map((res) => (res.body.data as CreditNoteRecord).sequence)
        .sort((p, q) => p - q);
      expect(sequences).toEqual(Array.from({ length: Math.floor(room / x) }, (_, i) => i + 2));
      for (const res of created) {
        const note = res.body.data as CreditNoteRecord;
        expect(note.number).toBe(cnNumber(note.sequence));
      }

      const notes = await creditNotesOf({ invoice_id: invoice.id }, fresh.token);
      expect(notes).toHaveLength(1 + Math.floor(room / x));
      const credited = notes.reduce((sum, note) => sum + note.total, 0);
      expect(credited).toBe(2500 + Math.floor(room / x) * x);
      expect(await expectInvoiceAgrees(invoice.id, fresh.token)).toMatchObject({
        amount_due: 10000 - credited,
      });
      expect(await expectLedgerAgrees(fresh.subscriberId, fresh.token)).toBe(10000 - credited);
    });

    it("should number credit notes of several subscribers' invoices issued at once 1..N, with invoices issued meanwhile", async () => {
      const fresh = await createBillingTenant(t);
      const invoices: InvoiceRecord[] = [];
      for (let i = 0; i < 4; i++) {
        const subscriberId = await newSubscriberId(t, fresh.token);
        invoices.push(
          await issue(subscriberId, [['Fiber 500', 10000, [] as string[]]], FUTURE_DATE, fresh.token),
        );
      }
      const results: Response[] = await Promise.all([
        ...invoices.flatMap((invoice) =>
          [1, 2, 3].map((n) =>
            postCreditNote(invoice.id, { reason: `Part ${n}`, amount: 1000 * n }, fresh.token),
          ),
        ),
        ...invoices.map((invoice) =>
          postInvoice(t, fresh.token, {
            subscriber_id: invoice.subscriber_id,
            currency: 'USD',
            due_date: FUTURE_DATE,
            lines: [{ description: 'Router', quantity: 1, unit_amount: 500 }],
          }),
        ),
      ]);
      expect(results.map((res) => res.status)).toEqual([...Array(12).fill(201), ...Array(4).fill(201)]);
      const sequences = results
        .slice(0, 12)
        .map((res) => (res.body.data as CreditNoteRecord).sequence)
        .sort((p, q) => p - q);
      expect(sequences).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      const invoiceSequences = [
        ...invoices,
        ...results.slice(12).map((res) => res.body.data as InvoiceRecord),
      ]
        .map((invoice) => invoice.sequence!)
        .sort((p, q) => p - q);
      expect(invoiceSequences).toEqual(Array.from({ length: 8 }, (_, i) => i + 1));
      for (const invoice of invoices) {
        expect(await expectInvoiceAgrees(invoice.id, fresh.token)).toMatchObject({ amount_due: 4000 });
        await expectLedgerAgrees(invoice.subscriber_id, fresh.token);
      }
    });

    it('should keep every invoice and transaction consistent when payments, refunds and credit notes race on it', async () => {
      const fresh = await createBillingTenant(t);
      const rounds = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const subscriberId = await newSubscriberId(t, fresh.token);
          const invoice = await issue(
            subscriberId,
            [['Fiber 500', 10000, [] as string[]]],
            FUTURE_DATE,
            fresh.token,
          );
          const paid = await createPayment(t, fresh.token, subscriberId, 4000);
          return { subscriberId, invoice, paid };
        }),
      );
      const results: Response[] = await Promise.all(
        rounds.flatMap(({ subscriberId, invoice, paid }) => [
          postCreditNote(invoice.id, { reason: 'Outage', amount: 7000 }, fresh.token),
          postCreditNote(
            invoice.id,
            { reason: 'Refund', amount: 2000, refund: true, payment_id: paid.id },
            fresh.token,
          ),
          request(t.http).post('/api/v1/transactions').set(bearer(fresh.token)).send({
            subscriber_id: subscriberId,
            kind: 'payment',
            source: 'external',
            amount: 5000,
            currency: 'USD',
          }),
        ]),
      );
      expect(results.filter((res) => res.status >= 500).map((res) => JSON.stringify(res.body))).toEqual([]);
      // Room is 10000: 7000 + 2000 always fit, so every one of them is answered 201.
      expect(results.map((res) => res.status)).toEqual(Array(results.length).fill(201));
      for (const { subscriberId, invoice, paid } of rounds) {
        const after = await expectInvoiceAgrees(invoice.id, fresh.token);
        expect(after.amount_paid).toBeLessThanOrEqual(after.total);
        expect(after.amount_due).toBeGreaterThanOrEqual(0);
        expect(await expectTransactionAgrees(paid.id, fresh.token)).toMatchObject({ refunded_amount: 2000 });
        // 10000 invoiced, 4000 + 5000 paid, 9000 credited, 2000 refunded.
        expect(await expectLedgerAgrees(subscriberId, fresh.token)).toBe(10000 - 9000 - 9000 + 2000);
      }
    });
  });

  describe('events', () => {
    it('should emit transaction.created, transaction.allocated, invoice.paid and credit_note.created', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500', 3000, []]]);
      const note = await creditNote(invoice.id, { amount: 3000 });

      const [created, ...more] = await eventsOf(t, a.token, note.id, 'credit_note.created');
      expect(more).toEqual([]);
      expect(created.data.object).toEqual(note);
      expect(await eventTypesOf(t, a.token, note.credit_transaction_id)).toEqual([
        'transaction.created',
        'transaction.allocated',
      ]);
      const [allocated] = await eventsOf(t, a.token, note.credit_transaction_id, 'transaction.allocated');
      expect(allocated.data.allocations).toEqual([
        expect.objectContaining({ invoice_id: invoice.id, amount: 3000 }),
      ]);
      expect(await eventsOf(t, a.token, invoice.id, 'invoice.paid')).toHaveLength(1);
    });

    it('with a refund: transaction.refunded of the payment and transaction.created of the refund', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500', 3000, []]]);
      const payment = await createPayment(t, a.token, subscriberId, 3000);
      const note = await creditNote(invoice.id, { amount: 1000, refund: true, payment_id: payment.id });

      expect(await eventsOf(t, a.token, note.id, 'credit_note.created')).toHaveLength(1);
      const [refunded, ...more] = await eventsOf(t, a.token, payment.id, 'transaction.refunded');
      expect(more).toEqual([]);
      expect(refunded.data).toMatchObject({
        object: expect.objectContaining({ id: payment.id, refunded_amount: 1000 }),
        refund_id: note.refund_transaction_id,
        amount: 1000,
      });
      expect(await eventTypesOf(t, a.token, note.refund_transaction_id!)).toEqual(['transaction.created']);
      expect(await eventTypesOf(t, a.token, note.credit_transaction_id)).toEqual([
        'transaction.created',
        'transaction.allocated',
      ]);
      // The invoice was paid already: it is not paid again.
      expect(await eventsOf(t, a.token, invoice.id, 'invoice.paid')).toHaveLength(1);
    });
  });

  describe('X-Idempotency-Key', () => {
    it('should answer a replay with the same credit note and credit once', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await issue(subscriberId, [['Fiber 500', 3000, []]]);
      const headers = { 'X-Idempotency-Key': `cn-${randomBytes(8).toString('hex')}` };
      const body = { reason: 'Outage', amount: 1000 };
      const first = await postCreditNote(invoice.id, body, a.token, headers);
      expectSuccess(first, 201);
      const replay = await postCreditNote(invoice.id, body, a.token, headers);
      expectReplayOf(replay, first);

      expect((await creditNotesOf({ invoice_id: invoice.id })).map((note) => note.id)).toEqual([
        first.body.data.id,
      ]);
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({ amount_due: 2000 });
      expect(await expectLedgerAgrees(subscriberId)).toBe(2000);

      expectError(
        await postCreditNote(invoice.id, { ...body, amount: 999 }, a.token, headers),
        422,
        'idempotency_key_reused',
        'X-Idempotency-Key',
      );
    });
  });

  describe('GET /api/v1/credit-notes and /api/v1/credit-notes/{id}', () => {
    let tenant: BillingTenant;
    let otherSubscriber: string;
    let notes: CreditNoteRecord[];
    let invoices: InvoiceRecord[];

    beforeAll(async () => {
      tenant = await createBillingTenant(t);
      otherSubscriber = await newSubscriberId(t, tenant.token);
      invoices = [
        await issue(tenant.subscriberId, [['Fiber 500', 5000, []]], FUTURE_DATE, tenant.token),
        await issue(tenant.subscriberId, [['Fiber 500', 5000, []]], FUTURE_DATE, tenant.token),
        await issue(otherSubscriber, [['Fiber 500', 5000, []]], FUTURE_DATE, tenant.token),
      ];
      notes = [];
      for (const invoice of [invoices[0], invoices[1], invoices[0], invoices[2]]) {
        notes.push(await creditNote(invoice.id, { amount: 100 }, tenant.token));
      }
    });

    it('should list them newest first, filtered by invoice_id and subscriber_id', async () => {
      const ids = (query: Record<string, string>) =>
        creditNotesOf(query, tenant.token).then((rows) => rows.map((row) => row.id));
      expect(await ids({})).toEqual([...notes].reverse().map((note) => note.id));
      expect(await ids({ invoice_id: invoices[0].id })).toEqual([notes[2].id, notes[0].id]);
      expect(await ids({ subscriber_id: tenant.subscriberId })).toEqual([
        notes[2].id,
        notes[1].id,
        notes[0].id,
      ]);
      expect(await ids({ subscriber_id: otherSubscriber })).toEqual([notes[3].id]);
      expect(await ids({ subscriber_id: otherSubscriber, invoice_id: invoices[0].id })).toEqual([]);
      expect(await ids({ invoice_id: UNKNOWN_INVOICE })).toEqual([]);
      const listed = await creditNotesOf({ invoice_id: invoices[1].id }, tenant.token);
      expect(listed).toEqual([notes[1]]);
    });

    it('should page by cursor', async () => {
      const page = await request(t.http)
        .get('/api/v1/credit-notes')
        .query({ limit: '3' })
        .set(bearer(tenant.token));
      expectList(page);
      expect(page.body.data.map((row: CreditNoteRecord) => row.id)).toEqual([
        notes[3].id,
        notes[2].id,
        notes[1].id,
      ]);
      expect(page.body.meta.pagination.has_more).toBe(true);
      const next = await request(t.http)
        .get('/api/v1/credit-notes')
        .query({ limit: '3', starting_after: page.body.meta.pagination.next_cursor })
        .set(bearer(tenant.token));
      expectList(next);
      expect(next.body.data.map((row: CreditNoteRecord) => row.id)).toEqual([notes[0].id]);
      expect(next.body.meta.pagination.has_more).toBe(false);
    });

    it('should answer one by id as it was created, to a billing:read token', async () => {
      const reader = await request(t.http)
        .post('/api/v1/tokens')
        .set(bearer(t.adminToken))
        .send({ tenant: tenant.tenantId, name: 'reader', scopes: ['billing:read'] });
      expect(reader.status).toBe(201);
      const res = await request(t.http)
        .get(`/api/v1/credit-notes/${notes[1].id}`)
        .set(bearer(reader.body.data.token as string));
      expectSuccess(res);
      expect(res.body.data).toEqual(notes[1]);
    });

    it("should keep tenants apart: 404 for another tenant's credit note or an unknown id, and not listed", async () => {
      expectNotFound(await request(t.http).get(`/api/v1/credit-notes/${notes[0].id}`).set(bearer(a.token)));
      expectNotFound(
        await request(t.http)
          .get('/api/v1/credit-notes/cn_01JD3Z6W3R4T5Y6U7I8O9P0QAB')
          .set(bearer(tenant.token)),
      );
      const mine = await creditNotesOf({}, a.token);
      expect(mine.some((note) => notes.some((theirs) => theirs.id === note.id))).toBe(false);
    });

    it('should refuse a token without billing:read (403)', async () => {
      const stranger = await createTenantWithToken(t, ['subscribers:read']);
      expectError(
        await request(t.http).get('/api/v1/credit-notes').set(bearer(stranger.token)),
        403,
        'insufficient_scope',
      );
    });
  });

  describe('the ledger', () => {
    it('should hold Σ ledger = balance for every subscriber of the suite', async () => {
      const subscribers = await listAll<{ id: string }>(t, a.token, '/api/v1/subscribers');
      expect(subscribers.length).toBeGreaterThan(10);
      for (const subscriber of subscribers) {
        await expectLedgerAgrees(subscriber.id);
      }
      // And every credit note's credit transaction is a credit of its total, referenced by its number.
      for (const note of await creditNotesOf({})) {
        expect(await getTransaction(t, a.token, note.credit_transaction_id)).toMatchObject({
          kind: 'credit',
          amount: note.total,
          reference: note.number,
          subscriber_id: note.subscriber_id,
        });
      }
    });
  });
});
