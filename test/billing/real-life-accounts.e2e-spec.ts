import { randomBytes } from 'node:crypto';
import request from 'supertest';
import {
  allocate,
  BILLING_SCOPES,
  createInvoice,
  createPayment,
  eventsOf,
  getBalance,
  getBalances,
  getInvoice,
  type InvoiceRecord,
  type LedgerEntryRecord,
  listAll,
  listIds,
  PAST_DATE,
  postInvoice,
  postTransaction,
  invoiceBody,
  transactionBody,
  voidInvoice,
  refundBody,
} from '../support/billing-factory';
import { expectError, expectReplayOf, expectSuccess, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createPlan,
  createService,
  DEFAULT_PPPOE_PASSWORD,
  postService,
  uniquePppoeUsername,
  waitForOrder,
} from '../support/provisioning-factory';
import {
  createBillingProfile,
  createSubscriber,
  getSubscriber,
  ISO_MS,
  listEvents,
  listen,
  postStatus,
} from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

/** Issue 28, items 5, 6 and 8: accounts that stay right through a customer's real life. */
const SCOPES = [...BILLING_SCOPES, 'provisioning:read', 'provisioning:write'];

/** The actor of the status changes a subscriber's services cause (docs/automation.md). */
const FOLLOWS_SERVICE = { type: 'automation', id: 'subscriber_follows_service' };

const REASON = 'customer moved away; collection agency gave up';

type WrittenOff = InvoiceRecord & {
  written_off_at: string | null;
  write_off_reason: string | null;
  amount_written_off: number | null;
};

function idempotencyKey(): Record<string, string> {
  return { 'X-Idempotency-Key': `key-${randomBytes(8).toString('hex')}` };
}

