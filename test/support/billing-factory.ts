import { randomBytes } from 'node:crypto';
import request, { type Response } from 'supertest';
import { expectList } from './envelope';
import { bearer } from './factories';
import { createSubscriber, type EventBody, listen } from './subscriber-factory';
import {
  appSuite,
  createTenantWithToken,
  ensure,
  startTestApp,
  type TenantWithToken,
  type TestApp,
} from './test-app';

export const INVOICE_ID = /^inv_[0-9A-HJKMNP-TV-Z]{26}$/;
export const TRANSACTION_ID = /^txn_[0-9A-HJKMNP-TV-Z]{26}$/;
export const ALLOCATION_ID = /^alc_[0-9A-HJKMNP-TV-Z]{26}$/;
export const LEDGER_ID = /^led_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Every scope a billing suite needs: make subscribers, read and write billing, read the event log. */
export const BILLING_SCOPES = ['subscribers:*', 'billing:*', 'events:read'];

/** A due date long past (the invoice is overdue while open) and one far ahead (never overdue). */
export const PAST_DATE = '2020-01-15';
export const FUTURE_DATE = '2099-12-31';

export type Body = Record<string, unknown>;

export interface InvoiceLine {
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  tax_rate_ids?: string[];
  net_amount?: number;
  tax_amount?: number;
  taxes?: { tax_rate_id: string; name: string; percentage: string; taxable_amount: number; amount: number }[];
}

export interface AllocationRecord {
  id: string;
  transaction_id: string;
  invoice_id: string | null;
  target: 'invoice' | 'balance';
  amount: number;
  currency: string;
  created_at: string;
}

export interface InvoiceRecord {
  id: string;
  /** The document number from the tenant's series (INV-2026-000042); null while a draft. */
  number: string | null;
  /** Its place in the series; null while a draft. */
  sequence: number | null;
  subscriber_id: string;
  currency: string;
  status: 'draft' | 'open' | 'partially_paid' | 'paid' | 'void';
  lines: InvoiceLine[];
  subtotal: number;
  tax_amount: number;
  taxes: { tax_rate_id: string; name: string; percentage: string; taxable_amount: number; amount: number }[];
  total: number;
  amount_paid: number;
  amount_due: number;
  due_date: string;
  overdue: boolean;
  finalized_at: string | null;
  paid_at: string | null;
  voided_at: string | null;
  created_at: string;
  updated_at: string;
  allocations?: AllocationRecord[];
}

export interface TransactionRecord {
  id: string;
  subscriber_id: string;
  kind: 'payment' | 'credit' | 'debit' | 'refund';
  source: 'external' | 'adjustment';
  amount: number;
  currency: string;
  external_id: string | null;
  reference: string | null;
  description: string | null;
  method: string | null;
  occurred_at: string;
  refund_of: string | null;
  metadata: Record<string, unknown>;
  allocated_amount: number;
  unallocated_amount: number;
  refunded_amount: number;
  auto_apply: boolean;
  created_at: string;
  allocations?: AllocationRecord[];
}

export interface CurrencyBalance {
  currency: string;
  balance: number;
  open_invoices_due: number;
  unallocated_credit: number;
}

export interface LedgerEntryRecord {
  id: string;
  type: string;
  currency: string;
  amount: number;
  balance_after: number;
  source_id: string;
  created_at: string;
}

/** The app as the billing suites run it (startTestApp already keeps the abuse threshold out of reach). */
export function startBillingApp(env: Record<string, string> = {}): Promise<TestApp> {
  return startTestApp(env);
}

/** A fresh tenant with a billing token and one subscriber of it. */
export interface BillingTenant extends TenantWithToken {
  subscriberId: string;
}

export async function createBillingTenant(t: TestApp): Promise<BillingTenant> {
  const tenant = await createTenantWithToken(t, BILLING_SCOPES);
  const subscriber = await createSubscriber(t, tenant.token);
  return { ...tenant, subscriberId: subscriber.id };
}

/** What billingSuite starts: the app and its fresh billing tenants (`b` only with `tenants: 2`). */
export interface BillingSuite {
  t: TestApp;
  a: BillingTenant;
  b: BillingTenant;
}

