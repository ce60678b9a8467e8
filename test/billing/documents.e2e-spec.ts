import request from 'supertest';
import {
  allocate,
  BILLING_SCOPES,
  type Body,
  byHand,
  createInvoice,
  createPayment,
  createTransaction,
  getBalance,
  getInvoice,
  type InvoiceRecord,
  type LedgerEntryRecord,
  listAll,
  type TransactionRecord,
  voidInvoice,
  startBillingApp,
  taxedLines,
} from '../support/billing-factory';
import { expectError, expectSuccess, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import { binary, joinHyphenated, missingFrom, pdfOf, pdfPages } from '../support/pdf-text';
import { createBillingProfile, createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, type TenantWithToken, type TestApp } from '../support/test-app';

const UNKNOWN_INVOICE = 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB';
const UNKNOWN_CREDIT_NOTE = 'cn_01JD3Z6W3R4T5Y6U7I8O9P0QAB';
const UNKNOWN_SUBSCRIBER = 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB';

/** Amounts as de-DE writes euros (Intl, not the renderer's own formatter): 8864 → "88,64 €". */
const eur = (minor: number) =>
  new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' }).format(minor / 100);

const SETTINGS = {
  legal_name: 'Nordlicht Glasfaser GmbH',
  address: { line1: 'Hafenstraße 12', postal_code: '20457', city: 'Hamburg', country: 'DE' },
  tax_id: 'DE123456789',
  payment_instructions: 'Überweisung an IBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX',
  locale: 'de-DE',
  time_zone: 'Europe/Berlin',
};

interface CreditNoteRecord {
  id: string;
  number: string;
  total: number;
  credit_transaction_id: string;
  refund_transaction_id: string | null;
}

interface StatementEntry {
  date: string;
  kind: string;
  reference: string;
  description: string;
  source_id: string;
  debit: number;
  credit: number;
  balance: number;
}

interface Statement {
  subscriber_id: string;
  currency: string;
  from: string | null;
  to: string;
  opening_balance: number;
  entries: StatementEntry[];
  total_debits: number;
  total_credits: number;
  closing_balance: number;
}

/** Issue 29 items 8 and 9: invoices and credit notes as PDFs, and statements of account (JSON and PDF). */
describe('Billing: documents and statements', () => {
  let t: TestApp;
  let d: TenantWithToken;
  let profileId: string;
  let vat19: string;
  let vat7: string;

  const get = (path: string, token = d.token, headers: Record<string, string> = {}) =>
    binary(request(t.http).get(path).set(bearer(token)).set(headers));

  async function createRate(body: Body): Promise<string> {
    const res = await request(t.http).post('/api/v1/tax-rates').set(bearer(d.token)).send(body);
    expectSuccess(res, 201);
    return res.body.data.id as string;
  }

  async function subscriber(fullName: string, address: Body): Promise<string> {
    return (
      await createSubscriber(t, d.token, { full_name: fullName, address, billing_profile_id: profileId })
    ).id;
  }

  function invoice(subscriberId: string, lines: [string, number, string[]][], overrides: Body = {}) {
    return createInvoice(t, d.token, subscriberId, 0, {
      currency: 'EUR',
      due_date: '2099-12-31',
      lines: taxedLines(lines),
      ...overrides,
    });
  }

  async function creditNote(invoiceId: string, body: Body): Promise<CreditNoteRecord> {
    const res = await request(t.http)
      .post(`/api/v1/invoices/${invoiceId}/credit-notes`)
      .set(bearer(d.token))
      .send(body);
    expectSuccess(res, 201);
    return res.body.data as CreditNoteRecord;
  }

  async function statement(subscriberId: string, query: Record<string, string> = {}): Promise<Statement> {
    const res = await request(t.http)
      .get(`/api/v1/subscribers/${subscriberId}/statement`)
      .query(query)
      .set(bearer(d.token));
    expectSuccess(res);
    return res.body.data as Statement;
  }

  /** The subscriber's EUR ledger, oldest first. */
  async function ledgerOf(subscriberId: string): Promise<LedgerEntryRecord[]> {
    return (await listAll<LedgerEntryRecord>(t, d.token, `/api/v1/subscribers/${subscriberId}/ledger`))
      .filter((entry) => entry.currency === 'EUR')
      .reverse();
  }

  beforeAll(async () => {
    t = await startBillingApp();
    d = await createTenantWithToken(t, BILLING_SCOPES);
    const settings = await request(t.http)
      .patch('/api/v1/tenant/settings')
      .set(bearer(d.token))
      .send(SETTINGS);
    expectSuccess(settings);
    profileId = (await createBillingProfile(t, d.token, { name: 'Privatkunden', currency: 'EUR' })).id;
    vat19 = await createRate({ name: 'MwSt', percentage: '19' });
    vat7 = await createRate({ name: 'MwSt ermäßigt', percentage: '7' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /api/v1/invoices/{id}/pdf', () => {
    /** Fiber 49.99 and installation 20.00 at 19 %, router 5.00 at 7 %: 74.99 net, 13.30 + 0.35 tax, 88.64. */
    const LINES: [string, number, () => string[]][] = [
      ['Glasfaser 500 — Oktober', 4999, () => [vat19]],
      ['Router-Miete (FRITZ!Box 5590)', 500, () => [vat7]],
      ['Einrichtung & Anschluss', 2000, () => [vat19]],
    ];

    async function taxedInvoice(subscriberId: string): Promise<InvoiceRecord> {
      const issued = await invoice(
        subscriberId,
        LINES.map(([description, amount, rates]) => [description, amount, rates()]),
      );
      expect(issued).toMatchObject({ subtotal: 7499, tax_amount: 1365, total: 8864, status: 'open' });
      return issued;
    }

    it.each([
      [
        'Cyrillic',
        'Дмитрий Шостакович',
        { line1: 'ул. Тверская, д. 7', city: 'Москва', postal_code: '125009' },
      ],
      ['Greek', 'Αλέξανδρος Παπαδόπουλος', { line1: 'Οδός Ερμού 15', city: 'Αθήνα', postal_code: '10563' }],
      [
        'accented Latin',
        'Zoë Ñúñez-Größe',
        { line1: 'Große Bergstraße 7', city: 'Łódź', postal_code: '90-001' },
      ],
    ])(
      'should print a taxed invoice to a %s name: issuer, customer, number, lines, tax rows, total in de-DE, payment instructions',
      async (_script, name, address) => {
        const subscriberId = await subscriber(name, address);
        const issued = await taxedInvoice(subscriberId);
        const res = await get(`/api/v1/invoices/${issued.id}/pdf`);
        const pdf = pdfOf(res);
        expect(res.headers['content-disposition']).toContain(`${issued.number}.pdf`);
        const text = pdfPages(pdf).join('\n');
        expect(
          missingFrom(text, [
            'Invoice',
            issued.number!,
            name,
            address.line1,
            address.city,
            SETTINGS.legal_name,
            SETTINGS.address.line1,
            SETTINGS.tax_id,
            ...LINES.map(([description]) => description),
            // The tax rows: rate, what it taxed, the tax.
            `MwSt 19 % ${eur(6999)} ${eur(1330)}`,
            `MwSt ermäßigt 7 % ${eur(500)} ${eur(35)}`,
            `Subtotal ${eur(7499)}`,
            `Total ${eur(8864)}`,
            `Amount due ${eur(8864)}`,
            '31.12.2099',
            'Payment instructions',
            SETTINGS.payment_instructions,
          ]),
        ).toEqual([]);
      },
    );

    describe('bytes and ETag', () => {
      let issued: InvoiceRecord;
      let subscriberId: string;

      beforeAll(async () => {
        subscriberId = await subscriber('Zoë Ñúñez-Größe', { line1: 'Große Bergstraße 7', city: 'Hamburg' });
        issued = await taxedInvoice(subscriberId);
      });

      it('should give the same bytes and the same strong ETag on every GET, and 304 with no body for If-None-Match', async () => {
        const first = await get(`/api/v1/invoices/${issued.id}/pdf`);
        const second = await get(`/api/v1/invoices/${issued.id}/pdf`);
        const etag = first.headers.etag;
        expect(etag).toMatch(/^"[^"]+"$/);
        expect(second.headers.etag).toBe(etag);
        expect(pdfOf(second).equals(pdfOf(first))).toBe(true);
        expect(Number(first.headers['content-length'])).toBe(pdfOf(first).length);

        const notModified = await get(`/api/v1/invoices/${issued.id}/pdf`, d.token, {
          'If-None-Match': etag,
        });
        expect(notModified.status).toBe(304);
        expect(notModified.headers.etag).toBe(etag);
        expect(Buffer.isBuffer(notModified.body) ? notModified.body.length : -1).toBe(0);
        // Weak comparison, and a list naming it.
        expect(
          (await get(`/api/v1/invoices/${issued.id}/pdf`, d.token, { 'If-None-Match': `W/${etag}` })).status,
        ).toBe(304);
        expect(
          (await get(`/api/v1/invoices/${issued.id}/pdf`, d.token, { 'If-None-Match': `"other", ${etag}` }))
            .status,
        ).toBe(304);
        const other = await get(`/api/v1/invoices/${issued.id}/pdf`, d.token, { 'If-None-Match': '"other"' });
        expect(pdfOf(other).equals(pdfOf(first))).toBe(true);
      });

      it('should give new bytes once the invoice changes (a payment: amount paid and due)', async () => {
        const before = await get(`/api/v1/invoices/${issued.id}/pdf`);
        await createPayment(t, d.token, subscriberId, 3000, { currency: 'EUR' });
        expect(await getInvoice(t, d.token, issued.id)).toMatchObject({
          amount_paid: 3000,
          amount_due: 5864,
        });
        const after = await get(`/api/v1/invoices/${issued.id}/pdf`);
        expect(after.headers.etag).not.toBe(before.headers.etag);
        expect(
          (
            await get(`/api/v1/invoices/${issued.id}/pdf`, d.token, {
              'If-None-Match': before.headers.etag,
            })
          ).status,
        ).toBe(200);
        expect(
          missingFrom(pdfPages(pdfOf(after)).join('\n'), [
            `Amount paid ${eur(3000)}`,
            `Amount due ${eur(5864)}`,
          ]),
        ).toEqual([]);
      });
    });

    it('should answer 409 invalid_state_transition for a draft', async () => {
      const subscriberId = await subscriber('Ada Lovelace', { line1: 'x' });
      const draft = await invoice(subscriberId, [['Fiber', 1000, []]], { draft: true });
      expectError(await get(`/api/v1/invoices/${draft.id}/pdf`), 409, 'invalid_state_transition');
    });

    it("should answer 404 not_found for an unknown invoice and another tenant's", async () => {
      expectNotFound(await get(`/api/v1/invoices/${UNKNOWN_INVOICE}/pdf`));
      const other = await createTenantWithToken(t, BILLING_SCOPES);
      const theirs = await createInvoice(t, other.token, (await createSubscriber(t, other.token)).id, 1000);
      expectNotFound(await get(`/api/v1/invoices/${theirs.id}/pdf`));
      // Theirs to them: a tenant that set nothing is the issuer by its name, in en-US.
      const text = pdfPages(pdfOf(await get(`/api/v1/invoices/${theirs.id}/pdf`, other.token))).join('\n');
      expect(missingFrom(text, [`Tenant ${other.slug}`, theirs.number!, 'Total $10.00'])).toEqual([]);
      expect(text).not.toContain(SETTINGS.legal_name);
    });

    it('should print a void invoice as void, with its reason', async () => {
      const subscriberId = await subscriber('Ada Lovelace', { line1: 'x' });
      const issued = await invoice(subscriberId, [['Fiber', 1000, []]]);
      expectSuccess(
        await request(t.http)
          .post(`/api/v1/invoices/${issued.id}/void`)
          .set(bearer(d.token))
          .send({ reason: 'falsche Adresse' }),
      );
      const text = pdfPages(pdfOf(await get(`/api/v1/invoices/${issued.id}/pdf`))).join('\n');
      expect(missingFrom(text, [issued.number!, 'Void: falsche Adresse'])).toEqual([]);
    });

    it('should need billing:read: 200 with it alone, 403 without, 401 without a token', async () => {
      const subscriberId = await subscriber('Ada Lovelace', { line1: 'x' });
      const issued = await invoice(subscriberId, [['Fiber', 1000, []]]);
      const reader = await request(t.http)
        .post('/api/v1/tokens')
        .set(bearer(t.adminToken))
        .send({ tenant: d.tenantId, name: 'reader', scopes: ['billing:read'] });
      const stranger = await request(t.http)
        .post('/api/v1/tokens')
        .set(bearer(t.adminToken))
        .send({ tenant: d.tenantId, name: 'stranger', scopes: ['subscribers:read'] });
      pdfOf(await get(`/api/v1/invoices/${issued.id}/pdf`, reader.body.data.token as string));
      expectError(
        await get(`/api/v1/invoices/${issued.id}/pdf`, stranger.body.data.token as string),
        403,
        'insufficient_scope',
      );
      expectError(
        await binary(request(t.http).get(`/api/v1/invoices/${issued.id}/pdf`)),
        401,
        'authentication_required',
      );
    });
  });

  describe('GET /api/v1/credit-notes/{id}/pdf', () => {
    it('should print the number, the invoice it corrects, the reason, its lines and total; same bytes, 304', async () => {
      const subscriberId = await subscriber('Дмитрий Шостакович', {
        line1: 'ул. Тверская, д. 7',
        city: 'Москва',
      });
      const issued = await invoice(subscriberId, [
        ['Glasfaser 500 — Oktober', 4999, [vat19]],
        ['Router-Miete (FRITZ!Box 5590)', 500, [vat7]],
      ]);
      const reason = 'Störung vom 3.–5. Oktober — Сбой сети';
      const note = await creditNote(issued.id, { reason, lines: [{ line: 1 }] });
      expect(note.total).toBe(535);

      const res = await get(`/api/v1/credit-notes/${note.id}/pdf`);
      const pdf = pdfOf(res);
      expect(res.headers['content-disposition']).toContain(`${note.number}.pdf`);
      expect(
        missingFrom(pdfPages(pdf).join('\n'), [
          'Credit note',
          note.number,
          `Original invoice ${issued.number}`,
          reason,
          'Дмитрий Шостакович',
          SETTINGS.legal_name,
          'Router-Miete (FRITZ!Box 5590)',
          `MwSt ermäßigt 7 % ${eur(500)} ${eur(35)}`,
          `Total ${eur(535)}`,
        ]),
      ).toEqual([]);

      const again = await get(`/api/v1/credit-notes/${note.id}/pdf`);
      expect(again.headers.etag).toBe(res.headers.etag);
      expect(pdfOf(again).equals(pdf)).toBe(true);
      const notModified = await get(`/api/v1/credit-notes/${note.id}/pdf`, d.token, {
        'If-None-Match': res.headers.etag,
      });
      expect(notModified.status).toBe(304);
      expect(Buffer.isBuffer(notModified.body) ? notModified.body.length : -1).toBe(0);
    });

    it('should answer 404 not_found for an unknown credit note', async () => {
      expectNotFound(await get(`/api/v1/credit-notes/${UNKNOWN_CREDIT_NOTE}/pdf`));
    });
  });

  describe('GET /api/v1/subscribers/{id}/statement', () => {
    let subscriberId: string;
    let invoices: InvoiceRecord[];
    let cn1: CreditNoteRecord;
    let cn2: CreditNoteRecord;
    let p2: TransactionRecord;
    let goodwill: TransactionRecord;
    let expected: [kind: string, reference: string, source: string, amount: number][];

    beforeAll(async () => {
      subscriberId = await subscriber('Αλέξανδρος Παπαδόπουλος', { line1: 'Οδός Ερμού 15', city: 'Αθήνα' });
      // 1. An invoice, paid in part by a payment with a bank reference, and a credit note against it.
      const i1 = await invoice(subscriberId, [['Glasfaser 500', 10000, []]]);
      const p1 = await createPayment(t, d.token, subscriberId, 4000, {
        currency: 'EUR',
        reference: 'BANK-REF-0001',
        method: 'bank_transfer',
      });
      cn1 = await creditNote(i1.id, { reason: 'Störung', amount: 1000 });
      // 2. An invoice paid by a PSP payment (its external id), part of it credited and refunded through it.
      const i2 = await invoice(subscriberId, [['Static IP', 3000, []]], { due_date: '2099-06-30' });
      p2 = await byHand.createPayment(t, d.token, subscriberId, 3000, {
        currency: 'EUR',
        external_id: 'psp-statement-0002',
      });
      expectSuccess(
        await allocate(t, d.token, p2.id, { allocations: [{ invoice_id: i2.id, amount: 3000 }] }),
      );
      cn2 = await creditNote(i2.id, { reason: 'Kulanz', amount: 500, refund: true, payment_id: p2.id });
      // 3. An invoice written off.
      const i3 = await invoice(subscriberId, [['Umzug', 2000, []]]);
      const writeOff = await request(t.http)
        .post(`/api/v1/invoices/${i3.id}/write-off`)
        .set(bearer(d.token))
        .send({ reason: 'unbekannt verzogen' });
      expectSuccess(writeOff);
      // 4. A debit (a pending charge until invoiced), invoiced at once with a charge.
      await createTransaction(t, d.token, subscriberId, {
        kind: 'debit',
        source: 'adjustment',
        amount: 700,
        currency: 'EUR',
        reference: 'DEBIT-1',
        description: 'Techniker-Anfahrt',
      });
      const charge = await request(t.http)
        .post(`/api/v1/subscribers/${subscriberId}/charges`)
        .set(bearer(d.token))
        .send({ description: 'Techniker-Einsatz', amount: 300, currency: 'EUR', invoice_now: true });
      expectSuccess(charge, 201);
      const i4 = (
        await listAll<InvoiceRecord>(t, d.token, '/api/v1/invoices', { subscriber_id: subscriberId })
      )[0];
      expect(i4.lines.map((line) => [line.description, line.amount])).toEqual(
        expect.arrayContaining([
          ['Techniker-Anfahrt', 700],
          ['Techniker-Einsatz', 300],
        ]),
      );
      expect(i4.total).toBe(1000);
      // 5. An invoice voided.
      const i5 = await invoice(subscriberId, [['Falsch', 1500, []]]);
      expectSuccess(await voidInvoice(t, d.token, i5.id));
      // 6. A goodwill credit, left unallocated.
      goodwill = await byHand.createTransaction(t, d.token, subscriberId, {
        kind: 'credit',
        source: 'adjustment',
        amount: 250,
        currency: 'EUR',
        reference: 'GOODWILL-1',
      });
      invoices = [i1, i2, i3, i4, i5];
      expected = [
        ['invoice', i1.number!, i1.id, 10000],
        ['payment', 'BANK-REF-0001', p1.id, -4000],
        ['credit_note', cn1.number, cn1.credit_transaction_id, -1000],
        ['invoice', i2.number!, i2.id, 3000],
        ['payment', 'psp-statement-0002', p2.id, -3000],
        ['credit_note', cn2.number, cn2.credit_transaction_id, -500],
        ['refund', cn2.number, cn2.refund_transaction_id!, 500],
        ['invoice', i3.number!, i3.id, 2000],
        ['write_off', i3.number!, i3.id, -2000],
        ['invoice', i4.number!, i4.id, 1000],
        ['invoice', i5.number!, i5.id, 1500],
        ['invoice_voided', i5.number!, i5.id, -1500],
        ['credit', 'GOODWILL-1', goodwill.id, -250],
      ];
    });

    it('should list every entry in order with its kind, reference and running balance, from 0 to the balance', async () => {
      const whole = await statement(subscriberId);
      expect(whole).toMatchObject({
        subscriber_id: subscriberId,
        currency: 'EUR',
        from: null,
        to: new Date().toISOString().slice(0, 10),
        opening_balance: 0,
      });
      expect(whole.entries.map((entry) => [entry.kind, entry.reference, entry.source_id])).toEqual(
        expected.map(([kind, reference, source]) => [kind, reference, source]),
      );
      expect(whole.entries.map((entry) => entry.debit - entry.credit)).toEqual(expected.map((row) => row[3]));
      for (const entry of whole.entries) {
        expect(entry.debit === 0 || entry.credit === 0).toBe(true);
        expect(entry.description).toContain(entry.reference);
      }
      let running = 0;
      expect(whole.entries.map((entry) => entry.balance)).toEqual(expected.map((row) => (running += row[3])));
      expect(whole.total_debits).toBe(18000);
      expect(whole.total_credits).toBe(12250);
      expect(whole.closing_balance).toBe(5750);
      expect(whole.closing_balance).toBe(whole.opening_balance + whole.total_debits - whole.total_credits);
    });

    it('should agree with the ledger: closing = GET /balance = Σ GET /ledger, entry by entry', async () => {
      const whole = await statement(subscriberId);
      const ledger = await ledgerOf(subscriberId);
      expect(ledger.map((entry) => [entry.source_id, entry.amount, entry.balance_after])).toEqual(
        whole.entries.map((entry) => [entry.source_id, entry.debit - entry.credit, entry.balance]),
      );
      const balance = (await getBalance(t, d.token, subscriberId, 'EUR'))!.balance;
      expect({
        closing: whole.closing_balance,
        ledgerSum: ledger.reduce((sum, entry) => sum + entry.amount, 0),
      }).toEqual({ closing: balance, ledgerSum: balance });
    });

    it('should agree with the ledger for every subscriber of the suite', async () => {
      const subscribers = await listAll<{ id: string }>(t, d.token, '/api/v1/subscribers');
      expect(subscribers.length).toBeGreaterThan(5);
      for (const { id } of subscribers) {
        const ledger = await ledgerOf(id);
        const balance = (await getBalance(t, d.token, id, 'EUR'))?.balance ?? 0;
        const sum = ledger.reduce((total, entry) => total + entry.amount, 0);
        const closing = (await statement(id)).closing_balance;
        expect({ id, closing, sum }).toEqual({ id, closing: balance, sum: balance });
      }
    });

    it('should print the statement: every reference, the opening and the closing balance; same bytes, 304', async () => {
      const res = await get(`/api/v1/subscribers/${subscriberId}/statement/pdf`);
      const pdf = pdfOf(res);
      // A reference too long for its column wraps after a hyphen ("psp-" / "statement-0002"): read it joined.
      const text = joinHyphenated(pdfPages(pdf).join('\n'));
      expect(
        missingFrom(text, [
          'Statement',
          'Αλέξανδρος Παπαδόπουλος',
          SETTINGS.legal_name,
          ...new Set(expected.map(([, reference]) => reference)),
          `Opening balance ${eur(0)}`,
          `Closing balance ${eur(5750)}`,
        ]),
      ).toEqual([]);
      const again = await get(`/api/v1/subscribers/${subscriberId}/statement/pdf`);
      expect(again.headers.etag).toBe(res.headers.etag);
      expect(pdfOf(again).equals(pdf)).toBe(true);
      const notModified = await get(`/api/v1/subscribers/${subscriberId}/statement/pdf`, d.token, {
        'If-None-Match': res.headers.etag,
      });
      expect(notModified.status).toBe(304);
    });

    describe('a from/to window', () => {
      const D1 = '2025-03-01';
      const D2 = '2025-03-02';
      const D3 = '2025-03-03';
      /** The running balance after the first n entries. */
      const after = (n: number) => expected.slice(0, n).reduce((sum, row) => sum + row[3], 0);

      beforeAll(async () => {
        // The ledger is dated by the wall clock: its entries are moved back to three past days, in the same order
        // (entries 1–4 on D1, 5–9 on D2, 10–13 on D3), so that a window has entries before, in and after it.
        const ledger = await ledgerOf(subscriberId);
        expect(ledger).toHaveLength(expected.length);
        for (const [index, entry] of ledger.entries()) {
          const day = index < 4 ? D1 : index < 9 ? D2 : D3;
          await t.dataSource.query(
            `UPDATE ledger_entries SET created_at = $1 WHERE id = $2 AND subscriber_id = $3`,
            [new Date(`${day}T08:00:${String(index).padStart(2, '0')}.000Z`), entry.id, subscriberId],
          );
        }
      });

      it('should open with the Σ of the earlier entries and close with the balance at the end of `to`', async () => {
        const middle = await statement(subscriberId, { from: D2, to: D2 });
        expect(middle).toMatchObject({
          from: D2,
          to: D2,
          opening_balance: after(4),
          closing_balance: after(9),
        });
        expect(middle.entries.map((entry) => entry.source_id)).toEqual(
          expected.slice(4, 9).map((row) => row[2]),
        );
        expect(middle.entries.map((entry) => entry.date.slice(0, 10))).toEqual(Array(5).fill(D2));
        expect(middle.entries.at(-1)!.balance).toBe(middle.closing_balance);
        expect(middle.closing_balance).toBe(
          middle.opening_balance + middle.total_debits - middle.total_credits,
        );

        const ledger = await ledgerOf(subscriberId);
        const earlier = ledger.filter((entry) => entry.created_at < `${D2}T00:00:00.000Z`);
        expect(middle.opening_balance).toBe(earlier.reduce((sum, entry) => sum + entry.amount, 0));

        const fromD2 = await statement(subscriberId, { from: D2 });
        expect(fromD2).toMatchObject({ opening_balance: after(4), closing_balance: 5750 });
        expect(fromD2.entries).toHaveLength(9);

        const untilD1 = await statement(subscriberId, { to: D1 });
        expect(untilD1).toMatchObject({ from: null, to: D1, opening_balance: 0, closing_balance: after(4) });
        expect(untilD1.entries.map((entry) => entry.kind)).toEqual([
          'invoice',
          'payment',
          'credit_note',
          'invoice',
        ]);

        const lastDay = await statement(subscriberId, { from: D3, to: D3 });
        expect(lastDay).toMatchObject({ opening_balance: after(9), closing_balance: 5750 });

        const empty = await statement(subscriberId, { from: '2025-03-04' });
        expect(empty).toMatchObject({ opening_balance: 5750, entries: [], closing_balance: 5750 });
        expect(empty.total_debits + empty.total_credits).toBe(0);
      });

      it("should print the window's entries and its closing balance", async () => {
        const text = joinHyphenated(
          pdfPages(
            pdfOf(await get(`/api/v1/subscribers/${subscriberId}/statement/pdf?from=${D2}&to=${D2}`)),
          ).join('\n'),
        );
        expect(
          missingFrom(text, [
            'psp-statement-0002',
            cn2.number,
            invoices[2].number!,
            `Opening balance ${eur(after(4))}`,
            `Closing balance ${eur(after(9))}`,
          ]),
        ).toEqual([]);
        expect(text).not.toContain('GOODWILL-1');
        expect(text).not.toContain('BANK-REF-0001');
      });
    });

    it('should answer 400 invalid_query for from after to, or a date that is none', async () => {
      const res = await request(t.http)
        .get(`/api/v1/subscribers/${subscriberId}/statement`)
        .query({ from: '2025-03-05', to: '2025-03-04' })
        .set(bearer(d.token));
      expectError(res, 400, 'invalid_query', 'from');
      expectError(
        await get(`/api/v1/subscribers/${subscriberId}/statement/pdf?from=2025-03-05&to=2025-03-04`),
        400,
        'invalid_query',
        'from',
      );
      expectError(
        await request(t.http)
          .get(`/api/v1/subscribers/${subscriberId}/statement`)
          .query({ from: '2025-02-30' })
          .set(bearer(d.token)),
        400,
        'invalid_query',
        'from',
      );
    });

    it("should be in the profile's currency, else the ledger's only one, else the one named (400 invalid_query)", async () => {
      const bare = await createTenantWithToken(t, BILLING_SCOPES);
      const someone = (await createSubscriber(t, bare.token)).id;
      const read = (query: Record<string, string> = {}) =>
        request(t.http).get(`/api/v1/subscribers/${someone}/statement`).query(query).set(bearer(bare.token));
      expectError(await read(), 400, 'invalid_query', 'currency');
      expectSuccess(await read({ currency: 'USD' }));
      expect((await read({ currency: 'USD' })).body.data).toMatchObject({ entries: [], closing_balance: 0 });
      await createInvoice(t, bare.token, someone, 1200);
      expect((await read()).body.data).toMatchObject({ currency: 'USD', closing_balance: 1200 });
      await createInvoice(t, bare.token, someone, 800, { currency: 'EUR' });
      expectError(await read(), 400, 'invalid_query', 'currency');
      expect((await read({ currency: 'EUR' })).body.data).toMatchObject({
        currency: 'EUR',
        closing_balance: 800,
      });
      // The profile's currency when it has one, whatever the ledger holds.
      expect((await statement(subscriberId)).currency).toBe('EUR');
    });

    it('should answer 404 not_found for an unknown subscriber, and need billing:read', async () => {
      expectNotFound(
        await request(t.http).get(`/api/v1/subscribers/${UNKNOWN_SUBSCRIBER}/statement`).set(bearer(d.token)),
      );
      expectNotFound(await get(`/api/v1/subscribers/${UNKNOWN_SUBSCRIBER}/statement/pdf`));
      const stranger = await createTenantWithToken(t, ['subscribers:read']);
      expectError(
        await request(t.http)
          .get(`/api/v1/subscribers/${subscriberId}/statement`)
          .set(bearer(stranger.token)),
        403,
        'insufficient_scope',
      );
    });
  });
});
