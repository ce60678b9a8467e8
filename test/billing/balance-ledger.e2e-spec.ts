import request, { type Response } from 'supertest';
import {
  allocate,
  type BillingTenant,
  createInvoice,
  byHand,
  type CurrencyBalance,
  finalizeInvoice,
  getBalance,
  getBalances,
  LEDGER_ID,
  type LedgerEntryRecord,
  listAll,
  newSubscriberId,
  voidInvoice,
  billingSuite,
  refundOf,
} from '../support/billing-factory';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { ISO_MS } from '../support/subscriber-factory';
import { type TestApp } from '../support/test-app';

/** Its payments and credits wait unallocated (auto_apply false), so the sums move only with the allocations made here. */
const { createPayment, createTransaction } = byHand;

describe('Billing: balance and ledger', () => {
  let t: TestApp;
  let a: BillingTenant;
  let b: BillingTenant;

  billingSuite((suite) => ({ t, a, b } = suite), { tenants: 2 });

  function ledger(subscriberId: string): Promise<LedgerEntryRecord[]> {
    return listAll<LedgerEntryRecord>(t, a.token, `/api/v1/subscribers/${subscriberId}/ledger`);
  }

  /** The subscriber's charges of one status (pending: what the next invoice will carry). */
  function charges(subscriberId: string, status: 'pending' | 'invoiced' = 'pending') {
    return listAll<Record<string, unknown>>(t, a.token, `/api/v1/subscribers/${subscriberId}/charges`, {
      status,
    });
  }

  describe('GET /api/v1/subscribers/{id}/balance', () => {
    it('should require authentication', async () => {
      const res = await request(t.http).get(`/api/v1/subscribers/${a.subscriberId}/balance`);
      expectError(res, 401, 'authentication_required');
    });

    it('should answer an empty list of balances for a subscriber without billing', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const res = await request(t.http)
        .get(`/api/v1/subscribers/${subscriberId}/balance`)
        .set(bearer(a.token));
      expectSuccess(res);
      expect(res.body.data).toEqual({ subscriber_id: subscriberId, balances: [] });
    });

    it('should move the balance with every invoice and transaction', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const expectBalance = async (
        balance: number,
        open_invoices_due: number,
        unallocated_credit: number,
      ) => {
        expect(await getBalance(t, a.token, subscriberId)).toEqual({
          currency: 'USD',
          balance,
          open_invoices_due,
          unallocated_credit,
        });
      };

      const invoice = await createInvoice(t, a.token, subscriberId, 1000);
      await expectBalance(1000, 1000, 0); // an invoice raises it
      const draft = await createInvoice(t, a.token, subscriberId, 500, { draft: true });
      await expectBalance(1000, 1000, 0); // a draft is not owed yet
      const payment = await createPayment(t, a.token, subscriberId, 300);
      await expectBalance(700, 1000, 300); // a payment lowers it
      await createTransaction(t, a.token, subscriberId, { kind: 'credit', amount: 100 });
      await expectBalance(600, 1000, 400); // a credit lowers it
      await createTransaction(t, a.token, subscriberId, refundOf(payment.id, 100));
      await expectBalance(700, 1000, 300); // a refund raises it
      const toVoid = await createInvoice(t, a.token, subscriberId, 200);
      await expectBalance(900, 1200, 300);
      expectSuccess(await voidInvoice(t, a.token, toVoid.id));
      await expectBalance(700, 1000, 300); // voiding an open invoice lowers it
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 200 }] }),
      );
      await expectBalance(700, 800, 100); // an allocation moves money between the two, not the balance
      const debit = await createTransaction(t, a.token, subscriberId, { kind: 'debit', amount: 50 });
      await expectBalance(700, 800, 100); // a debit waits as a pending charge: not owed until invoiced
      expect(await charges(subscriberId)).toEqual([
        expect.objectContaining({ source: 'debit', source_id: debit.id, amount: 50, status: 'pending' }),
      ]);
      const finalized = await finalizeInvoice(t, a.token, draft.id);
      expectSuccess(finalized);
      // Finalizing a draft raises it, by its lines and the debit it now carries.
      expect(finalized.body.data).toMatchObject({ total: 550, amount_due: 550 });
      await expectBalance(1250, 1350, 100);
      expect(await charges(subscriberId)).toEqual([]);
      expect(await charges(subscriberId, 'invoiced')).toEqual([
        expect.objectContaining({ source_id: debit.id, status: 'invoiced', invoice_id: draft.id }),
      ]);
    });

    it('should not lower the balance when a draft is voided', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      await createInvoice(t, a.token, subscriberId, 400);
      const draft = await createInvoice(t, a.token, subscriberId, 500, { draft: true });
      expectSuccess(await voidInvoice(t, a.token, draft.id));
      expect(await getBalance(t, a.token, subscriberId)).toMatchObject({ balance: 400 });
    });

    it('should go negative when the subscriber has paid ahead', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      await createInvoice(t, a.token, subscriberId, 100);
      await createPayment(t, a.token, subscriberId, 250);
      expect(await getBalance(t, a.token, subscriberId)).toMatchObject({
        balance: -150,
        unallocated_credit: 250,
      });
    });

    it('should keep one balance per currency', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      await createInvoice(t, a.token, subscriberId, 1000, { currency: 'USD' });
      await createInvoice(t, a.token, subscriberId, 700, { currency: 'EUR' });
      await createPayment(t, a.token, subscriberId, 200, { currency: 'EUR' });
      await createTransaction(t, a.token, subscriberId, { kind: 'debit', amount: 30, currency: 'GBP' });
      const sorted = async () =>
        [...(await getBalances(t, a.token, subscriberId))].sort((x, y) =>
          x.currency.localeCompare(y.currency),
        );
      // The GBP debit is a pending charge: no GBP balance until an invoice in GBP carries it.
      expect(await sorted()).toEqual<CurrencyBalance[]>([
        { currency: 'EUR', balance: 500, open_invoices_due: 700, unallocated_credit: 200 },
        { currency: 'USD', balance: 1000, open_invoices_due: 1000, unallocated_credit: 0 },
      ]);
      expect(await charges(subscriberId)).toEqual([
        expect.objectContaining({ source: 'debit', currency: 'GBP', amount: 30 }),
      ]);
      await createInvoice(t, a.token, subscriberId, 70, { currency: 'GBP' });
      expect(await sorted()).toEqual<CurrencyBalance[]>([
        { currency: 'EUR', balance: 500, open_invoices_due: 700, unallocated_credit: 200 },
        { currency: 'GBP', balance: 100, open_invoices_due: 100, unallocated_credit: 0 },
        { currency: 'USD', balance: 1000, open_invoices_due: 1000, unallocated_credit: 0 },
      ]);
    });

    it("should answer 404 not_found for another tenant's or an unknown subscriber", async () => {
      await createInvoice(t, b.token, b.subscriberId, 1000);
      const foreign = await request(t.http)
        .get(`/api/v1/subscribers/${b.subscriberId}/balance`)
        .set(bearer(a.token));
      expectError(foreign, 404, 'not_found');
      const unknown = await request(t.http)
        .get('/api/v1/subscribers/sub_00000000000000000000000000/balance')
        .set(bearer(a.token));
      expectError(unknown, 404, 'not_found');
    });
  });

  describe('GET /api/v1/subscribers/{id}/ledger', () => {
    it('should require authentication', async () => {
      const res = await request(t.http).get(`/api/v1/subscribers/${a.subscriberId}/ledger`);
      expectError(res, 401, 'authentication_required');
    });

    it('should list signed entries newest first with the running balance', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await createInvoice(t, a.token, subscriberId, 1000);
      const draft = await createInvoice(t, a.token, subscriberId, 400, { draft: true });
      const payment = await createPayment(t, a.token, subscriberId, 600);
      const credit = await createTransaction(t, a.token, subscriberId, { kind: 'credit', amount: 50 });
      const debit = await createTransaction(t, a.token, subscriberId, { kind: 'debit', amount: 20 });
      const refund = await createTransaction(t, a.token, subscriberId, refundOf(payment.id, 100));
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 300 }] }),
      );
      const finalized = await finalizeInvoice(t, a.token, draft.id);
      expectSuccess(finalized);
      // The debit posted nothing itself: the finalized draft carries it as a line, and its entry has it.
      expect(finalized.body.data.lines).toEqual([
        expect.objectContaining({ amount: 400 }),
        expect.objectContaining({ amount: 20, charge_id: expect.stringMatching(/^chg_/) }),
      ]);
      const toVoid = await createInvoice(t, a.token, subscriberId, 80);
      expectSuccess(await voidInvoice(t, a.token, toVoid.id));

      const res = await request(t.http)
        .get(`/api/v1/subscribers/${subscriberId}/ledger`)
        .set(bearer(a.token));
      expectList(res);
      const entries = res.body.data as LedgerEntryRecord[];
      expect(
        entries.map((entry) => [entry.type, entry.source_id, entry.amount, entry.balance_after]),
      ).toEqual([
        ['invoice_voided', toVoid.id, -80, 870],
        ['invoice', toVoid.id, 80, 950],
        ['invoice', draft.id, 420, 870],
        ['refund', refund.id, 100, 450],
        ['credit', credit.id, -50, 350],
        ['payment', payment.id, -600, 400],
        ['invoice', invoice.id, 1000, 1000],
      ]);
      for (const entry of entries) {
        expect(entry).toEqual({
          id: expect.stringMatching(LEDGER_ID),
          type: expect.any(String),
          currency: 'USD',
          amount: expect.any(Number),
          balance_after: expect.any(Number),
          source_id: expect.any(String),
          created_at: expect.stringMatching(ISO_MS),
        });
      }
      expect((await getBalance(t, a.token, subscriberId))?.balance).toBe(870);
      expect(await charges(subscriberId, 'invoiced')).toEqual([
        expect.objectContaining({ source: 'debit', source_id: debit.id, invoice_id: draft.id }),
      ]);
    });

    it('should keep the latest balance_after equal to the sum of the amounts, per currency', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      await createInvoice(t, a.token, subscriberId, 1000, { currency: 'USD' });
      await createInvoice(t, a.token, subscriberId, 900, { currency: 'EUR' });
      await createPayment(t, a.token, subscriberId, 300, { currency: 'USD' });
      await createTransaction(t, a.token, subscriberId, { kind: 'credit', amount: 120, currency: 'EUR' });
      await createTransaction(t, a.token, subscriberId, { kind: 'debit', amount: 5, currency: 'USD' });
      expect(await ledger(subscriberId)).toHaveLength(4); // the debit waits as a pending charge
      await createInvoice(t, a.token, subscriberId, 100, { currency: 'USD' }); // 105: it carries the debit

      const entries = await ledger(subscriberId);
      expect(entries).toHaveLength(5);
      for (const currency of ['USD', 'EUR']) {
        const ofCurrency = entries.filter((entry) => entry.currency === currency);
        const sum = ofCurrency.reduce((total, entry) => total + entry.amount, 0);
        expect(ofCurrency[0].balance_after).toBe(sum);
        expect((await getBalance(t, a.token, subscriberId, currency))?.balance).toBe(sum);
      }
      expect((await getBalance(t, a.token, subscriberId, 'USD'))?.balance).toBe(805);
      expect((await getBalance(t, a.token, subscriberId, 'EUR'))?.balance).toBe(780);
    });

    it('should not write entries for drafts, allocations or rejected requests', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const invoice = await createInvoice(t, a.token, subscriberId, 500);
      await createInvoice(t, a.token, subscriberId, 500, { draft: true });
      const payment = await createPayment(t, a.token, subscriberId, 200);
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 100 }] }),
      );
      expectSuccess(await allocate(t, a.token, payment.id, { target: 'balance', amount: 50 }));
      const over = await allocate(t, a.token, payment.id, { target: 'balance', amount: 500 });
      expectError(over, 422, 'allocation_exceeds_unallocated', 'amount');
      const tooMuch = await request(t.http).post('/api/v1/transactions').set(bearer(a.token)).send({
        subscriber_id: subscriberId,
        kind: 'refund',
        source: 'external',
        amount: 999,
        currency: 'USD',
        refund_of: payment.id,
      });
      expectError(tooMuch, 422, 'refund_exceeds_refundable', 'amount');
      expect((await ledger(subscriberId)).map((entry) => entry.type)).toEqual(['payment', 'invoice']);
    });

    it('should page through the entries with limit and starting_after', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      for (const amount of [10, 20, 30, 40, 50]) {
        await createPayment(t, a.token, subscriberId, amount);
      }
      const seen: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: Response = await request(t.http)
          .get(`/api/v1/subscribers/${subscriberId}/ledger`)
          .query({ limit: '2', ...(cursor ? { starting_after: cursor } : {}) })
          .set(bearer(a.token));
        expectList(res);
        expect(res.body.meta.pagination.limit).toBe(2);
        seen.push(...res.body.data.map((entry: LedgerEntryRecord) => entry.amount));
        cursor = res.body.meta.pagination.has_more ? res.body.meta.pagination.next_cursor : null;
        pages += 1;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual([-50, -40, -30, -20, -10]);
    });

    it('should answer 400 for a bad cursor or limit', async () => {
      const base = `/api/v1/subscribers/${a.subscriberId}/ledger`;
      expectError(
        await request(t.http).get(`${base}?starting_after=bogus`).set(bearer(a.token)),
        400,
        'invalid_cursor',
        'starting_after',
      );
      expectError(
        await request(t.http).get(`${base}?limit=0`).set(bearer(a.token)),
        400,
        'invalid_query',
        'limit',
      );
    });

    it("should answer 404 not_found for another tenant's subscriber", async () => {
      await createInvoice(t, b.token, b.subscriberId, 1000);
      const res = await request(t.http)
        .get(`/api/v1/subscribers/${b.subscriberId}/ledger`)
        .set(bearer(a.token));
      expectError(res, 404, 'not_found');
    });
  });
});