/**
 * appSuite for a billing suite: startBillingApp with `env`, listening on a loopback port when `listen` (for requests
 * fired at once), and one fresh billing tenant, or two with `tenants: 2`, handed to `ready`.
 */
export function billingSuite(
  ready: (suite: BillingSuite) => unknown,
  options: { tenants?: 1 | 2; listen?: boolean; env?: Record<string, string> } = {},
): void {
  appSuite(
    async (t) => {
      if (options.listen) {
        await listen(t);
      }
      const a = await createBillingTenant(t);
      const b =
        options.tenants === 2 ? await createBillingTenant(t) : (undefined as unknown as BillingTenant);
      await ready({ t, a, b });
    },
    () => startBillingApp(options.env),
  );
}

export async function newSubscriberId(t: TestApp, token: string): Promise<string> {
  return (await createSubscriber(t, token)).id;
}

/** A value no other test uses, e.g. for a transaction's external_id. */
export function uniqueExternalId(prefix = 'psp'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

// ---------- invoices ----------

/** Invoice lines of quantity 1 from [description, unit amount, tax rate ids] triples. */
export function taxedLines(lines: [string, number, string[]][]): Body[] {
  return lines.map(([description, unit_amount, tax_rate_ids]) => ({
    description,
    quantity: 1,
    unit_amount,
    tax_rate_ids,
  }));
}

/** One line of `total` (quantity 1), due far ahead, in USD. */
export function invoiceBody(subscriberId: string, overrides: Body = {}): Body {
  return {
    subscriber_id: subscriberId,
    currency: 'USD',
    due_date: FUTURE_DATE,
    lines: [{ description: 'Fiber 500', quantity: 1, unit_amount: 1000 }],
    ...overrides,
  };
}

export function postInvoice(t: TestApp, token: string, body: Body, headers: Record<string, string> = {}) {
  return request(t.http).post('/api/v1/invoices').set(bearer(token)).set(headers).send(body);
}

/** An invoice with a single line of `total` (or the given overrides). */
export async function createInvoice(
  t: TestApp,
  token: string,
  subscriberId: string,
  total = 1000,
  overrides: Body = {},
): Promise<InvoiceRecord> {
  const body = invoiceBody(subscriberId, {
    lines: [{ description: 'Service', quantity: 1, unit_amount: total }],
    ...overrides,
  });
  const res = await postInvoice(t, token, body);
  ensure(res, 201, 'create invoice');
  return res.body.data as InvoiceRecord;
}

export function finalizeInvoice(t: TestApp, token: string, id: string) {
  return request(t.http).post(`/api/v1/invoices/${id}/finalize`).set(bearer(token));
}

export function voidInvoice(t: TestApp, token: string, id: string) {
  return request(t.http).post(`/api/v1/invoices/${id}/void`).set(bearer(token));
}

export async function getInvoice(t: TestApp, token: string, id: string): Promise<InvoiceRecord> {
  const res = await request(t.http).get(`/api/v1/invoices/${id}`).set(bearer(token));
  ensure(res, 200, `get invoice ${id}`);
  return res.body.data as InvoiceRecord;
}

// ---------- transactions ----------

export function transactionBody(subscriberId: string, overrides: Body = {}): Body {
  return {
    subscriber_id: subscriberId,
    kind: 'payment',
    source: 'external',
    amount: 1000,
    currency: 'USD',
    ...overrides,
  };
}

/** What makes a transaction a refund of `amount` of the payment `paymentId`. */
export function refundOf(paymentId: string, amount: number): Body {
  return { kind: 'refund', amount, refund_of: paymentId };
}

/** The body of a refund of `amount` USD of the payment `paymentId`. */
export function refundBody(subscriberId: string, paymentId: string, amount: number): Body {
  return transactionBody(subscriberId, refundOf(paymentId, amount));
}

export function postTransaction(t: TestApp, token: string, body: Body, headers: Record<string, string> = {}) {
  return request(t.http).post('/api/v1/transactions').set(bearer(token)).set(headers).send(body);
}

export async function createTransaction(
  t: TestApp,
  token: string,
  subscriberId: string,
  overrides: Body = {},
): Promise<TransactionRecord> {
  const res = await postTransaction(t, token, transactionBody(subscriberId, overrides));
  ensure(res, 201, 'create transaction');
  return res.body.data as TransactionRecord;
}

export function createPayment(
  t: TestApp,
  token: string,
  subscriberId: string,
  amount: number,
  overrides: Body = {},
) {
  return createTransaction(t, token, subscriberId, { kind: 'payment', amount, ...overrides });
}

/**
 * createPayment and createTransaction for the suites that allocate by hand: a payment or credit is recorded with
 * `auto_apply: false`, so it waits unallocated for the allocation under test instead of paying the subscriber's open
 * invoices at once (test/billing/auto-apply.e2e-spec.ts is auto-apply's suite). Debits and refunds are as ever.
 */
export const byHand = {
  createPayment: ((t, token, subscriberId, amount, overrides = {}) =>
    createPayment(t, token, subscriberId, amount, {
      auto_apply: false,
      ...overrides,
    })) as typeof createPayment,
  createTransaction: ((t, token, subscriberId, overrides = {}) =>
    createTransaction(t, token, subscriberId, {
      ...([undefined, 'payment', 'credit'].includes(overrides.kind as string | undefined)
        ? { auto_apply: false }
        : {}),
      ...overrides,
    })) as typeof createTransaction,
};

export async function getTransaction(t: TestApp, token: string, id: string): Promise<TransactionRecord> {
  const res = await request(t.http).get(`/api/v1/transactions/${id}`).set(bearer(token));
  ensure(res, 200, `get transaction ${id}`);
  return res.body.data as TransactionRecord;
}

export function allocate(
  t: TestApp,
  token: string,
  transactionId: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return request(t.http)
    .post(`/api/v1/transactions/${transactionId}/allocate`)
    .set(bearer(token))
    .set(headers)
    .send(body as object);
}

// ---------- balance, ledger, events, lists ----------

export async function getBalances(
  t: TestApp,
  token: string,
  subscriberId: string,
): Promise<CurrencyBalance[]> {
  const res = await request(t.http).get(`/api/v1/subscribers/${subscriberId}/balance`).set(bearer(token));
  ensure(res, 200, 'get balance');
  return res.body.data.balances as CurrencyBalance[];
}

export async function getBalance(
  t: TestApp,
  token: string,
  subscriberId: string,
  currency = 'USD',
): Promise<CurrencyBalance | undefined> {
  return (await getBalances(t, token, subscriberId)).find((row) => row.currency === currency);
}

/** Every record of a list endpoint, following next_cursor to the end (pages of 100). */
export async function listAll<T>(
  t: TestApp,
  token: string,
  path: string,
  query: Record<string, string> = {},
) {
  const all: T[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const res: Response = await request(t.http)
      .get(path)
      .query({ ...query, limit: '100', ...(cursor ? { starting_after: cursor } : {}) })
      .set(bearer(token));
    expectList(res);
    all.push(...(res.body.data as T[]));
    if (!res.body.meta.pagination.has_more) {
      return all;
    }
    cursor = res.body.meta.pagination.next_cursor as string;
  }
  throw new Error(`listAll ${path}: too many pages`);
}

/** The ids a list answers for this query (one page of up to 100). */
export async function listIds(t: TestApp, token: string, path: string, query: Record<string, string> = {}) {
  const res = await request(t.http)
    .get(path)
    .query({ limit: '100', ...query })
    .set(bearer(token));
  expectList(res);
  return (res.body.data as { id: string }[]).map((row) => row.id);
}

/** The event types written about one record, oldest first. */
export async function eventTypesOf(t: TestApp, token: string, subjectId: string): Promise<string[]> {
  const events = await listAll<EventBody>(t, token, '/api/v1/events', { subject_id: subjectId });
  return events.reverse().map((event) => event.type);
}

export async function eventsOf(
  t: TestApp,
  token: string,
  subjectId: string,
  type?: string,
): Promise<EventBody[]> {
  const events = await listAll<EventBody>(t, token, '/api/v1/events', {
    subject_id: subjectId,
    ...(type ? { type } : {}),
  });
  return events.reverse();
}