describe('Billing through a real life: archiving, write-offs, one currency, subscribers following services', () => {
  let t: TestApp;
  let isp: TenantWithToken;

  const writeOff = (id: string, body: unknown = { reason: REASON }, headers: Record<string, string> = {}) =>
    request(t.http)
      .post(`/api/v1/invoices/${id}/write-off`)
      .set(bearer(isp.token))
      .set(headers)
      .send(body as object);

  const ledgerOf = (subscriberId: string) =>
    listAll<LedgerEntryRecord>(t, isp.token, `/api/v1/subscribers/${subscriberId}/ledger`);

  /** An active subscriber (no billing profile; the tenant has none, so any currency is billed). */
  const activeSubscriber = async () => (await createSubscriber(t, isp.token, { status: 'active' })).id;

  beforeAll(async () => {
    t = await startTestApp({ PROVISIONING_POLL_MS: '50' });
    await listen(t);
    isp = await createTenantWithToken(t, SCOPES);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('item 5: archiving while money is owed', () => {
    it('should refuse to archive a subscriber who owes 34.99 with 409 balance_outstanding, and archive once paid', async () => {
      const subscriberId = await activeSubscriber();
      await createInvoice(t, isp.token, subscriberId, 3499);
      expectSuccess(await postStatus(t, isp.token, subscriberId, 'cancelled'));
      const before = await getSubscriber(t, isp.token, subscriberId);
      const eventsBefore = await listEvents(t, isp.token, { subject_id: subscriberId });

      const refused = await postStatus(t, isp.token, subscriberId, 'archived');
      expectError(refused, 409, 'balance_outstanding', 'status');
      expect(refused.body.error.message).toContain('3499 USD');
      expect(await getSubscriber(t, isp.token, subscriberId)).toEqual(before);
      expect(await listEvents(t, isp.token, { subject_id: subscriberId })).toEqual(eventsBefore);

      await createPayment(t, isp.token, subscriberId, 3499);
      const archived = await postStatus(t, isp.token, subscriberId, 'archived');
      expectSuccess(archived);
      expect(archived.body.data.status).toBe('archived');
    });

    it('should count what is owed in any currency', async () => {
      const subscriberId = (await createSubscriber(t, isp.token)).id;
      await createInvoice(t, isp.token, subscriberId, 1000);
      await createPayment(t, isp.token, subscriberId, 1000);
      await createInvoice(t, isp.token, subscriberId, 250, { currency: 'EUR' });
      const res = await postStatus(t, isp.token, subscriberId, 'archived');
      expectError(res, 409, 'balance_outstanding', 'status');
      expect(res.body.error.message).toContain('250 EUR');
      expect((await getSubscriber(t, isp.token, subscriberId)).status).toBe('prospect');
    });

    it('should archive a subscriber with nothing owed or a credit in its favour', async () => {
      const subscriberId = (await createSubscriber(t, isp.token)).id;
      await createInvoice(t, isp.token, subscriberId, 1000);
      await createPayment(t, isp.token, subscriberId, 1500);
      expect((await getBalance(t, isp.token, subscriberId))?.balance).toBe(-500);
      expectSuccess(await postStatus(t, isp.token, subscriberId, 'archived'));
    });

    it('should record payments and refunds for an archived subscriber, and refuse its debits, credits and invoices', async () => {
      const subscriberId = (await createSubscriber(t, isp.token)).id;
      expectSuccess(await postStatus(t, isp.token, subscriberId, 'archived'));

      const payment = await postTransaction(t, isp.token, transactionBody(subscriberId, { amount: 2000 }));
      expectSuccess(payment, 201);
      expect(payment.body.data).toMatchObject({ subscriber_id: subscriberId, kind: 'payment', amount: 2000 });
      const refund = await postTransaction(t, isp.token, refundBody(subscriberId, payment.body.data.id, 500));
      expectSuccess(refund, 201);
      expect((await getBalance(t, isp.token, subscriberId))?.balance).toBe(-1500);

      for (const kind of ['debit', 'credit']) {
        const res = await postTransaction(t, isp.token, transactionBody(subscriberId, { kind }));
        expectError(res, 409, 'invalid_state_transition', 'subscriber_id');
      }
      expectError(
        await postInvoice(t, isp.token, invoiceBody(subscriberId)),
        409,
        'invalid_state_transition',
        'subscriber_id',
      );
      expect((await getBalance(t, isp.token, subscriberId))?.balance).toBe(-1500);
      expect((await getSubscriber(t, isp.token, subscriberId)).status).toBe('archived');
    });
  });

  describe('item 5: POST /api/v1/invoices/{id}/write-off', () => {
    it('should require authentication and billing:write', async () => {
      const invoice = await createInvoice(t, isp.token, await activeSubscriber(), 1000);
      expectError(
        await request(t.http).post(`/api/v1/invoices/${invoice.id}/write-off`).send({ reason: REASON }),
        401,
        'authentication_required',
      );
      const reader = await createTenantWithToken(t, ['billing:read']);
      const res = await request(t.http)
        .post(`/api/v1/invoices/${invoice.id}/write-off`)
        .set(bearer(reader.token))
        .send({ reason: REASON });
      expectError(res, 403, 'insufficient_scope');
      expect((await getInvoice(t, isp.token, invoice.id)).status).toBe('open');
    });

    it('should write off an overdue open invoice: written_off, a write_off ledger entry, invoice.written_off', async () => {
      const subscriberId = await activeSubscriber();
      const invoice = await createInvoice(t, isp.token, subscriberId, 3499, { due_date: PAST_DATE });
      expect(invoice.overdue).toBe(true);

      const res = await writeOff(invoice.id);
      expectSuccess(res);
      const written = res.body.data as WrittenOff;
      expect(written).toMatchObject({
        id: invoice.id,
        status: 'written_off',
        overdue: false,
        total: 3499,
        amount_paid: 0,
        write_off_reason: REASON,
        amount_written_off: 3499,
        allocations: [],
      });
      expect(written.written_off_at).toMatch(ISO_MS);
      expect(written.updated_at).toBe(written.written_off_at);
      expect(await getInvoice(t, isp.token, invoice.id)).toEqual(written);

      expect(await getBalance(t, isp.token, subscriberId)).toEqual({
        currency: 'USD',
        balance: 0,
        open_invoices_due: 0,
        unallocated_credit: 0,
      });
      const [entry] = await ledgerOf(subscriberId);
      expect(entry).toMatchObject({
        type: 'write_off',
        currency: 'USD',
        amount: -3499,
        balance_after: 0,
        source_id: invoice.id,
      });

      const events = await eventsOf(t, isp.token, invoice.id, 'invoice.written_off');
      expect(events).toHaveLength(1);
      // The event's object is the invoice as the list shows it (no allocations).
      expect(events[0].data).toEqual({ object: { ...written, allocations: undefined } });
      expect(events[0].actor).toEqual({ type: 'token', id: isp.tokenId });
      expect(events[0].request_id).toBe(res.body.meta.request_id);

      // Never overdue again, and the subscriber owes nothing: it can be archived.
      expect(
        await listIds(t, isp.token, '/api/v1/invoices', { subscriber_id: subscriberId, overdue: 'true' }),
      ).toEqual([]);
      expect(
        await listIds(t, isp.token, '/api/v1/invoices', {
          subscriber_id: subscriberId,
          status: 'written_off',
        }),
      ).toEqual([invoice.id]);
      expectSuccess(await postStatus(t, isp.token, subscriberId, 'cancelled'));
      expectSuccess(await postStatus(t, isp.token, subscriberId, 'archived'));
    });

    it('should write off what a partially paid invoice still asks', async () => {
      const subscriberId = await activeSubscriber();
      const invoice = await createInvoice(t, isp.token, subscriberId, 5000);
      const payment = await createPayment(t, isp.token, subscriberId, 2000);
      // A billing profile's auto_apply may have applied it on receipt already; else it is applied by hand.
      if (payment.unallocated_amount > 0) {
        expectSuccess(
          await allocate(t, isp.token, payment.id, {
            allocations: [{ invoice_id: invoice.id, amount: 2000 }],
          }),
        );
      }
      expect((await getInvoice(t, isp.token, invoice.id)).status).toBe('partially_paid');

      const res = await writeOff(invoice.id);
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        status: 'written_off',
        amount_paid: 2000,
        amount_written_off: 3000,
      });
      expect(res.body.data.allocations).toHaveLength(1);
      expect((await getBalance(t, isp.token, subscriberId))?.balance).toBe(0);
      expect((await ledgerOf(subscriberId))[0]).toMatchObject({
        type: 'write_off',
        amount: -3000,
        balance_after: 0,
      });
    });

    it('should take no allocations on a written-off invoice', async () => {
      const subscriberId = await activeSubscriber();
      const invoice = await createInvoice(t, isp.token, subscriberId, 1000);
      expectSuccess(await writeOff(invoice.id));
      const payment = await createPayment(t, isp.token, subscriberId, 1000);
      const res = await allocate(t, isp.token, payment.id, {
        allocations: [{ invoice_id: invoice.id, amount: 500 }],
      });
      expectError(res, 409, 'invalid_state_transition', 'allocations.0.invoice_id');
      expect((await getInvoice(t, isp.token, invoice.id)).amount_paid).toBe(0);
    });

    it.each([
      [
        'draft',
        async (subscriberId: string) => createInvoice(t, isp.token, subscriberId, 1000, { draft: true }),
      ],
      ['paid', async (subscriberId: string) => createInvoice(t, isp.token, subscriberId, 0)],
      [
        'void',
        async (subscriberId: string) => {
          const invoice = await createInvoice(t, isp.token, subscriberId, 1000);
          expectSuccess(await voidInvoice(t, isp.token, invoice.id));
          return invoice;
        },
      ],
      [
        'written_off',
        async (subscriberId: string) => {
          const invoice = await createInvoice(t, isp.token, subscriberId, 1000);
          expectSuccess(await writeOff(invoice.id));
          return invoice;
        },
      ],
    ])(
      'should refuse a %s invoice with 409 invalid_state_transition and change nothing',
      async (status, make) => {
        const subscriberId = await activeSubscriber();
        const invoice = await make(subscriberId);
        const before = await getInvoice(t, isp.token, invoice.id);
        expect(before.status).toBe(status);
        const balances = await getBalances(t, isp.token, subscriberId);
        const events = await eventsOf(t, isp.token, invoice.id);
        const res = await writeOff(invoice.id, { reason: 'try again' });
        expectError(res, 409, 'invalid_state_transition');
        expect(res.body.error.message).toContain(status);
        expect(await getInvoice(t, isp.token, invoice.id)).toEqual(before);
        expect(await getBalances(t, isp.token, subscriberId)).toEqual(balances);
        expect(await eventsOf(t, isp.token, invoice.id)).toEqual(events);
      },
    );

    it.each([
      ['no reason', {}, 400, 'missing_field'],
      ['a null reason', { reason: null }, 400, 'missing_field'],
      ['a blank reason', { reason: '   ' }, 422, 'validation_failed'],
      ['a reason of 501 characters', { reason: 'x'.repeat(501) }, 422, 'validation_failed'],
      ['a reason that is not a string', { reason: 42 }, 422, 'validation_failed'],
    ])('should refuse %s on reason', async (_name, body, status, code) => {
      const invoice = await createInvoice(t, isp.token, await activeSubscriber(), 1000);
      expectError(await writeOff(invoice.id, body), status, code, 'reason');
      expect((await getInvoice(t, isp.token, invoice.id)).status).toBe('open');
    });

    it("should answer 404 for an unknown invoice and another tenant's", async () => {
      expectNotFound(await writeOff('inv_00000000000000000000000000'));
      const other = await createTenantWithToken(t, SCOPES);
      const theirs = await createInvoice(t, other.token, (await createSubscriber(t, other.token)).id, 1000);
      expectNotFound(await writeOff(theirs.id));
      expect((await getInvoice(t, other.token, theirs.id)).status).toBe('open');
    });

    it('should honour If-Match: a stale tag is 412 and changes nothing, the current one writes off', async () => {
      const invoice = await createInvoice(t, isp.token, await activeSubscriber(), 1000);
      const read = await request(t.http).get(`/api/v1/invoices/${invoice.id}`).set(bearer(isp.token));
      const stale = await writeOff(
        invoice.id,
        { reason: REASON },
        { 'If-Match': '"stale-0000000000000000000000"' },
      );
      expectError(stale, 412, 'precondition_failed');
      expect((await getInvoice(t, isp.token, invoice.id)).status).toBe('open');
      const current = await writeOff(invoice.id, { reason: REASON }, { 'If-Match': read.headers.etag });
      expectSuccess(current);
      const after = await request(t.http).get(`/api/v1/invoices/${invoice.id}`).set(bearer(isp.token));
      expect(current.headers.etag).toBe(after.headers.etag);
    });

    it('should replay a retried write-off with the same idempotency key: one entry, one event', async () => {
      const subscriberId = await activeSubscriber();
      const invoice = await createInvoice(t, isp.token, subscriberId, 1200);
      const key = idempotencyKey();
      const first = await writeOff(invoice.id, { reason: REASON }, key);
      expectSuccess(first);
      const replay = await writeOff(invoice.id, { reason: REASON }, key);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expectReplayOf(replay, first);
      expectError(
        await writeOff(invoice.id, { reason: 'another reason' }, key),
        422,
        'idempotency_key_reused',
        'X-Idempotency-Key',
      );
      expect((await ledgerOf(subscriberId)).filter((entry) => entry.type === 'write_off')).toHaveLength(1);
      expect(await eventsOf(t, isp.token, invoice.id, 'invoice.written_off')).toHaveLength(1);
    });
  });

  describe("item 6: a manual invoice is in the subscriber's billing currency", () => {
    let tenant: TenantWithToken;
    let gbpProfileId: string;

    beforeAll(async () => {
      tenant = await createTenantWithToken(t, SCOPES);
      await createBillingProfile(t, tenant.token, { name: 'Residential', currency: 'EUR', is_default: true });
      gbpProfileId = (await createBillingProfile(t, tenant.token, { name: 'UK business', currency: 'GBP' }))
        .id;
    });

    it("should refuse a USD invoice for a subscriber billed in the tenant default's EUR with 422 currency_mismatch", async () => {
      const subscriberId = (await createSubscriber(t, tenant.token)).id;
      for (const draft of [false, true]) {
        const res = await postInvoice(t, tenant.token, invoiceBody(subscriberId, { currency: 'USD', draft }));
        expectError(res, 422, 'currency_mismatch', 'currency');
        expect(res.body.error.message).toContain('EUR');
      }
      expect(await listIds(t, tenant.token, '/api/v1/invoices', { subscriber_id: subscriberId })).toEqual([]);
      expect(await getBalances(t, tenant.token, subscriberId)).toEqual([]);
      const ok = await postInvoice(t, tenant.token, invoiceBody(subscriberId, { currency: 'EUR' }));
      expectSuccess(ok, 201);
    });

    it("should hold a subscriber with its own profile to that profile's currency", async () => {
      const subscriberId = (await createSubscriber(t, tenant.token, { billing_profile_id: gbpProfileId })).id;
      const res = await postInvoice(t, tenant.token, invoiceBody(subscriberId, { currency: 'EUR' }));
      expectError(res, 422, 'currency_mismatch', 'currency');
      expect(res.body.error.message).toContain('GBP');
      expectSuccess(await postInvoice(t, tenant.token, invoiceBody(subscriberId, { currency: 'GBP' })), 201);
    });

    it('should accept any currency when neither the subscriber nor the tenant has a profile', async () => {
      const subscriberId = await activeSubscriber();
      expectSuccess(await postInvoice(t, isp.token, invoiceBody(subscriberId, { currency: 'JPY' })), 201);
    });
  });

  describe('item 8: a subscriber follows its services', () => {
    it('should make a prospect pending when its first service is created, and active when it is activated', async () => {
      const subscriberId = (await createSubscriber(t, isp.token)).id;
      const res = await postService(t, isp.token, subscriberId, {
        plan_id: (await createPlan(t, isp.token)).id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: DEFAULT_PPPOE_PASSWORD,
      });
      expect(res.status).toBe(202);
      const { order } = res.body.data as { order: { id: string } };

      const completed = await waitForOrder(t, isp.token, order.id, ['completed', 'failed']);
      expect(completed.status).toBe('completed');
      const subscriber = await getSubscriber(t, isp.token, subscriberId);
      expect(subscriber.status).toBe('active');

      const changes = (
        await listEvents(t, isp.token, {
          subject_id: subscriberId,
          type: 'subscriber.status_changed',
        })
      ).reverse();
      expect(changes.map((event) => [event.data.from, event.data.to])).toEqual([
        ['prospect', 'pending'],
        ['pending', 'active'],
      ]);
      for (const event of changes) {
        expect(event.actor).toEqual(FOLLOWS_SERVICE);
      }
      // The first move is the service creation's: the same request, the same transaction.
      expect(changes[0].request_id).toBe(res.body.meta.request_id);
      expect(changes[0].data.object).toMatchObject({ id: subscriberId, status: 'pending' });
      expect(changes[0].data.reason).toContain(res.body.data.service.id);
      expect(changes[1].data.object).toEqual(subscriber);
      expect(changes[1].data.reason).toContain(res.body.data.service.id);
    });

    it('should leave the subscriber pending while the activation has not completed', async () => {
      const subscriberId = (await createSubscriber(t, isp.token)).id;
      const { order } = await createService(t, isp.token, subscriberId);
      const cancelled = await request(t.http)
        .post(`/api/v1/provisioning-orders/${order.id}/cancel`)
        .set(bearer(isp.token));
      // The worker may have taken the order already: then it completes, and the subscriber follows it.
      if (cancelled.status === 200) {
        expect((await getSubscriber(t, isp.token, subscriberId)).status).toBe('pending');
      } else {
        await waitForOrder(t, isp.token, order.id, ['completed']);
        expect((await getSubscriber(t, isp.token, subscriberId)).status).toBe('active');
      }
    });

    it('should activate a subscriber created pending on its first activation, and move no one already active', async () => {
      const pendingId = (await createSubscriber(t, isp.token, { status: 'pending' })).id;
      const activeId = await activeSubscriber();
      const made = await Promise.all([pendingId, activeId].map((id) => createService(t, isp.token, id)));
      for (const { order } of made) {
        await waitForOrder(t, isp.token, order.id, ['completed']);
      }
      expect((await getSubscriber(t, isp.token, pendingId)).status).toBe('active');
      expect((await getSubscriber(t, isp.token, activeId)).status).toBe('active');
      const moves = async (id: string) =>
        (await listEvents(t, isp.token, { subject_id: id, type: 'subscriber.status_changed' })).map(
          (event) => [event.data.from, event.data.to, event.actor.id],
        );
      expect(await moves(pendingId)).toEqual([['pending', 'active', FOLLOWS_SERVICE.id]]);
      expect(await moves(activeId)).toEqual([]);

      // A second service of an active subscriber changes nothing either.
      const { order } = await createService(t, isp.token, pendingId);
      await waitForOrder(t, isp.token, order.id, ['completed']);
      expect(await moves(pendingId)).toEqual([['pending', 'active', FOLLOWS_SERVICE.id]]);
    });
  });
});
