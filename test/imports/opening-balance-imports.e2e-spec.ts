import request from 'supertest';
import { expectError, expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  type CurrencyBalance,
  getBalances,
  type InvoiceRecord,
  type TransactionRecord,
} from '../support/billing-factory';
import { importAndWait, importErrors, postImport, toCsv } from '../support/import-factory';
import { createBillingProfile, createSubscriber, listEvents } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

const HEADER = ['subscriber_external_id', 'amount', 'currency', 'description', 'date'];
const BALANCES = { kind: 'opening_balances' };

/** Issue #32 item 2: POST /imports?kind=opening_balances, posted through billing's transactions and invoices. */
describe('Imports: opening balances', () => {
  let t: TestApp;
  let owner: TenantWithToken;
  let taxRateId: string;

  beforeAll(async () => {
    t = await startTestApp({ IMPORT_POLL_MS: '50', IMPORT_BATCH_SIZE: '4' });
    owner = await createTenantWithToken(t, ['subscribers:*', 'billing:*', 'events:read']);
    const rate = await request(t.http)
      .post('/api/v1/tax-rates')
      .set(bearer(owner.token))
      .send({ name: 'VAT', percentage: '20.0000' })
      .expect(201);
    taxRateId = rate.body.data.id as string;
  });
  afterAll(() => t.close());

  /** A subscriber billed in USD through a profile that taxes at 20% by default, paid within 14 days. */
  async function newSubscriber(token = owner.token) {
    const profile = await createBillingProfile(t, token, {
      currency: 'USD',
      payment_terms_days: 14,
      ...(token === owner.token ? { tax_rate_ids: [taxRateId] } : {}),
    });
    return createSubscriber(t, token, { status: 'active', billing_profile_id: profile.id });
  }

  async function list<T>(path: string, query: Record<string, string>, token = owner.token): Promise<T[]> {
    const res = await request(t.http)
      .get(`/api/v1/${path}`)
      .query({ limit: '100', ...query })
      .set(bearer(token));
    expectList(res);
    return res.body.data as T[];
  }

  const usd = (balances: CurrencyBalance[]) => balances.find((row) => row.currency === 'USD');

  it('posts what is owed as an untaxed invoice and a credit as a credit; the balance shows both', async () => {
    const owes = await newSubscriber();
    const owed = await newSubscriber();
    const square = await newSubscriber();
    const csv = toCsv(HEADER, [
      [owes.external_id!, 5000, 'USD', 'Carried over from Splynx', '2026-10-31'],
      [owed.external_id!, -2500, 'USD', null, null],
      [square.external_id!, 0, 'USD', null, null],
    ]);
    const job = await importAndWait(t, owner.token, csv, 'text/csv', BALANCES);
    expect(job).toMatchObject({
      kind: 'opening_balances',
      status: 'completed',
      created: 2,
      unchanged: 1,
      failed: 0,
    });

    expect(usd(await getBalances(t, owner.token, owes.id))).toMatchObject({
      balance: 5000,
      open_invoices_due: 5000,
      unallocated_credit: 0,
    });
    const [debit] = await list<TransactionRecord>('transactions', { subscriber_id: owes.id });
    expect(debit).toMatchObject({
      kind: 'debit',
      source: 'adjustment',
      amount: 5000,
      currency: 'USD',
      external_id: `opening_balance:${owes.id}:USD`,
      description: 'Carried over from Splynx',
      occurred_at: '2026-10-31T00:00:00.000Z',
    });
    const [invoice] = await list<InvoiceRecord>('invoices', { subscriber_id: owes.id });
    expect(invoice).toMatchObject({ status: 'open', total: 5000, tax_amount: 0, amount_due: 5000 });
    expect(invoice.lines).toHaveLength(1);
    expect(invoice.lines[0]).toMatchObject({ description: 'Carried over from Splynx', amount: 5000 });
    expect(invoice.due_date > invoice.created_at.slice(0, 10)).toBe(true);
    const types = (await listEvents(t, owner.token, {})).map((event) => event.type);
    expect(types).toEqual(
      expect.arrayContaining(['transaction.created', 'charge.created', 'invoice.created']),
    );

    expect(usd(await getBalances(t, owner.token, owed.id))).toMatchObject({
      balance: -2500,
      unallocated_credit: 2500,
    });
    const [credit] = await list<TransactionRecord>('transactions', { subscriber_id: owed.id });
    expect(credit).toMatchObject({ kind: 'credit', amount: 2500, description: 'Opening balance' });

    expect(usd(await getBalances(t, owner.token, square.id))?.balance ?? 0).toBe(0);
    expect(await list('transactions', { subscriber_id: square.id })).toEqual([]);
  });

  it('posts once per subscriber and currency: again, nothing; another amount is refused', async () => {
    const subscriber = await newSubscriber();
    const credited = await newSubscriber();
    const lines = (amount: number) =>
      [
        { subscriber_external_id: subscriber.external_id, amount, currency: 'USD' },
        { subscriber_external_id: credited.external_id, amount: -700, currency: 'USD' },
      ]
        .map((body) => JSON.stringify(body))
        .join('\n');
    const first = await importAndWait(t, owner.token, lines(1200), 'application/x-ndjson', BALANCES);
    expect(first).toMatchObject({ created: 2, updated: 0, unchanged: 0, failed: 0 });
    const again = await importAndWait(t, owner.token, lines(1200), 'application/x-ndjson', BALANCES);
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 2, failed: 0 });
    const changed = await importAndWait(t, owner.token, lines(1300), 'application/x-ndjson', BALANCES);
    expect(changed).toMatchObject({ created: 0, unchanged: 1, failed: 1 });
    expect(
      (await importErrors(t, owner.token, changed.id)).map((e) => [e.row, e.external_id, e.field, e.code]),
    ).toEqual([[1, subscriber.external_id, 'amount', 'duplicate_transaction']]);

    expect(await list('transactions', { subscriber_id: subscriber.id })).toHaveLength(1);
    expect(await list('invoices', { subscriber_id: subscriber.id })).toHaveLength(1);
    expect(usd(await getBalances(t, owner.token, subscriber.id))?.balance).toBe(1200);
    expect(await list('transactions', { subscriber_id: credited.id })).toHaveLength(1);
    expect(usd(await getBalances(t, owner.token, credited.id))?.balance).toBe(-700);
  });

  it('dry_run validates and counts every row and writes nothing', async () => {
    const subscriber = await newSubscriber();
    const csv = toCsv(HEADER, [
      [subscriber.external_id!, 4200, 'USD', null, null],
      ['crm-nobody', 100, 'USD', null, null],
    ]);
    const job = await importAndWait(t, owner.token, csv, 'text/csv', { ...BALANCES, dry_run: 'true' });
    expect(job).toMatchObject({ dry_run: true, status: 'completed', created: 1, failed: 1 });
    expect(await list('transactions', { subscriber_id: subscriber.id })).toEqual([]);
    expect(await list('invoices', { subscriber_id: subscriber.id })).toEqual([]);
    expect(usd(await getBalances(t, owner.token, subscriber.id))?.balance ?? 0).toBe(0);
  });

  it('refuses money that is not integer minor units, and names the field and code of each row', async () => {
    const subscriber = await newSubscriber();
    const ref = subscriber.external_id!;
    const csv = toCsv(HEADER, [
      [ref, '12.50', 'USD', null, null],
      [ref, 'ten', 'USD', null, null],
      [ref, '99999999999999999999', 'USD', null, null],
      [ref, '-9007199254740992', 'USD', null, null],
      [ref, '1e3', 'USD', null, null],
      [ref, 100, 'usd', null, null],
      [ref, 100, 'EUR', null, null],
      [ref, 100, 'USD', null, '2026-02-30'],
      ['crm-unknown', 100, 'USD', null, null],
      [null, 100, 'USD', null, null],
      [ref, null, 'USD', null, null],
    ]);
    const job = await importAndWait(t, owner.token, csv, 'text/csv', BALANCES);
    expect(job).toMatchObject({ status: 'completed', rows_total: 11, created: 0, failed: 11 });
    expect((await importErrors(t, owner.token, job.id)).map((e) => [e.row, e.field, e.code])).toEqual([
      [1, 'amount', 'validation_failed'],
      [2, 'amount', 'validation_failed'],
      [3, 'amount', 'validation_failed'],
      [4, 'amount', 'validation_failed'],
      [5, 'amount', 'validation_failed'],
      [6, 'currency', 'validation_failed'],
      [7, 'currency', 'currency_mismatch'],
      [8, 'date', 'validation_failed'],
      [9, 'subscriber_external_id', 'invalid_reference'],
      [10, 'subscriber_external_id', 'missing_field'],
      [11, 'amount', 'missing_field'],
    ]);

    const jsonl = [12.5, '1500', 1e300, true, null]
      .map((amount) => JSON.stringify({ subscriber_external_id: ref, amount, currency: 'USD' }))
      .join('\n');
    const typed = await importAndWait(t, owner.token, jsonl, 'application/x-ndjson', BALANCES);
    expect(typed).toMatchObject({ created: 0, failed: 5 });
    expect((await importErrors(t, owner.token, typed.id)).map((e) => [e.row, e.field])).toEqual([
      [1, 'amount'],
      [2, 'amount'],
      [3, 'amount'],
      [4, 'amount'],
      [5, 'amount'],
    ]);
    expect(await list('transactions', { subscriber_id: subscriber.id })).toEqual([]);
  });

  it("keeps tenants apart: another tenant's subscriber external_id is not found", async () => {
    const other = await createTenantWithToken(t, ['subscribers:*', 'billing:*', 'events:read']);
    const theirs = await newSubscriber(other.token);
    const csv = toCsv(HEADER, [[theirs.external_id!, 900, 'USD', null, null]]);
    const job = await importAndWait(t, owner.token, csv, 'text/csv', BALANCES);
    expect(job).toMatchObject({ created: 0, failed: 1 });
    expect((await importErrors(t, owner.token, job.id)).map((e) => [e.field, e.code])).toEqual([
      ['subscriber_external_id', 'invalid_reference'],
    ]);
    expect(await list('transactions', { subscriber_id: theirs.id }, other.token)).toEqual([]);
    expect(usd(await getBalances(t, other.token, theirs.id))?.balance ?? 0).toBe(0);
  });

  it('needs billing:write besides subscribers:write to import opening balances', async () => {
    const limited = await createTenantWithToken(t, ['subscribers:write', 'subscribers:read']);
    const csv = toCsv(HEADER, [['crm-1', 100, 'USD', null, null]]);
    const res = await postImport(t, limited.token, csv, 'text/csv', BALANCES);
    expectError(res, 403, 'insufficient_scope', 'kind');
  });
});
