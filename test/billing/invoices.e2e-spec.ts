import request from 'supertest';
import {
  allocate,
  type BillingTenant,
  createBillingTenant,
  createInvoice,
  createPayment,
  finalizeInvoice,
  FUTURE_DATE,
  getBalance,
  getInvoice,
  INVOICE_ID,
  invoiceBody,
  type InvoiceRecord,
  listAll,
  listIds,
  newSubscriberId,
  PAST_DATE,
  postInvoice,
  voidInvoice,
  billingSuite,
} from '../support/billing-factory';
import { expectError, expectList, expectSuccess, listedIds, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import { ISO_MS } from '../support/subscriber-factory';
import { createTenantWithToken, type TestApp } from '../support/test-app';
import { letTimePass } from '../support/wait-for';
import { itRequiresAuthentication, itRefusesBadListQueries, walkPages } from '../support/shared-cases';

/** What an untaxed line carries (issue 29): no rates, its amount its net, no tax. */
const untaxed = { tax_rate_ids: [], tax_amount: 0, taxes: [] };

describe('Billing: invoices', () => {
  let t: TestApp;
  let a: BillingTenant;
  let b: BillingTenant;

  billingSuite((suite) => ({ t, a, b } = suite), { tenants: 2, listen: true });

  describe('POST /api/v1/invoices', () => {
    itRequiresAuthentication(
      () => t,
      'post',
      '/api/v1/invoices',
      () => invoiceBody(a.subscriberId),
    );

    it('should create an open invoice whose total is the sum of quantity × unit_amount', async () => {
      const body = invoiceBody(a.subscriberId, {
        currency: 'EUR',
        due_date: '2099-03-01',
        lines: [
          { description: 'Fiber 500 — March', quantity: 2, unit_amount: 1500 },
          { description: 'Static IP', quantity: 3, unit_amount: 333 },
        ],
      });
      const res = await postInvoice(t, a.token, body);
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject({
        id: expect.stringMatching(INVOICE_ID),
        number: expect.stringMatching(/^INV-\d{4}-\d{6}$/),
        sequence: expect.any(Number),
        subscriber_id: a.subscriberId,
        currency: 'EUR',
        status: 'open',
        subtotal: 3999,
        tax_amount: 0,
        taxes: [],
        total: 3999,
        amount_paid: 0,
        amount_due: 3999,
        due_date: '2099-03-01',
        overdue: false,
        finalized_at: expect.stringMatching(ISO_MS),
        paid_at: null,
        voided_at: null,
        created_at: expect.stringMatching(ISO_MS),
      });
      expect(res.body.data.lines).toEqual([
        {
          ...untaxed,
          description: 'Fiber 500 — March',
          quantity: 2,
          unit_amount: 1500,
          amount: 3000,
          net_amount: 3000,
        },
        { ...untaxed, description: 'Static IP', quantity: 3, unit_amount: 333, amount: 999, net_amount: 999 },
      ]);
      const stored = await getInvoice(t, a.token, res.body.data.id);
      expect(stored).toMatchObject({ total: 3999, amount_due: 3999, status: 'open', allocations: [] });
    });

    it('should create a draft when draft is true', async () => {
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { draft: true }));
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject({
        status: 'draft',
        total: 1000,
        amount_paid: 0,
        amount_due: 1000,
        finalized_at: null,
      });
    });

    it('should create an open invoice when draft is false', async () => {
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { draft: false }));
      expectSuccess(res, 201);
      expect(res.body.data.status).toBe('open');
    });

    it('should number the issued invoices of a fresh tenant 1, 2, 3 in its series, a draft when it is issued', async () => {
      const fresh = await createBillingTenant(t);
      const year = new Date().getUTCFullYear();
      const first = await createInvoice(t, fresh.token, fresh.subscriberId);
      const draft = await createInvoice(t, fresh.token, fresh.subscriberId, 500, { draft: true });
      const third = await createInvoice(t, fresh.token, fresh.subscriberId);
      expect([first.sequence, draft.sequence, third.sequence]).toEqual([1, null, 2]);
      expect([first.number, draft.number, third.number]).toEqual([
        `INV-${year}-000001`,
        null,
        `INV-${year}-000002`,
      ]);
      const issued = await request(t.http)
        .post(`/api/v1/invoices/${draft.id}/finalize`)
        .set('Authorization', `Bearer ${fresh.token}`);
      expectSuccess(issued, 200);
      expect(issued.body.data).toMatchObject({ sequence: 3, number: `INV-${year}-000003` });
    });

    it('should number each tenant on its own and not spend a number on a rejected invoice', async () => {
      const one = await createBillingTenant(t);
      const two = await createBillingTenant(t);
      expect((await createInvoice(t, one.token, one.subscriberId)).sequence).toBe(1);
      expect((await createInvoice(t, two.token, two.subscriberId)).sequence).toBe(1);
      const rejected = await postInvoice(t, one.token, invoiceBody('sub_00000000000000000000000000'));
      expectError(rejected, 422, 'invalid_reference', 'subscriber_id');
      expect((await createInvoice(t, one.token, one.subscriberId)).sequence).toBe(2);
      expect((await createInvoice(t, two.token, two.subscriberId)).sequence).toBe(2);
    });

    it('should give invoices created at the same time distinct consecutive numbers', async () => {
      const fresh = await createBillingTenant(t);
      const results = await Promise.all(
        Array.from({ length: 10 }, () => postInvoice(t, fresh.token, invoiceBody(fresh.subscriberId))),
      );
      expect(results.map((res) => res.status)).toEqual(Array(10).fill(201));
      const numbers = results.map((res) => res.body.data.sequence as number).sort((x, y) => x - y);
      expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });

    it('should answer 403 insufficient_scope for a token with billing:read only', async () => {
      const reader = await createTenantWithToken(t, ['billing:read']);
      const res = await postInvoice(t, reader.token, invoiceBody(a.subscriberId));
      expectError(res, 403, 'insufficient_scope');
    });
  });

  describe('POST /api/v1/invoices: validation', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/invoices', {});

    it('should answer 422 invalid_reference on subscriber_id for an unknown subscriber', async () => {
      const res = await postInvoice(t, a.token, invoiceBody('sub_00000000000000000000000000'));
      expectError(res, 422, 'invalid_reference', 'subscriber_id');
    });

    it("should answer 422 invalid_reference on subscriber_id for another tenant's subscriber", async () => {
      const res = await postInvoice(t, a.token, invoiceBody(b.subscriberId));
      expectError(res, 422, 'invalid_reference', 'subscriber_id');
      expect(await listIds(t, b.token, '/api/v1/invoices', { subscriber_id: b.subscriberId })).toEqual([]);
    });

    it.each(['usd', 'US', 'ZZZ', 'DOLLAR', 840])('should answer 422 on currency for %p', async (currency) => {
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { currency }));
      expectError(res, 422, 'validation_failed', 'currency');
    });

    it.each(['2026-02-30', '12/01/2026', '2026-13-01', '2026-1-5', '2026-01-05T00:00:00Z', ''])(
      'should answer 422 on due_date for %p',
      async (due_date) => {
        const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { due_date }));
        expectError(res, 422, 'validation_failed', 'due_date');
      },
    );

    it('should accept a leap day as due_date', async () => {
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { due_date: '2028-02-29' }));
      expectSuccess(res, 201);
      expect(res.body.data.due_date).toBe('2028-02-29');
    });

    it('should answer 422 on lines for an empty list of lines', async () => {
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { lines: [] }));
      expectError(res, 422, 'validation_failed', 'lines');
    });

    it("should answer 422 on 'lines.0.quantity' for a quantity of 0", async () => {
      const lines = [{ description: 'Fiber', quantity: 0, unit_amount: 1000 }];
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { lines }));
      expectError(res, 422, 'validation_failed', 'lines.0.quantity');
    });

    it("should name the failing line's index in the field", async () => {
      const lines = [
        { description: 'Fiber', quantity: 1, unit_amount: 1000 },
        { description: 'Router', quantity: -1, unit_amount: 1000 },
      ];
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { lines }));
      expectError(res, 422, 'validation_failed', 'lines.1.quantity');
    });

    it("should answer 400 missing_field on 'lines.0.description' when a line has no description", async () => {
      const lines = [{ quantity: 1, unit_amount: 1000 }];
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { lines }));
      expectError(res, 400, 'missing_field', 'lines.0.description');
    });

    it.each([1.5, -1, '1000'])("should answer 422 on 'lines.0.unit_amount' for %p", async (unit_amount) => {
      const lines = [{ description: 'Fiber', quantity: 1, unit_amount }];
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { lines }));
      expectError(res, 422, 'validation_failed', 'lines.0.unit_amount');
    });

    it.each(['subscriber_id', 'currency', 'due_date', 'lines'])(
      'should answer 400 missing_field when %s is absent',
      async (field) => {
        const body = invoiceBody(a.subscriberId);
        delete body[field];
        expectError(await postInvoice(t, a.token, body), 400, 'missing_field', field);
      },
    );

    it('should answer 400 unknown_field for a field the invoice does not have', async () => {
      const res = await postInvoice(t, a.token, invoiceBody(a.subscriberId, { status: 'paid' }));
      expectError(res, 400, 'unknown_field', 'status');
    });

    it('should create nothing when validation fails', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      await postInvoice(t, a.token, invoiceBody(subscriberId, { lines: [] }));
      await postInvoice(t, a.token, invoiceBody(subscriberId, { due_date: '2026-02-30' }));
      expect(await listIds(t, a.token, '/api/v1/invoices', { subscriber_id: subscriberId })).toEqual([]);
    });
  });

  describe('POST /api/v1/invoices/{id}/finalize', () => {
    it('should require authentication', async () => {
      const draft = await createInvoice(t, a.token, a.subscriberId, 1000, { draft: true });
      expectError(
        await request(t.http).post(`/api/v1/invoices/${draft.id}/finalize`),
        401,
        'authentication_required',
      );
      expect((await getInvoice(t, a.token, draft.id)).status).toBe('draft');
    });

    it('should open a draft and bring it into the balance', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const draft = await createInvoice(t, a.token, subscriberId, 2500, { draft: true });
      expect((await getBalance(t, a.token, subscriberId))?.balance ?? 0).toBe(0);

      const res = await finalizeInvoice(t, a.token, draft.id);
      expectSuccess(res, 200);
      // A draft has no number; it takes the next of the series when issued (no gap for drafts never issued).
      expect(draft).toMatchObject({ number: null, sequence: null });
      expect(res.body.data).toMatchObject({
        id: draft.id,
        number: expect.stringMatching(/^INV-\d{4}-\d{6}$/),
        sequence: expect.any(Number),
        status: 'open',
        total: 2500,
        amount_due: 2500,
        finalized_at: expect.stringMatching(ISO_MS),
      });
      expect((await getInvoice(t, a.token, draft.id)).status).toBe('open');
      expect(await getBalance(t, a.token, subscriberId)).toMatchObject({
        balance: 2500,
        open_invoices_due: 2500,
      });
    });

    it('should answer 409 invalid_state_transition for an open invoice', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId);
      expectError(await finalizeInvoice(t, a.token, invoice.id), 409, 'invalid_state_transition');
    });

    it('should answer 409 invalid_state_transition when finalizing twice and count the invoice once', async () => {
      const subscriberId = await newSubscriberId(t, a.token);
      const draft = await createInvoice(t, a.token, subscriberId, 700, { draft: true });
      expectSuccess(await finalizeInvoice(t, a.token, draft.id), 200);
      expectError(await finalizeInvoice(t, a.token, draft.id), 409, 'invalid_state_transition');
      expect((await getBalance(t, a.token, subscriberId))?.balance).toBe(700);
    });

    it('should answer 409 invalid_state_transition for a void invoice', async () => {
      const draft = await createInvoice(t, a.token, a.subscriberId, 1000, { draft: true });
      expectSuccess(await voidInvoice(t, a.token, draft.id), 200);
      expectError(await finalizeInvoice(t, a.token, draft.id), 409, 'invalid_state_transition');
      expect((await getInvoice(t, a.token, draft.id)).status).toBe('void');
    });

    it("should answer 404 for an unknown or another tenant's invoice", async () => {
      const draft = await createInvoice(t, b.token, b.subscriberId, 1000, { draft: true });
      expectNotFound(await finalizeInvoice(t, a.token, draft.id));
      expectNotFound(await finalizeInvoice(t, a.token, 'inv_00000000000000000000000000'));
      expect((await getInvoice(t, b.token, draft.id)).status).toBe('draft');
    });
  });

  describe('POST /api/v1/invoices/{id}/void', () => {
    it('should require authentication', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId);
      expectError(
        await request(t.http).post(`/api/v1/invoices/${invoice.id}/void`),
        401,
        'authentication_required',
      );
      expect((await getInvoice(t, a.token, invoice.id)).status).toBe('open');
    });

    it('should void an open invoice with nothing allocated', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId);
      const res = await voidInvoice(t, a.token, invoice.id);
      expectSuccess(res, 200);
      expect(res.body.data).toMatchObject({
        id: invoice.id,
        status: 'void',
        amount_paid: 0,
        voided_at: expect.stringMatching(ISO_MS),
      });
      expect((await getInvoice(t, a.token, invoice.id)).status).toBe('void');
    });

    it('should void a draft', async () => {
      const draft = await createInvoice(t, a.token, a.subscriberId, 1000, { draft: true });
      const res = await voidInvoice(t, a.token, draft.id);
      expectSuccess(res, 200);
      expect(res.body.data.status).toBe('void');
    });

    it('should answer 409 invalid_state_transition when voiding twice', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId);
      expectSuccess(await voidInvoice(t, a.token, invoice.id), 200);
      expectError(await voidInvoice(t, a.token, invoice.id), 409, 'invalid_state_transition');
    });

    it('should answer 409 invalid_state_transition for a partially paid invoice and change nothing', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId, 1000);
      const payment = await createPayment(t, a.token, a.subscriberId, 300, { auto_apply: false });
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 300 }] }),
      );
      expectError(await voidInvoice(t, a.token, invoice.id), 409, 'invalid_state_transition');
      expect(await getInvoice(t, a.token, invoice.id)).toMatchObject({
        status: 'partially_paid',
        amount_paid: 300,
        voided_at: null,
      });
    });

    it('should answer 409 invalid_state_transition for a paid invoice', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId, 400);
      const payment = await createPayment(t, a.token, a.subscriberId, 400, { auto_apply: false });
      expectSuccess(
        await allocate(t, a.token, payment.id, { allocations: [{ invoice_id: invoice.id, amount: 400 }] }),
      );
      expectError(await voidInvoice(t, a.token, invoice.id), 409, 'invalid_state_transition');
      expect((await getInvoice(t, a.token, invoice.id)).status).toBe('paid');
    });

    it("should answer 404 for another tenant's invoice", async () => {
      const invoice = await createInvoice(t, b.token, b.subscriberId);
      expectNotFound(await voidInvoice(t, a.token, invoice.id));
      expect((await getInvoice(t, b.token, invoice.id)).status).toBe('open');
    });
  });

  describe('GET /api/v1/invoices/{id}', () => {
    it('should require authentication', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId);
      expectError(
        await request(t.http).get(`/api/v1/invoices/${invoice.id}`),
        401,
        'authentication_required',
      );
    });

    it('should return the invoice with its allocations, oldest first', async () => {
      const invoice = await createInvoice(t, a.token, a.subscriberId, 1000);
      const first = await createPayment(t, a.token, a.subscriberId, 250, { auto_apply: false });
      const second = await createPayment(t, a.token, a.subscriberId, 300, { auto_apply: false });
      expectSuccess(
        await allocate(t, a.token, first.id, { allocations: [{ invoice_id: invoice.id, amount: 250 }] }),
      );
      expectSuccess(
        await allocate(t, a.token, second.id, { allocations: [{ invoice_id: invoice.id, amount: 100 }] }),
      );

      const res = await request(t.http).get(`/api/v1/invoices/${invoice.id}`).set(bearer(a.token));
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ id: invoice.id, amount_paid: 350, amount_due: 650 });
      expect(res.body.data.allocations).toEqual([
        expect.objectContaining({
          transaction_id: first.id,
          invoice_id: invoice.id,
          amount: 250,
          currency: 'USD',
        }),
        expect.objectContaining({
          transaction_id: second.id,
          invoice_id: invoice.id,
          amount: 100,
          currency: 'USD',
        }),
      ]);
    });

    it("should answer 404 not_found for another tenant's invoice", async () => {
      const invoice = await createInvoice(t, b.token, b.subscriberId);
      const res = await request(t.http).get(`/api/v1/invoices/${invoice.id}`).set(bearer(a.token));
      expectError(res, 404, 'not_found');
    });
  });

  describe('GET /api/v1/invoices', () => {
    /** A tenant of its own, so the lists hold exactly what this block made. */
    let list: BillingTenant;
    let other: string;
    let open: InvoiceRecord;
    let overdueOpen: InvoiceRecord;
    let overduePartial: InvoiceRecord;
    let paidPastDue: InvoiceRecord;
    let draftPastDue: InvoiceRecord;
    let voidPastDue: InvoiceRecord;
    let otherSubscriberInvoice: InvoiceRecord;
    let all: string[];

    beforeAll(async () => {
      list = await createBillingTenant(t);
      other = await newSubscriberId(t, list.token);
      const sub = list.subscriberId;
      open = await createInvoice(t, list.token, sub, 1000, { due_date: FUTURE_DATE });
      // 5 ms apart, so that their created_at differ and newest-first is the order they were made in.
      await letTimePass(5);
      overdueOpen = await createInvoice(t, list.token, sub, 1000, { due_date: PAST_DATE });
      await letTimePass(5);
      overduePartial = await createInvoice(t, list.token, sub, 1000, { due_date: PAST_DATE });
      await letTimePass(5);
      paidPastDue = await createInvoice(t, list.token, sub, 500, { due_date: PAST_DATE });
      await letTimePass(5);
      draftPastDue = await createInvoice(t, list.token, sub, 500, { due_date: PAST_DATE, draft: true });
      await letTimePass(5);
      voidPastDue = await createInvoice(t, list.token, sub, 500, { due_date: PAST_DATE });
      await letTimePass(5);
      otherSubscriberInvoice = await createInvoice(t, list.token, other, 800, { due_date: PAST_DATE });

      const payment = await createPayment(t, list.token, sub, 800, { auto_apply: false });
      expectSuccess(
        await allocate(t, list.token, payment.id, {
          allocations: [
            { invoice_id: overduePartial.id, amount: 300 },
            { invoice_id: paidPastDue.id, amount: 500 },
          ],
        }),
      );
      expectSuccess(await voidInvoice(t, list.token, voidPastDue.id));
      all = [
        otherSubscriberInvoice,
        voidPastDue,
        draftPastDue,
        paidPastDue,
        overduePartial,
        overdueOpen,
        open,
      ].map((invoice) => invoice.id);
    });

    itRequiresAuthentication(() => t, 'get', '/api/v1/invoices');

    it("should list the tenant's invoices newest first and none of another tenant", async () => {
      const res = await request(t.http).get('/api/v1/invoices').set(bearer(list.token));
      expectList(res);
      expect(res.body.data.map((invoice: InvoiceRecord) => invoice.id)).toEqual(all);
      expect(res.body.meta.pagination).toEqual({ limit: 20, has_more: false, next_cursor: null });
    });

    it('should filter by subscriber_id', async () => {
      expect(await listIds(t, list.token, '/api/v1/invoices', { subscriber_id: other })).toEqual([
        otherSubscriberInvoice.id,
      ]);
      expect(await listIds(t, list.token, '/api/v1/invoices', { subscriber_id: list.subscriberId })).toEqual(
        all.slice(1),
      );
    });

    it.each([
      ['draft', () => [draftPastDue.id]],
      ['open', () => [otherSubscriberInvoice.id, overdueOpen.id, open.id]],
      ['partially_paid', () => [overduePartial.id]],
      ['paid', () => [paidPastDue.id]],
      ['void', () => [voidPastDue.id]],
    ])('should filter by status %s', async (status, expected) => {
      expect(await listIds(t, list.token, '/api/v1/invoices', { status })).toEqual(expected());
    });

    it('should list only open or partially paid invoices past their due date with overdue=true', async () => {
      const res = await request(t.http).get('/api/v1/invoices?overdue=true').set(bearer(list.token));
      expect(listedIds(res)).toEqual([otherSubscriberInvoice.id, overduePartial.id, overdueOpen.id]);
      for (const invoice of res.body.data as InvoiceRecord[]) {
        expect(invoice.overdue).toBe(true);
      }
    });

    it('should list every other invoice with overdue=false', async () => {
      const ids = await listIds(t, list.token, '/api/v1/invoices', { overdue: 'false' });
      expect(ids).toEqual([voidPastDue.id, draftPastDue.id, paidPastDue.id, open.id]);
    });

    it('should mark overdue on the record only for payable invoices past due', async () => {
      expect((await getInvoice(t, list.token, overdueOpen.id)).overdue).toBe(true);
      expect((await getInvoice(t, list.token, overduePartial.id)).overdue).toBe(true);
      expect((await getInvoice(t, list.token, open.id)).overdue).toBe(false);
      expect((await getInvoice(t, list.token, paidPastDue.id)).overdue).toBe(false);
      expect((await getInvoice(t, list.token, draftPastDue.id)).overdue).toBe(false);
      expect((await getInvoice(t, list.token, voidPastDue.id)).overdue).toBe(false);
    });

    it('should combine filters', async () => {
      const ids = await listIds(t, list.token, '/api/v1/invoices', {
        subscriber_id: list.subscriberId,
        overdue: 'true',
        status: 'open',
      });
      expect(ids).toEqual([overdueOpen.id]);
    });

    itRefusesBadListQueries(
      () => t,
      () => list.token,
      '/api/v1/invoices',
      [
        ['overdue', 'maybe'],
        ['overdue', '1'],
        ['status', 'unpaid'],
        ['limit', '0'],
        ['limit', '101'],
        ['created_gte', 'yesterday'],
        ['color', 'red'],
      ],
    );

    it('should filter by the created range, created_gte inclusive and created_lt exclusive', async () => {
      const from = paidPastDue.created_at;
      const to = voidPastDue.created_at;
      expect(await listIds(t, list.token, '/api/v1/invoices', { created_gte: from, created_lt: to })).toEqual(
        [draftPastDue.id, paidPastDue.id],
      );
      expect(
        await listIds(t, list.token, '/api/v1/invoices', { created_lt: overdueOpen.created_at }),
      ).toEqual([open.id]);
      expect(
        await listIds(t, list.token, '/api/v1/invoices', { created_gte: otherSubscriberInvoice.created_at }),
      ).toEqual([otherSubscriberInvoice.id]);
    });

    it('should page through every invoice once with limit and starting_after', async () => {
      expect(await walkPages(t, list.token, '/api/v1/invoices', 3)).toEqual({ ids: all, pages: 3 });
    });

    it('should page within a filter', async () => {
      const rows = await listAll<InvoiceRecord>(t, list.token, '/api/v1/invoices', { status: 'open' });
      expect(rows.map((row) => row.id)).toEqual([otherSubscriberInvoice.id, overdueOpen.id, open.id]);
      const first = await request(t.http)
        .get('/api/v1/invoices')
        .query({ status: 'open', limit: '2' })
        .set(bearer(list.token));
      expectList(first);
      expect(first.body.meta.pagination.has_more).toBe(true);
      const second = await request(t.http)
        .get('/api/v1/invoices')
        .query({ status: 'open', limit: '2', starting_after: first.body.meta.pagination.next_cursor })
        .set(bearer(list.token));
      expectList(second);
      expect(second.body.data.map((invoice: InvoiceRecord) => invoice.id)).toEqual([open.id]);
      expect(second.body.meta.pagination.has_more).toBe(false);
    });
  });
});
