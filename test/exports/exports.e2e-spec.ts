import request from 'supertest';
import { csvHeader, csvRecords } from '../../src/common/csv/csv-write';
import { SUBSCRIBER_COLUMNS } from '../../src/exports/columns';
import { SubscribersService, type SubscriberDto } from '../../src/subscribers';
import { BILLING_SCOPES, createInvoice, createPayment, createTransaction } from '../support/billing-factory';
import { csvObjects, parseCsv } from '../support/csv-read';
import { expectError, expectNotFound } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber } from '../support/subscriber-factory';
import { appSuite, createTenantWithToken, type TenantWithToken, type TestApp } from '../support/test-app';

const EXPORTS = ['subscribers', 'invoices', 'transactions', 'ledger'] as const;
const HOSTILE_NAMES = [
  "=cmd|' /C calc'!A0",
  '+1 (555) 0100',
  '-2+3',
  '@SUM(A1:A9)',
  'Ada "The Countess" Lovelace',
  'Lovelace, Ada',
  'two\r\nlines',
  'Zoë Ørsted 渡辺 🚀',
];

/** GET an export: a CSV body as its text, an error's JSON envelope parsed. */
function getExport(t: TestApp, token: string, name: string, query: Record<string, string> = {}) {
  return request(t.http)
    .get(`/api/v1/exports/${name}.csv`)
    .query(query)
    .set(bearer(token))
    .buffer(true)
    .parse((res, done) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        done(
          null,
          String(res.headers['content-type']).startsWith('application/json') ? JSON.parse(text) : text,
        ),
      );
    });
}

/** The rows of an export that answered 200 as CSV. */
async function exported(t: TestApp, token: string, name: string, query: Record<string, string> = {}) {
  const res = await getExport(t, token, name, query);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
  return csvObjects(res.body as string);
}

/** `count` subscribers of the tenant straight into the table (as test/api/list-indexes does), a millisecond apart. */
async function seedSubscribers(t: TestApp, tenantId: string, count: number): Promise<void> {
  await t.dataSource.query(
    `INSERT INTO subscribers (tenant_id, id, external_id, full_name, email, email_normalized, phone, status,
       suspension_reason, billing_profile_id, address, metadata, created_at, updated_at)
     SELECT $1, 'sub_EXP' || substr(md5($1 || g::text), 1, 23), NULL, 'Seeded ' || g, NULL, NULL, NULL, 'active',
       NULL, NULL, NULL, '{}', now() - g * interval '1 ms', now()
     FROM generate_series(1, $2::int) AS g`,
    [tenantId, count],
  );
}

