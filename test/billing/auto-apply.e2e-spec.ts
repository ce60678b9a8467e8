import request from 'supertest';
import {
  allocate,
  ALLOCATION_ID,
  type BillingTenant,
  createInvoice,
  createPayment,
  createTransaction,
  eventsOf,
  finalizeInvoice,
  getInvoice,
  getTransaction,
  type InvoiceRecord,
  newSubscriberId,
  postTransaction,
  transactionBody,
  type TransactionRecord,
  billingSuite,
} from '../support/billing-factory';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { createBillingProfile, createSubscriber, postBillingProfile } from '../support/subscriber-factory';
import { createTenantWithToken, type TestApp } from '../support/test-app';

/**
 * Issue 28 item 3, "money that arrived counts": a payment or credit is applied on receipt to the subscriber's open
 * invoices in its currency, oldest due first, and what is left to each invoice issued later, unless the billing
 * profile's auto_apply (or the payment's own) says no.
 */
describe('Billing: auto-apply', () => {
  let t: TestApp;
  let a: BillingTenant;

  billingSuite((suite) => ({ t, a } = suite));

  /** An open USD invoice of `total` due on `dueDate`. */
  const invoiceDue = (token: string, subscriberId: string, total: number, dueDate: string) =>
    createInvoice(t, token, subscriberId, total, { due_date: dueDate });

  /** The invoice as GET answers it, reduced to what auto-apply changes. */
  async function paidState(token: string, invoice: InvoiceRecord) {
    const { status, amount_paid, amount_due } = await getInvoice(t, token, invoice.id);
    return { status, amount_paid, amount_due };
  }

  async function postPayment(token: string, subscriberId: string, amount: number, extra = {}) {
    const res = await postTransaction(t, token, transactionBody(subscriberId, { amount, ...extra }));
    expectSuccess(res, 201);
    return res.body.data as TransactionRecord;
  }

  describe('on receipt (POST /api/v1/transactions)', () => {
    it('should apply a payment to the open invoices oldest due date first, then by number, and answer the allocations', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const late = await invoiceDue(a.token, subscriberId, 1000, '2031-03-01');
      const first = await invoiceDue(a.token, subscriberId, 700, '2031-01-01');
      const tieLow = await invoiceDue(a.token, subscriberId, 500, '2031-02-01');
      const tieHigh = await invoiceDue(a.token, subscriberId, 400, '2031-02-01');
      expect(tieLow.sequence!).toBeLessThan(tieHigh.sequence!);

      const payment = await postPayment(a.token, subscriberId, 1500);
      expect(payment).toMatchObject({ allocated_amount: 1500, unallocated_amount: 0, auto_apply: true });
      expect(
        payment.allocations!.map(({ invoice_id, amount, target }) => ({ invoice_id, amount, target })),
      ).toEqual([
        { invoice_id: first.id, amount: 700, target: 'invoice' },
        { invoice_id: tieLow.id, amount: 500, target: 'invoice' },
        { invoice_id: tieHigh.id, amount: 300, target: 'invoice' },
      ]);
      for (const allocation of payment.allocations!) {
        expect(allocation.id).toMatch(ALLOCATION_ID);
        expect(allocation.transaction_id).toBe(payment.id);
      }
      expect(await paidState(a.token, first)).toEqual({ status: 'paid', amount_paid: 700, amount_due: 0 });
      expect(await paidState(a.token, tieLow)).toEqual({ status: 'paid', amount_paid: 500, amount_due: 0 });
      expect(await paidState(a.token, tieHigh)).toEqual({
        status: 'partially_paid',
        amount_paid: 300,
        amount_due: 100,
      });
      expect(await paidState(a.token, late)).toEqual({ status: 'open', amount_paid: 0, amount_due: 1000 });
      expect((await getTransaction(t, a.token, payment.id)).allocations).toEqual(payment.allocations);

      // The events of an explicit allocation: invoice.paid per invoice paid in full, one transaction.allocated.
      const [allocated, ...more] = await eventsOf(t, a.token, payment.id, 'transaction.allocated');
      expect(more).toEqual([]);
      expect(allocated.data.allocations).toEqual(
        payment.allocations!.map((each) => ({
          id: each.id,
          invoice_id: each.invoice_id,
          amount: each.amount,
        })),
      );
      expect(await eventsOf(t, a.token, first.id, 'invoice.paid')).toHaveLength(1);
      expect(await eventsOf(t, a.token, tieLow.id, 'invoice.paid')).toHaveLength(1);
      expect(await eventsOf(t, a.token, tieHigh.id, 'invoice.paid')).toEqual([]);
    });

    it('should keep what is left over unallocated, and apply a credit the same way', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await invoiceDue(a.token, subscriberId, 800, '2031-01-01');
      const credit = await postPayment(a.token, subscriberId, 1000, { kind: 'credit', source: 'adjustment' });
      expect(credit).toMatchObject({ kind: 'credit', allocated_amount: 800, unallocated_amount: 200 });
      expect(credit.allocations!.map((each) => [each.invoice_id, each.amount])).toEqual([[invoice.id, 800]]);
      expect(await paidState(a.token, invoice)).toEqual({ status: 'paid', amount_paid: 800, amount_due: 0 });
    });

    it('should apply only to invoices of the payment currency (none owed in it: no allocations)', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const usd = await invoiceDue(a.token, subscriberId, 900, '2031-01-01');
      const eur = await postPayment(a.token, subscriberId, 900, { currency: 'EUR' });
      expect(eur).toMatchObject({ allocated_amount: 0, unallocated_amount: 900, allocations: [] });
      expect(await paidState(a.token, usd)).toEqual({ status: 'open', amount_paid: 0, amount_due: 900 });
    });

    it('should leave a payment sent with auto_apply false unallocated, for an allocation by hand', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const older = await invoiceDue(a.token, subscriberId, 600, '2031-01-01');
      const newer = await invoiceDue(a.token, subscriberId, 600, '2031-02-01');
      const payment = await postPayment(a.token, subscriberId, 600, { auto_apply: false });
      expect(payment).toMatchObject({
        allocated_amount: 0,
        unallocated_amount: 600,
        auto_apply: false,
        allocations: [],
      });
      expect(await paidState(a.token, older)).toEqual({ status: 'open', amount_paid: 0, amount_due: 600 });
      expect(await eventsOf(t, a.token, payment.id, 'transaction.allocated')).toEqual([]);

      // An invoice issued meanwhile does not take it either: it waits for the operator.
      const issued = await invoiceDue(a.token, subscriberId, 600, '2030-12-01');
      expect(await paidState(a.token, issued)).toEqual({ status: 'open', amount_paid: 0, amount_due: 600 });
      expect(await getTransaction(t, a.token, payment.id)).toMatchObject({ unallocated_amount: 600 });

      // The operator pays the newer one by hand.
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: newer.id, amount: 600 }] }),
      );
      expect(await paidState(a.token, newer)).toEqual({ status: 'paid', amount_paid: 600, amount_due: 0 });
      expect(await paidState(a.token, older)).toEqual({ status: 'open', amount_paid: 0, amount_due: 600 });
    });

    it('should refuse auto_apply on a debit or a refund, and a non-boolean one', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const debit = await postTransaction(
        t,
        a.token,
        transactionBody(subscriberId, { kind: 'debit', source: 'adjustment', auto_apply: true }),
      );
      expectError(debit, 422, 'validation_failed', 'auto_apply');
      const payment = await createPayment(t, a.token, subscriberId, 500);
      const refund = await postTransaction(
        t,
        a.token,
        transactionBody(subscriberId, {
          kind: 'refund',
          refund_of: payment.id,
          amount: 100,
          auto_apply: false,
        }),
      );
      expectError(refund, 422, 'validation_failed', 'auto_apply');
      const notBoolean = await postTransaction(
        t,
        a.token,
        transactionBody(subscriberId, { auto_apply: 'yes' }),
      );
      expectError(notBoolean, 422, 'validation_failed', 'auto_apply');
    });

    it("should follow the billing profile's auto_apply: its own, else the tenant default's; the payment's own wins", async () => {
      const isp = await createTenantWithToken(t, ['subscribers:*', 'billing:*', 'events:read']);
      const manual = await createBillingProfile(t, isp.token, { auto_apply: false });
      expect(manual.auto_apply).toBe(false);
      const own = await createSubscriber(t, isp.token, { billing_profile_id: manual.id });
      const ownInvoice = await invoiceDue(isp.token, own.id, 500, '2031-01-01');
      expect(await postPayment(isp.token, own.id, 500)).toMatchObject({
        allocated_amount: 0,
        allocations: [],
      });
      expect(await paidState(isp.token, ownInvoice)).toMatchObject({ status: 'open' });
      const forced = await postPayment(isp.token, own.id, 500, { auto_apply: true });
      expect(forced.allocations!.map((each) => [each.invoice_id, each.amount])).toEqual([
        [ownInvoice.id, 500],
      ]);

      // Without a profile of its own, the tenant default's setting applies; with neither, auto-apply is on.
      const bare = await createSubscriber(t, isp.token);
      const bareInvoice = await invoiceDue(isp.token, bare.id, 300, '2031-01-01');
      await createBillingProfile(t, isp.token, { name: 'Default', is_default: true, auto_apply: false });
      expect(await postPayment(isp.token, bare.id, 300)).toMatchObject({ allocated_amount: 0 });
      expect(await paidState(isp.token, bareInvoice)).toMatchObject({ status: 'open' });

      const other = await createTenantWithToken(t, ['subscribers:*', 'billing:*', 'events:read']);
      const noProfile = await createSubscriber(t, other.token);
      const noProfileInvoice = await invoiceDue(other.token, noProfile.id, 300, '2031-01-01');
      expect(await postPayment(other.token, noProfile.id, 300)).toMatchObject({ allocated_amount: 300 });
      expect(await paidState(other.token, noProfileInvoice)).toMatchObject({ status: 'paid' });
    });
  });

  describe('when an invoice is issued', () => {
    it('should apply a credit waiting unallocated to the next manual invoice, oldest money first', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const credit = await postPayment(a.token, subscriberId, 500, { kind: 'credit', source: 'adjustment' });
      const payment = await postPayment(a.token, subscriberId, 2000, {
        occurred_at: '2020-01-01T00:00:00.000Z',
      });
      expect(credit).toMatchObject({ allocated_amount: 0, unallocated_amount: 500, allocations: [] });

      // The payment occurred first (occurred_at), though recorded second, so it pays first.
      const invoice = await invoiceDue(a.token, subscriberId, 2200, '2031-01-01');
      expect(invoice).toMatchObject({ status: 'paid', amount_paid: 2200, amount_due: 0 });
      const stored = await getInvoice(t, a.token, invoice.id);
      expect(stored).toMatchObject({ status: 'paid', amount_paid: 2200, amount_due: 0 });
      expect(stored.allocations!.map((each) => [each.transaction_id, each.amount])).toEqual([
        [payment.id, 2000],
        [credit.id, 200],
      ]);
      expect(await getTransaction(t, a.token, credit.id)).toMatchObject({ unallocated_amount: 300 });
      expect(await eventsOf(t, a.token, invoice.id, 'invoice.paid')).toHaveLength(1);
      expect(await eventsOf(t, a.token, credit.id, 'transaction.allocated')).toHaveLength(1);
    });

    it('should apply what is left when a draft is finalized, and answer the allocations', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const draft = await createInvoice(t, a.token, subscriberId, 1200, {
        draft: true,
        due_date: '2031-01-01',
      });
      const credit = await postPayment(a.token, subscriberId, 500, { kind: 'credit', source: 'adjustment' });
      // A draft is not owed yet: the credit waits.
      expect(credit).toMatchObject({ allocated_amount: 0, allocations: [] });

      const res = await finalizeInvoice(t, a.token, draft.id);
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ status: 'partially_paid', amount_paid: 500, amount_due: 700 });
      expect(
        res.body.data.allocations.map((each: { transaction_id: string; amount: number }) => [
          each.transaction_id,
          each.amount,
        ]),
      ).toEqual([[credit.id, 500]]);
      expect(await getInvoice(t, a.token, draft.id)).toEqual(res.body.data);
      expect(await getTransaction(t, a.token, credit.id)).toMatchObject({ unallocated_amount: 0 });
    });

    it('should not apply money to an invoice issued in another currency, nor when the profile turns auto_apply off', async () => {
      const isp = await createTenantWithToken(t, ['subscribers:*', 'billing:*', 'events:read']);
      const manual = await createBillingProfile(t, isp.token, { auto_apply: false });
      const subscriber = await createSubscriber(t, isp.token, { billing_profile_id: manual.id });
      const credit = await postPayment(isp.token, subscriber.id, 500, {
        kind: 'credit',
        source: 'adjustment',
      });
      const invoice = await invoiceDue(isp.token, subscriber.id, 800, '2031-01-01');
      expect(await paidState(isp.token, invoice)).toEqual({
        status: 'open',
        amount_paid: 0,
        amount_due: 800,
      });
      expect(await getTransaction(t, isp.token, credit.id)).toMatchObject({ unallocated_amount: 500 });

      const bare = await newSubscriberId(t, a.token);
      await postPayment(a.token, bare, 500, { currency: 'EUR' });
      const usd = await invoiceDue(a.token, bare, 800, '2031-01-01');
      expect(await paidState(a.token, usd)).toEqual({ status: 'open', amount_paid: 0, amount_due: 800 });
    });
  });

  describe('billing profiles: auto_apply and reminder_offsets', () => {
    it('should default auto_apply to true and reminder_offsets to [], and change both by PATCH', async () => {
      const profile = await createBillingProfile(t, a.token);
      expect(profile).toMatchObject({ auto_apply: true, reminder_offsets: [] });
      const res = await request(t.http)
        .patch(`/api/v1/billing-profiles/${profile.id}`)
        .set(bearer(a.token))
        .send({ auto_apply: false, reminder_offsets: [-3, 1, 7] });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ auto_apply: false, reminder_offsets: [-3, 1, 7] });
      const [updated] = await eventsOf(t, a.token, profile.id, 'billing_profile.updated');
      expect(updated.data.changed_fields).toEqual(['auto_apply', 'reminder_offsets']);
      // The same offsets again change nothing.
      const again = await request(t.http)
        .patch(`/api/v1/billing-profiles/${profile.id}`)
        .set(bearer(a.token))
        .send({ reminder_offsets: [-3, 1, 7] });
      expectSuccess(again);
      expect(await eventsOf(t, a.token, profile.id, 'billing_profile.updated')).toHaveLength(1);
    });

    it.each([
      ['more than 10 offsets', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]],
      ['an offset before -60', [-61]],
      ['an offset after 365', [366]],
      ['a repeated offset', [1, 1]],
      ['a fraction', [1.5]],
      ['not an array', 7],
    ])('should refuse reminder_offsets with %s (422)', async (_what, offsets) => {
      const res = await postBillingProfile(t, a.token, {
        name: 'Reminders',
        currency: 'USD',
        billing_day: 1,
        reminder_offsets: offsets,
      });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'validation_failed' });
      expect(String(res.body.error.field)).toMatch(/^reminder_offsets/);
    });

    it('should accept the bounds and ten distinct offsets', async () => {
      const offsets = [-60, -30, -7, -3, 0, 1, 7, 14, 30, 365];
      const profile = await createBillingProfile(t, a.token, { reminder_offsets: offsets });
      expect(profile.reminder_offsets).toEqual(offsets);
    });
  });

  it('should record a payment of a subscriber with no invoices as unallocated, answering empty allocations', async () => {
    const subscriberId = await newSubscriberId(t, a.token);
    const payment = await createTransaction(t, a.token, subscriberId, { amount: 250 });
    expect(payment).toMatchObject({ allocated_amount: 0, unallocated_amount: 250, allocations: [] });
  });
});
