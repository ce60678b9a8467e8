import request from 'supertest';
import {
  allocate,
  ALLOCATION_ID,
  type BillingTenant,
  createInvoice,
  byHand,
  getBalance,
  getInvoice,
  getTransaction,
  type InvoiceRecord,
  newSubscriberId,
  TRANSACTION_ID,
  type TransactionRecord,
  voidInvoice,
  billingSuite,
  refundOf,
} from '../support/billing-factory';
import { expectError, expectSuccess, expectNotFound } from '../support/envelope';
import { ISO_MS } from '../support/subscriber-factory';
import { type TestApp } from '../support/test-app';

/** This suite allocates by hand: its payments and credits wait unallocated (auto_apply false). */
const { createPayment, createTransaction } = byHand;

describe('Billing: allocation', () => {
  let t: TestApp;
  let a: BillingTenant;
  let b: BillingTenant;

  billingSuite((suite) => ({ t, a, b } = suite), { tenants: 2 });

  /** A fresh subscriber of tenant a with an open invoice of `total` and a payment of `amount`. */
  async function setup(total = 1000, amount = 1000, currency = 'USD') {
    const subscriberId = await newSubscriberId(t, a.token);
    const invoice = await createInvoice(t, a.token, subscriberId, total, { currency });
    const payment = await createPayment(t, a.token, subscriberId, amount, { currency });
    return { subscriberId, invoice, payment };
  }

  /** Asserts that neither the invoices nor the transaction changed. */
  async function expectUnchanged(payment: TransactionRecord, invoices: InvoiceRecord[]) {
    const after = await getTransaction(t, a.token, payment.id);
    expect(after).toMatchObject({
      allocated_amount: payment.allocated_amount,
      unallocated_amount: payment.unallocated_amount,
    });
    expect(after.allocations).toHaveLength(0);
    for (const invoice of invoices) {
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({
        status: invoice.status,
        amount_paid: invoice.amount_paid,
        amount_due: invoice.amount_due,
        allocations: [],
      });
    }
  }

  describe('POST /api/v1/transactions/{id}/allocate to invoices', () => {
    it('should require authentication', async () => {
      const { invoice, payment } = await setup();
      const res = await request(t.http)
        .post(`/api/v1/transactions/${payment.id}/allocate`)
        .send({ allocations: [{ invoice_id: invoice.id, amount: 100 }] });
      expectError(res, 401, 'authentication_required');
      await expectUnchanged(payment, [invoice]);
    });

    it('should answer the transaction with its allocations and mark the invoice partially paid', async () => {
      const { invoice, payment } = await setup(1000, 600);
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 400 }],
      });
      expectSuccess(res, 200);
      expect(res.body.data).toMatchObject({
        id: payment.id,
        amount: 600,
        allocated_amount: 400,
        unallocated_amount: 200,
        refunded_amount: 0,
      });
      expect(res.body.data.allocations).toEqual([
        {
          id: expect.stringMatching(ALLOCATION_ID),
          transaction_id: payment.id,
          invoice_id: invoice.id,
          target: 'invoice',
          amount: 400,
          currency: 'USD',
          created_at: expect.stringMatching(ISO_MS),
        },
      ]);
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({
        status: 'partially_paid',
        amount_paid: 400,
        amount_due: 600,
        paid_at: null,
        allocations: [expect.objectContaining({ id: res.body.data.allocations[0].id, amount: 400 })],
      });
    });

    it('should mark the invoice paid, with paid_at, once amount_due reaches 0', async () => {
      const { subscriberId, invoice, payment } = await setup(1000, 700);
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 700 }] }),
      );
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({
        status: 'partially_paid',
        paid_at: null,
      });

      const credit = await createTransaction(t, a.token, subscriberId, { kind: 'credit', amount: 300 });
      const res = await allocate(t, a.token, credit.id, {
        allocations: [{ invoice_id: invoice.id, amount: 300 }],
      });
      expectSuccess(res, 200);
      expect(res.body.data).toMatchObject({ kind: 'credit', allocated_amount: 300, unallocated_amount: 0 });
      const paid = await getInvoice(t, a.token, invoice.id);
      expect(paid).toMatchObject({ status: 'paid', amount_paid: 1000, amount_due: 0 });
      expect(paid.paid_at).toMatch(ISO_MS);
      expect(paid.allocations!.map((allocation) => allocation.transaction_id)).toEqual([
        payment.id,
        credit.id,
      ]);
    });

    it('should pay several invoices in one request', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const first = await createInvoice(t, a.token, subscriberId, 500);
      const second = await createInvoice(t, a.token, subscriberId, 800);
      const payment = await createPayment(t, a.token, subscriberId, 1000);
      const res = await allocate(t, a.token, payment.id, {
        allocations: [
          { invoice_id: first.id, amount: 500 },
          { invoice_id: second.id, amount: 300 },
        ],
      });
      expectSuccess(res, 200);
      expect(res.body.data).toMatchObject({ allocated_amount: 800, unallocated_amount: 200 });
      expect(res.body.data.allocations).toHaveLength(2);
      expect(await getInvoice(t, a.token, first.id)).toMatchObject({ status: 'paid', amount_due: 0 });
      expect(await getInvoice(t, a.token, second.id)).toMatchObject({
        status: 'partially_paid',
        amount_due: 500,
      });
    });

    it('should allow the exact unallocated amount and then nothing more', async () => {
      const { invoice, payment } = await setup(1000, 250);
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 250 }] }),
      );
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 1 }],
      });
      expectError(res, 422, 'allocation_exceeds_unallocated', 'allocations');
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({ amount_paid: 250 });
    });

    it.each(['debit', 'refund'])('should answer 422 for a %s, which cannot be allocated', async (kind) => {
      const { subscriberId, invoice, payment } = await setup(1000, 500);
      const txn = await createTransaction(t, a.token, subscriberId, {
        kind,
        amount: 100,
        ...(kind === 'refund' ? { refund_of: payment.id } : {}),
      });
      const res = await allocate(t, a.token, txn.id, {
        allocations: [{ invoice_id: invoice.id, amount: 100 }],
      });
      expectError(res, 422, 'validation_failed');
      const balanceRes = await allocate(t, a.token, txn.id, { target: 'balance', amount: 100 });
      expectError(balanceRes, 422, 'validation_failed');
      expect((await getInvoice(t, a.token, invoice.id)).amount_paid).toBe(0);
      expect((await getTransaction(t, a.token, txn.id)).allocated_amount).toBe(0);
    });

    it.each([0, -10, 1.5, '100'])("should answer 422 on 'allocations.0.amount' for %p", async (amount) => {
      const { invoice, payment } = await setup();
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount }],
      });
      expectError(res, 422, 'validation_failed', 'allocations.0.amount');
      await expectUnchanged(payment, [invoice]);
    });

    it("should answer 400 missing_field on 'allocations.0.invoice_id' when it is absent", async () => {
      const { payment } = await setup();
      const res = await allocate(t, a.token, payment.id, { allocations: [{ amount: 10 }] });
      expectError(res, 400, 'missing_field', 'allocations.0.invoice_id');
    });

    it('should answer 422 for an empty list of allocations', async () => {
      const { payment } = await setup();
      const res = await allocate(t, a.token, payment.id, { allocations: [] });
      expectError(res, 422, 'validation_failed', 'allocations');
    });

    it("should answer 422 allocation_exceeds_amount_due on 'allocations.N.amount' beyond an invoice's amount_due", async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const first = await createInvoice(t, a.token, subscriberId, 500);
      const second = await createInvoice(t, a.token, subscriberId, 300);
      const payment = await createPayment(t, a.token, subscriberId, 1000);
      const res = await allocate(t, a.token, payment.id, {
        allocations: [
          { invoice_id: first.id, amount: 500 },
          { invoice_id: second.id, amount: 301 },
        ],
      });
      expectError(res, 422, 'allocation_exceeds_amount_due', 'allocations.1.amount');
      await expectUnchanged(payment, [first, second]);
    });

    it('should count two items for the same invoice together against its amount_due', async () => {
      const { invoice, payment } = await setup(500, 1000);
      const res = await allocate(t, a.token, payment.id, {
        allocations: [
          { invoice_id: invoice.id, amount: 300 },
          { invoice_id: invoice.id, amount: 201 },
        ],
      });
      expectError(res, 422, 'allocation_exceeds_amount_due', 'allocations.1.amount');
      await expectUnchanged(payment, [invoice]);
    });

    it('should measure amount_due after earlier allocations', async () => {
      const { subscriberId, invoice, payment } = await setup(500, 400);
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 400 }] }),
      );
      const second = await createPayment(t, a.token, subscriberId, 500);
      const res = await allocate(t, a.token, second.id, {
        allocations: [{ invoice_id: invoice.id, amount: 101 }],
      });
      expectError(res, 422, 'allocation_exceeds_amount_due', 'allocations.0.amount');
      expectSuccess(
        await allocate(t, a.token, second.id, { allocations: [{ invoice_id: invoice.id, amount: 100 }] }),
      );
    });

    it('should answer 422 allocation_exceeds_unallocated when the sum exceeds the unallocated amount', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const first = await createInvoice(t, a.token, subscriberId, 500);
      const second = await createInvoice(t, a.token, subscriberId, 500);
      const payment = await createPayment(t, a.token, subscriberId, 600);
      const res = await allocate(t, a.token, payment.id, {
        allocations: [
          { invoice_id: first.id, amount: 400 },
          { invoice_id: second.id, amount: 201 },
        ],
      });
      expectError(res, 422, 'allocation_exceeds_unallocated', 'allocations');
      await expectUnchanged(payment, [first, second]);
    });

    it('should count refunds against the unallocated amount', async () => {
      const { subscriberId, invoice, payment } = await setup(1000, 500);
      await createTransaction(t, a.token, subscriberId, refundOf(payment.id, 200));
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 301 }],
      });
      expectError(res, 422, 'allocation_exceeds_unallocated', 'allocations');
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 300 }] }),
      );
    });

    it("should answer 422 invalid_reference on the invoice_id of another subscriber's invoice", async () => {
      const { invoice: mine, payment } = await setup();
      const otherSubscriber = await newSubscriberId(t, a.token);
      const theirs = await createInvoice(t, a.token, otherSubscriber, 1000);
      const res = await allocate(t, a.token, payment.id, {
        allocations: [
          { invoice_id: mine.id, amount: 100 },
          { invoice_id: theirs.id, amount: 100 },
        ],
      });
      expectError(res, 422, 'invalid_reference', 'allocations.1.invoice_id');
      await expectUnchanged(payment, [mine, theirs]);
    });

    it("should answer 422 invalid_reference for another tenant's or an unknown invoice", async () => {
      const { invoice, payment } = await setup();
      const foreign = await createInvoice(t, b.token, b.subscriberId, 1000);
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: foreign.id, amount: 100 }],
      });
      expectError(res, 422, 'invalid_reference', 'allocations.0.invoice_id');
      const unknown = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: 'inv_00000000000000000000000000', amount: 100 }],
      });
      expectError(unknown, 422, 'invalid_reference', 'allocations.0.invoice_id');
      expect((await getInvoice(t, b.token, foreign.id)).amount_paid).toBe(0);
      await expectUnchanged(payment, [invoice]);
    });

    it('should answer 422 currency_mismatch for an invoice in another currency', async () => {
      const { subscriberId, payment } = await setup(1000, 1000, 'USD');
      const euro = await createInvoice(t, a.token, subscriberId, 1000, { currency: 'EUR' });
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: euro.id, amount: 100 }],
      });
      expectError(res, 422, 'currency_mismatch', 'allocations.0.invoice_id');
      await expectUnchanged(payment, [euro]);
    });

    it('should answer 409 invalid_state_transition for a draft invoice', async () => {
      const { subscriberId, payment } = await setup();
      const draft = await createInvoice(t, a.token, subscriberId, 1000, { draft: true });
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: draft.id, amount: 100 }],
      });
      expectError(res, 409, 'invalid_state_transition', 'allocations.0.invoice_id');
      await expectUnchanged(payment, [draft]);
    });

    it('should answer 409 invalid_state_transition for a void invoice', async () => {
      const { invoice, payment } = await setup();
      const voided = (await voidInvoice(t, a.token, invoice.id)).body.data as InvoiceRecord;
      expect(voided.status).toBe('void');
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 100 }],
      });
      expectError(res, 409, 'invalid_state_transition', 'allocations.0.invoice_id');
      await expectUnchanged(payment, [voided]);
    });

    it('should answer 409 invalid_state_transition for a paid invoice', async () => {
      const { subscriberId, invoice, payment } = await setup(300, 300);
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 300 }] }),
      );
      const second = await createPayment(t, a.token, subscriberId, 100);
      const res = await allocate(t, a.token, second.id, {
        allocations: [{ invoice_id: invoice.id, amount: 1 }],
      });
      expectError(res, 409, 'invalid_state_transition', 'allocations.0.invoice_id');
      expect((await getInvoice(t, a.token, invoice.id)).amount_paid).toBe(300);
      expect((await getTransaction(t, a.token, second.id)).allocated_amount).toBe(0);
    });

    it.each([
      ['an amount beyond amount_due', 'exceeds'],
      ['a draft invoice', 'draft'],
      ['another currency', 'currency'],
      ['an unknown invoice', 'unknown'],
    ])('should change nothing when one item of a batch names %s', async (_label, kind) => {
      const subscriberId = await newSubscriberId(t, a.token);
      const good = await createInvoice(t, a.token, subscriberId, 1000);
      const payment = await createPayment(t, a.token, subscriberId, 2000);
      let bad: { invoice_id: string; amount: number };
      const touched: InvoiceRecord[] = [good];
      if (kind === 'exceeds') {
        const small = await createInvoice(t, a.token, subscriberId, 100);
        touched.push(small);
        bad = { invoice_id: small.id, amount: 101 };
      } else if (kind === 'draft') {
        const draft = await createInvoice(t, a.token, subscriberId, 100, { draft: true });
        touched.push(draft);
        bad = { invoice_id: draft.id, amount: 50 };
      } else if (kind === 'currency') {
        const euro = await createInvoice(t, a.token, subscriberId, 100, { currency: 'EUR' });
        touched.push(euro);
        bad = { invoice_id: euro.id, amount: 50 };
      } else {
        bad = { invoice_id: 'inv_00000000000000000000000000', amount: 50 };
      }
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: good.id, amount: 600 }, bad],
      });
      expect(res.status).toBeGreaterThanOrEqual(409);
      expect(res.status).toBeLessThan(500);
      expect(res.body.error.field).toMatch(/^allocations\.1\./);
      await expectUnchanged(payment, touched);
    });

    it.each([
      ['nothing', {}],
      [
        'allocations and strategy',
        { allocations: [{ invoice_id: 'inv_x', amount: 1 }], strategy: 'oldest_first' },
      ],
      [
        'allocations and target',
        { allocations: [{ invoice_id: 'inv_x', amount: 1 }], target: 'balance', amount: 1 },
      ],
      ['target and strategy', { target: 'balance', amount: 1, strategy: 'oldest_first' }],
      [
        'all three forms',
        {
          allocations: [{ invoice_id: 'inv_x', amount: 1 }],
          target: 'balance',
          amount: 1,
          strategy: 'oldest_first',
        },
      ],
    ])('should answer 422 when the body holds %s', async (_label, body) => {
      const { invoice, payment } = await setup();
      const res = await allocate(t, a.token, payment.id, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      await expectUnchanged(payment, [invoice]);
    });

    it('should answer 422 on amount when amount comes without target', async () => {
      const { invoice, payment } = await setup();
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 10 }],
        amount: 10,
      });
      expectError(res, 422, 'validation_failed', 'amount');
      await expectUnchanged(payment, [invoice]);
    });

    it.each([
      ['target', { target: 'invoice', amount: 10 }],
      ['strategy', { strategy: 'newest_first' }],
    ])('should answer 422 on %s for an unknown value', async (field, body) => {
      const { payment } = await setup();
      expectError(await allocate(t, a.token, payment.id, body), 422, 'validation_failed', field);
    });

    it('should answer 400 unknown_field for a field the request does not have', async () => {
      const { invoice, payment } = await setup();
      const res = await allocate(t, a.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 10, note: 'x' }],
      });
      expectError(res, 400, 'unknown_field', 'allocations.0.note');
    });

    it("should answer 404 not_found for an unknown or another tenant's transaction", async () => {
      const foreign = await createPayment(t, b.token, b.subscriberId, 100);
      expectNotFound(await allocate(t, a.token, foreign.id, { target: 'balance', amount: 10 }));
      expectNotFound(
        await allocate(t, a.token, 'txn_00000000000000000000000000', { target: 'balance', amount: 10 }),
      );
      expect((await getTransaction(t, b.token, foreign.id)).allocated_amount).toBe(0);
    });
  });

  describe('POST /api/v1/transactions/{id}/allocate to the balance', () => {
    it('should require authentication', async () => {
      const { payment } = await setup();
      const res = await request(t.http)
        .post(`/api/v1/transactions/${payment.id}/allocate`)
        .send({ target: 'balance', amount: 10 });
      expectError(res, 401, 'authentication_required');
    });

    it('should allocate to the balance without an invoice and leave the balance where the payment put it', async () => {
      const { subscriberId, invoice, payment } = await setup(1000, 600);
      const before = await getBalance(t, a.token, subscriberId);
      expect(before).toMatchObject({ balance: 400, open_invoices_due: 1000, unallocated_credit: 600 });

      const res = await allocate(t, a.token, payment.id, { target: 'balance', amount: 250 });
      expectSuccess(res, 200);
      expect(res.body.data).toMatchObject({
        id: expect.stringMatching(TRANSACTION_ID),
        allocated_amount: 250,
        unallocated_amount: 350,
      });
      expect(res.body.data.allocations).toEqual([
        expect.objectContaining({
          id: expect.stringMatching(ALLOCATION_ID),
          invoice_id: null,
          target: 'balance',
          amount: 250,
          currency: 'USD',
        }),
      ]);
      expect(await getBalance(t, a.token, subscriberId)).toMatchObject({
        balance: 400,
        open_invoices_due: 1000,
        unallocated_credit: 350,
      });
      expect((await getInvoice(t, a.token, invoice.id)).amount_paid).toBe(0);
    });

    it('should answer 400 missing_field on amount for target without amount', async () => {
      const { invoice, payment } = await setup();
      expectError(
        await allocate(t, a.token, payment.id, { target: 'balance' }),
        400,
        'missing_field',
        'amount',
      );
      await expectUnchanged(payment, [invoice]);
    });

    it.each([0, -1, 2.5])('should answer 422 on amount for %p', async (amount) => {
      const { invoice, payment } = await setup();
      const res = await allocate(t, a.token, payment.id, { target: 'balance', amount });
      expectError(res, 422, 'validation_failed', 'amount');
      await expectUnchanged(payment, [invoice]);
    });

    it('should answer 422 allocation_exceeds_unallocated on amount beyond the unallocated amount', async () => {
      const { invoice, payment } = await setup(1000, 300);
      const res = await allocate(t, a.token, payment.id, { target: 'balance', amount: 301 });
      expectError(res, 422, 'allocation_exceeds_unallocated', 'amount');
      await expectUnchanged(payment, [invoice]);
    });
  });

  describe('POST /api/v1/transactions/{id}/allocate with strategy oldest_first', () => {
    it('should require authentication', async () => {
      const { payment } = await setup();
      const res = await request(t.http)
        .post(`/api/v1/transactions/${payment.id}/allocate`)
        .send({ strategy: 'oldest_first' });
      expectError(res, 401, 'authentication_required');
    });

    /**
     * Open invoices due March, January, February (the February one already partly paid), plus invoices the strategy
     * must pass over: a draft, a void one, one in EUR and one of another subscriber, all due earlier.
     */
    async function scenario(paymentAmount: number) {
      const subscriberId = await newSubscriberId(t, a.token);
      const otherSubscriber = await newSubscriberId(t, a.token);
      const march = await createInvoice(t, a.token, subscriberId, 1000, { due_date: '2099-03-01' });
      const january = await createInvoice(t, a.token, subscriberId, 1000, { due_date: '2099-01-01' });
      const february = await createInvoice(t, a.token, subscriberId, 1000, { due_date: '2099-02-01' });
      const early = await createPayment(t, a.token, subscriberId, 400);
      expectSuccess(
        await allocate(t, a.token, early.id, { allocations: [{ invoice_id: february.id, amount: 400 }] }),
      );
      const draft = await createInvoice(t, a.token, subscriberId, 1000, {
        due_date: '2098-01-01',
        draft: true,
      });
      const voided = await createInvoice(t, a.token, subscriberId, 1000, { due_date: '2098-01-01' });
      expectSuccess(await voidInvoice(t, a.token, voided.id));
      const euro = await createInvoice(t, a.token, subscriberId, 1000, {
        due_date: '2098-01-01',
        currency: 'EUR',
      });
      const foreign = await createInvoice(t, a.token, otherSubscriber, 1000, { due_date: '2098-01-01' });
      const payment = await createPayment(t, a.token, subscriberId, paymentAmount);
      return { march, january, february, draft, voided, euro, foreign, payment };
    }

    it('should pay open invoices of the same subscriber and currency, oldest due date first', async () => {
      const s = await scenario(1500);
      const res = await allocate(t, a.token, s.payment.id, { strategy: 'oldest_first' });
      expectSuccess(res, 200);
      expect(res.body.data).toMatchObject({ allocated_amount: 1500, unallocated_amount: 0 });
      expect(
        (res.body.data as TransactionRecord).allocations!.map((allocation) => [
          allocation.invoice_id,
          allocation.amount,
        ]),
      ).toEqual([
        [s.january.id, 1000],
        [s.february.id, 500],
      ]);
      for (const allocation of res.body.data.allocations) {
        expect(allocation.id).toMatch(ALLOCATION_ID);
      }
      expect(await getInvoice(t, a.token, s.january.id)).toMatchObject({ status: 'paid', amount_due: 0 });
      expect(await getInvoice(t, a.token, s.february.id)).toMatchObject({
        status: 'partially_paid',
        amount_paid: 900,
      });
      expect(await getInvoice(t, a.token, s.march.id)).toMatchObject({ status: 'open', amount_paid: 0 });
    });

    it('should leave what the open invoices do not need unallocated', async () => {
      const s = await scenario(3000);
      const res = await allocate(t, a.token, s.payment.id, { strategy: 'oldest_first' });
      expectSuccess(res, 200);
      expect(res.body.data).toMatchObject({ allocated_amount: 2600, unallocated_amount: 400 });
      for (const invoice of [s.january, s.february, s.march]) {
        expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({ status: 'paid', amount_due: 0 });
      }
      for (const invoice of [s.draft, s.voided, s.euro, s.foreign]) {
        const after = await getInvoice(t, a.token, invoice.id);
        expect(after.amount_paid).toBe(0);
        expect(after.allocations).toEqual([]);
      }
    });

    it('should pay invoices due the same day in the order they were numbered', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const first = await createInvoice(t, a.token, subscriberId, 300, { due_date: '2099-05-01' });
      const second = await createInvoice(t, a.token, subscriberId, 300, { due_date: '2099-05-01' });
      const payment = await createPayment(t, a.token, subscriberId, 400);
      expectSuccess(await allocate(t, a.token, payment.id, { strategy: 'oldest_first' }));
      expect((await getInvoice(t, a.token, first.id)).amount_paid).toBe(300);
      expect((await getInvoice(t, a.token, second.id)).amount_paid).toBe(100);
    });

    it('should allocate nothing when the subscriber has no open invoice', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const payment = await createPayment(t, a.token, subscriberId, 500);
      const res = await allocate(t, a.token, payment.id, { strategy: 'oldest_first' });
      expect(res.status).toBeLessThan(500);
      expect((await getTransaction(t, a.token, payment.id)).allocated_amount).toBe(0);
    });

    it('should allocate nothing more once the payment is used up', async () => {
      const s = await scenario(500);
      expectSuccess(await allocate(t, a.token, s.payment.id, { strategy: 'oldest_first' }));
      const again = await allocate(t, a.token, s.payment.id, { strategy: 'oldest_first' });
      expect(again.status).toBeLessThan(500);
      expect(await getTransaction(t, a.token, s.payment.id)).toMatchObject({
        allocated_amount: 500,
        unallocated_amount: 0,
      });
      expect((await getInvoice(t, a.token, s.january.id)).amount_paid).toBe(500);
    });
  });
});