describe('Exports (e2e)', () => {
  let t: TestApp;
  let a: TenantWithToken;
  let b: TenantWithToken;
  const hostileIds: string[] = [];
  let payer: string;
  appSuite(async (app) => {
    t = app;
    a = await createTenantWithToken(t, BILLING_SCOPES);
    b = await createTenantWithToken(t, BILLING_SCOPES);
    for (const full_name of HOSTILE_NAMES) {
      hostileIds.push((await createSubscriber(t, a.token, { full_name })).id);
    }
    payer = hostileIds[0];
    await createSubscriber(t, b.token, { full_name: 'Tenant B only' });
  });

  describe('authentication and scopes', () => {
    it.each(EXPORTS)('should require authentication (%s)', async (name) => {
      const res = await request(t.http).get(`/api/v1/exports/${name}.csv`);
      expectError(res, 401, 'authentication_required');
    });

    it('should refuse subscribers without subscribers:read and billing exports without billing:read', async () => {
      const billingOnly = await createTenantWithToken(t, ['billing:read']);
      const subscribersOnly = await createTenantWithToken(t, ['subscribers:read']);
      expectError(await getExport(t, billingOnly.token, 'subscribers'), 403, 'insufficient_scope');
      for (const name of ['invoices', 'transactions'] as const) {
        expectError(await getExport(t, subscribersOnly.token, name), 403, 'insufficient_scope');
      }
      expectError(
        await getExport(t, subscribersOnly.token, 'ledger', { subscriber_id: payer }),
        403,
        'insufficient_scope',
      );
      expect((await getExport(t, subscribersOnly.token, 'subscribers')).status).toBe(200);
    });
  });

  describe('subscribers.csv', () => {
    it('should answer an attachment named for today with a header record and every subscriber', async () => {
      const res = await getExport(t, a.token, 'subscribers');
      expect(res.status).toBe(200);
      const today = new Date().toISOString().slice(0, 10).replace(/-/g, '');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="subscribers-${today}.csv"`);
      expect(res.headers.etag).toBeUndefined();
      const [header, ...rows] = parseCsv(res.body as string);
      expect(header).toEqual(expect.arrayContaining(['id', 'full_name', 'status', 'created_at']));
      expect(header.filter((name) => /password|secret|token/i.test(name))).toEqual([]);
      expect(rows).toHaveLength(HOSTILE_NAMES.length);
    });

    it('should give back every hostile name, quoted, with a formula start neutralised by a leading quote', async () => {
      const res = await getExport(t, a.token, 'subscribers');
      const names = new Map(csvObjects(res.body as string).map((row) => [row.id, row.full_name]));
      HOSTILE_NAMES.forEach((name, i) => {
        expect(names.get(hostileIds[i])).toBe(/^[=+\-@\t\r]/.test(name) ? `'${name}` : name);
      });
      expect(res.body as string).toContain(`"'=cmd|' /C calc'!A0"`);
    });

    it('should apply the list filters: status, external id, email, created range', async () => {
      const ref = `crm-${Date.now()}`;
      const filtered = await createSubscriber(t, a.token, {
        full_name: 'Filtered',
        external_id: ref,
        email: `${ref}@example.net`,
        status: 'prospect',
      });
      expect((await exported(t, a.token, 'subscribers', { external_id: ref })).map((r) => r.id)).toEqual([
        filtered.id,
      ]);
      expect(
        (await exported(t, a.token, 'subscribers', { email: `${ref.toUpperCase()}@EXAMPLE.NET` })).map(
          (r) => r.id,
        ),
      ).toEqual([filtered.id]);
      const prospects = await exported(t, a.token, 'subscribers', { status: 'prospect' });
      expect(prospects.map((r) => r.id)).toContain(filtered.id);
      expect(new Set(prospects.map((r) => r.status))).toEqual(new Set(['prospect']));
      const later = await exported(t, a.token, 'subscribers', { created_gte: filtered.created_at });
      expect(later.map((r) => r.id)).toEqual([filtered.id]);
      const before = await exported(t, a.token, 'subscribers', { created_lt: filtered.created_at });
      expect(before.map((r) => r.id)).not.toContain(filtered.id);
    });

    it('should refuse page parameters and a bad filter with the JSON envelope of the list', async () => {
      expectError(await getExport(t, a.token, 'subscribers', { limit: '10' }), 400, 'invalid_query', 'limit');
      expectError(
        await getExport(t, a.token, 'subscribers', { starting_after: 'x' }),
        400,
        'invalid_query',
        'starting_after',
      );
      const list = await request(t.http).get('/api/v1/subscribers?status=gone').set(bearer(a.token));
      const res = await getExport(t, a.token, 'subscribers', { status: 'gone' });
      expectError(res, list.status, list.body.error.code, 'status');
    });

    it('should write what csv-write writes of the list items, byte for byte, whoever renders the page', async () => {
      const c = await createTenantWithToken(t, ['subscribers:read', 'subscribers:write']);
      const odd = [
        // Array-index keys (JavaScript writes them first, in numeric order), quotes, a newline, other scripts.
        { '10': 'ten', b: 'say "hi"\nthere', '2': true, a: null, z: 0.5, ключ: 'Zoë 🚀', '4294967295': -12 },
        { plan: 'fiber-500', seats: 123456789012345 },
        {},
      ];
      for (const [i, metadata] of odd.entries()) {
        await createSubscriber(t, c.token, {
          full_name: HOSTILE_NAMES[i],
          phone: '+15550100' + String(i).padStart(3, '0'),
          address: { line1: '=1 "Main", St', city: '-Springfield', state: 'IL', postal_code: '62701' },
          metadata,
        });
      }
      const expected = async () => {
        const list = await request(t.http)
          .get('/api/v1/subscribers?limit=100')
          .set(bearer(c.token))
          .expect(200);
        return (
          csvHeader(SUBSCRIBER_COLUMNS) + csvRecords(SUBSCRIBER_COLUMNS, list.body.data as SubscriberDto[])
        );
      };
      // Postgres writes these pages (every value is one it writes as csv-write does).
      expect((await getExport(t, c.token, 'subscribers')).body).toBe(await expected());
      // A number JavaScript writes in exponent form: that page is written from its JSON items, to the same bytes.
      await createSubscriber(t, c.token, {
        full_name: 'Tiny',
        metadata: { tiny: 0.0000001, tinier: -2.5e-10 },
      });
      expect((await getExport(t, c.token, 'subscribers')).body).toBe(await expected());
    });

    it("should never show another tenant's subscribers", async () => {
      const rows = await exported(t, b.token, 'subscribers');
      expect(rows.map((r) => r.full_name)).toEqual(['Tenant B only']);
    });
  });

  describe('billing exports', () => {
    let invoiceId: string;
    let paymentId: string;
    beforeAll(async () => {
      invoiceId = (await createInvoice(t, a.token, payer, 1000)).id;
      paymentId = (await createPayment(t, a.token, payer, 400, { reference: '=HYPERLINK("http://x")' })).id;
      await createTransaction(t, a.token, hostileIds[1], { kind: 'credit', amount: 250 });
    });

    it('should export invoices with money as integer minor units beside the currency', async () => {
      const rows = await exported(t, a.token, 'invoices', { subscriber_id: payer });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        id: invoiceId,
        currency: 'USD',
        total: '1000',
        amount_paid: '400',
        amount_due: '600',
        status: 'partially_paid',
        overdue: 'false',
        voided_at: '',
      });
      expect(await exported(t, a.token, 'invoices', { status: 'void' })).toEqual([]);
      expect(await exported(t, b.token, 'invoices')).toEqual([]);
    });

    it('should export transactions with their filters, a formula in a reference neutralised', async () => {
      const payments = await exported(t, a.token, 'transactions', { kind: 'payment' });
      expect(payments.map((r) => r.id)).toEqual([paymentId]);
      expect(payments[0]).toMatchObject({
        amount: '400',
        currency: 'USD',
        reference: `'=HYPERLINK("http://x")`,
      });
      expect((await exported(t, a.token, 'transactions')).map((r) => r.kind).sort()).toEqual([
        'credit',
        'payment',
      ]);
      expect(await exported(t, b.token, 'transactions')).toEqual([]);
    });

    it("should export a subscriber's ledger, a negative amount staying a bare number", async () => {
      const res = await getExport(t, a.token, 'ledger', { subscriber_id: payer });
      expect(res.status).toBe(200);
      const rows = csvObjects(res.body as string);
      expect(rows.map((r) => [r.type, r.amount, r.balance_after, r.subscriber_id])).toEqual([
        ['payment', '-400', '600', payer],
        ['invoice', '1000', '1000', payer],
      ]);
      expect(res.body as string).toMatch(/,payment,USD,-400,600,/);
    });

    it("should answer 404 for another tenant's subscriber and 400 without a subscriber", async () => {
      expectNotFound(await getExport(t, b.token, 'ledger', { subscriber_id: payer }));
      const missing = await getExport(t, a.token, 'ledger');
      expect(missing.status).toBe(400);
      expect(missing.body.error.field).toBe('subscriber_id');
    });
  });

  describe('a large export', () => {
    const ROWS = 20_000;
    let big: TenantWithToken;
    beforeAll(async () => {
      big = await createTenantWithToken(t, ['subscribers:read']);
      await seedSubscribers(t, big.tenantId, ROWS);
    });

    it('should stream every row exactly once, newest first', async () => {
      const rows = await exported(t, big.token, 'subscribers');
      expect(rows).toHaveLength(ROWS);
      expect(new Set(rows.map((r) => r.id)).size).toBe(ROWS);
      expect(rows[0].full_name).toBe('Seeded 1');
      expect(rows[ROWS - 1].full_name).toBe(`Seeded ${ROWS}`);
    });

    it('should end an export that fails after its first byte as an incomplete transfer, not a short file', async () => {
      const service = t.app.get(SubscribersService);
      const csvPage = service.csvPage.bind(service);
      const spy = jest
        .spyOn(service, 'csvPage')
        .mockImplementationOnce(csvPage)
        .mockImplementationOnce(() => Promise.reject(new Error('database went away')));
      try {
        const outcome = await new Promise<{ received: string; error: string | null }>((resolve) => {
          let received = '';
          const req = request(t.http)
            .get('/api/v1/exports/subscribers.csv')
            .set(bearer(big.token))
            .buffer(true)
            .parse((res, done) => {
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => (received += chunk));
              res.on('end', () => done(null, received));
              res.on('error', (error) => done(error, received));
              res.on('aborted', () => done(new Error('aborted'), received));
            });
          req.then(
            () => resolve({ received, error: null }),
            (error: Error) => resolve({ received, error: error.message }),
          );
        });
        expect(outcome.error).not.toBeNull();
        // The first page arrived whole; what follows never did.
        expect(parseCsv(outcome.received)).toHaveLength(1001);
      } finally {
        spy.mockRestore();
      }
    });

    it('should stop reading pages when the client goes away', async () => {
      const service = t.app.get(SubscribersService);
      const spy = jest.spyOn(service, 'csvPage');
      try {
        await new Promise<void>((resolve, reject) => {
          const req = request(t.http)
            .get('/api/v1/exports/subscribers.csv')
            .set(bearer(big.token))
            .buffer(true)
            .parse((res, _done: (err: Error | null, body: unknown) => void) => {
              // superagent hands a parser the response stream itself (its type says the wrapper).
              (res as unknown as NodeJS.ReadableStream).once('data', () => {
                req.abort();
                resolve();
              });
            });
          req.catch((error: Error) => (error.message === 'Aborted' ? undefined : reject(error)));
        });
        const pages = ROWS / 1000;
        // The whole export again: as long as the abandoned one would take to read all its pages, had it read on.
        expect(await exported(t, big.token, 'subscribers')).toHaveLength(ROWS);
        const bigCalls = spy.mock.calls.filter(([tenantId]) => tenantId === big.tenantId).length;
        // The whole export read its `pages`; the abandoned one a few at most (the one in flight, one buffered).
        expect(bigCalls).toBeGreaterThanOrEqual(pages + 1);
        expect(bigCalls).toBeLessThanOrEqual(pages + 3);
      } finally {
        spy.mockRestore();
      }
    });
  });
});
