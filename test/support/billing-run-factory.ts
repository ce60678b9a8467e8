import { ownDatabase, type OwnDatabase } from './own-database';
import request from 'supertest';
import { addDays } from '../../src/common/dates';
import { TestClock } from './test-clock';
import { type InvoiceLine, type InvoiceRecord, listAll, type TransactionRecord } from './billing-factory';
import { bearer } from './factories';
import {
  createPlan,
  getService,
  type Order,
  postAction,
  postService,
  type Service,
  type ServicePlan,
  uniquePppoeUsername,
  waitForOrder,
} from './provisioning-factory';
import {
  type BillingProfile,
  createSubscriber,
  type EventBody,
  listen,
  listEvents,
  postBillingProfile,
} from './subscriber-factory';
import { createTenantWithToken, ensure, startTestApp, type TenantWithToken, type TestApp } from './test-app';
import { waitUntil } from './wait-for';

/**
 * Issue #16 (recurring billing): helpers for the bill run and proration suites. Time is a TestClock the suite moves
 * (set the day, then act, then wait for the worker); nothing here sleeps to move time, only to poll a worker.
 */

export const BILLING_RUN_ID = /^brun_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The fields of a BillingRun, sorted. */
export const BILLING_RUN_KEYS = [
  'amount_total',
  'as_of',
  'completed_at',
  'created_at',
  'credits_created',
  'dry_run',
  'errors',
  'id',
  'invoices_created',
  'status',
  'subscribers_billed',
  'subscribers_due',
  'trigger',
  'updated_at',
];

/** Every suite here: the scheduler off (only its own test turns it on), fast automation and provisioning workers. */
export const RUN_ENV: Record<string, string> = {
  BILLING_SCHEDULER_ENABLED: 'false',
  AUTOMATION_POLL_MS: '50',
  PROVISIONING_POLL_MS: '50',
  PROVISIONING_RETRY_DELAYS_S: '0.05,0.05',
};

export type Body = Record<string, unknown>;

export interface AmountTotal {
  currency: string;
  amount: number;
}

export interface BillingRun {
  id: string;
  as_of: string;
  dry_run: boolean;
  trigger: 'api' | 'schedule';
  status: 'running' | 'completed' | 'failed';
  subscribers_due: number;
  subscribers_billed: number;
  invoices_created: number;
  credits_created: number;
  amount_total: AmountTotal[];
  errors: { subscriber_id: string; reason: string }[];
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

/** A billing profile as the API answers it (subscriber-factory.ts' BillingProfile). */
export type BillingProfileRecord = BillingProfile;

export interface RunApp {
  t: TestApp;
  clock: TestClock;
  close(): Promise<void>;
}

/**
 * The figures of a real (not dry) API bill run that completed without errors, billing one subscriber with one invoice
 * and no credit, for `amountTotal`; `overrides` for the rest (its id, as_of, trigger), for toMatchObject.
 */
export function oneInvoiceRun(
  amountTotal: AmountTotal[],
  overrides: Partial<BillingRun> = {},
): Partial<BillingRun> {
  return {
    dry_run: false,
    trigger: 'api',
    status: 'completed',
    subscribers_due: 1,
    subscribers_billed: 1,
    invoices_created: 1,
    credits_created: 0,
    amount_total: amountTotal,
    errors: [],
    ...overrides,
  };
}

/** The app on a TestClock standing at `start`, listening on a loopback port (so parallel requests share one server). */
export async function startRunApp(
  env: Record<string, string> = {},
  start: string = '2030-01-01T00:00:00.000Z',
): Promise<RunApp> {
  const clock = new TestClock(start);
  const t = await startTestApp({ ...RUN_ENV, ...env }, { clock });
  await listen(t);
  return { t, clock, close: () => t.close() };
}

/**
 * A run app with the bill scheduler on and a quick automation poll, its clock at 01:30 on `day`, on `database` (one
 * of the suite's own: ownDatabase, since the scheduler bills every tenant of its database).
 */
export function startSchedulerApp(day: string, database: OwnDatabase): Promise<RunApp> {
  return startRunApp(
    { BILLING_SCHEDULER_ENABLED: 'true', AUTOMATION_POLL_MS: '50', ...database.env },
    at(day, '01:30'),
  );
}

/**
 * The RunApp of the describe block that calls it: startRunApp(env, start) before its tests, handed to `ready`; closed
 * after them.
 */
export function runAppSuite(
  ready: (app: RunApp) => unknown,
  env: Record<string, string> = {},
  start?: string,
): void {
  suiteOf(() => startRunApp(env, start), ready);
}

/** runAppSuite with startSchedulerApp(day), on a database of the describe block's own (dropped after it). */
export function schedulerAppSuite(day: string, ready: (app: RunApp) => unknown): void {
  let database: OwnDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
  });
  suiteOf(async () => {
    database = await ownDatabase('scheduler');
    return startSchedulerApp(day, database);
  }, ready);
}

function suiteOf(start: () => Promise<RunApp>, ready: (app: RunApp) => unknown): void {
  let app: RunApp | undefined;
  beforeAll(async () => {
    app = await start();
    await ready(app);
  });
  afterAll(async () => {
    await app?.close();
  });
}

// ---------- dates (UTC days, YYYY-MM-DD) ----------

function parseDay(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}

function formatDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** `day` moved by `days` UTC days: the app's own day arithmetic. */
export { addDays };

/** The same day of month `months` later (billing days are 1..28, so it always exists). */
export function addMonths(day: string, months: number): string {
  const date = parseDay(day);
  date.setUTCMonth(date.getUTCMonth() + months);
  return formatDay(date);
}

/** Whole days from `from` (included) to `to` (excluded). */
export function daysBetween(from: string, to: string): number {
  return Math.round((parseDay(to).getTime() - parseDay(from).getTime()) / 86_400_000);
}

/** The instant `time` (HH:MM) UTC of `day`. */
export function at(day: string, time = '12:00'): string {
  return `${day}T${time}:00.000Z`;
}

// ---------- money (contract: round half up to the minor unit) ----------

/** round_half_up(numerator / denominator) for non-negative integers, exactly (no floating point). */
export function halfUp(numerator: number, denominator: number): number {
  if (numerator < 0 || denominator <= 0) {
    throw new Error(`halfUp(${numerator}, ${denominator}): non-negative numerator, positive denominator`);
  }
  return Number((2n * BigInt(numerator) + BigInt(denominator)) / (2n * BigInt(denominator)));
}

/** round_half_up(amount × days / n). */
export function prorate(amount: number, days: number, n: number): number {
  return halfUp(amount * days, n);
}

// ---------- expected invoice lines (contract wording) ----------

/** The in-advance line of a service for the period starting `asOf`: `<plan>, <as_of> to <last day>`. */
export function periodLine(planName: string, amount: number, asOf: string): InvoiceLine {
  return {
    description: `${planName}, ${asOf} to ${addDays(addMonths(asOf, 1), -1)}`,
    quantity: 1,
    unit_amount: amount,
    amount,
  };
}

/** A charge for `first`..`last` (inclusive) of a plan not billed in advance, in a previous period of `n` days. */
export function chargeLine(planName: string, periodAmount: number, first: string, last: string, n: number) {
  const d = daysBetween(first, last) + 1;
  const amount = prorate(periodAmount, d, n);
  return {
    description: `${planName}, ${first} to ${last} (${d} of ${n} days)`,
    quantity: 1,
    unit_amount: amount,
    amount,
  } satisfies InvoiceLine;
}

/**
 * The credit for a plan billed `billed` in advance for a previous period of `n` days and used only `u` of them; the
 * unused days run `first`..`last` (inclusive): c = B − round_half_up(B × u / N).
 */
export function creditLine(planName: string, billed: number, first: string, last: string, n: number) {
  const unused = daysBetween(first, last) + 1;
  const used = n - unused;
  const c = billed - prorate(billed, used, n);
  return {
    description: `Credit: ${planName}, unused ${first} to ${last} (${unused} of ${n} days)`,
    quantity: 1,
    unit_amount: -c,
    amount: -c,
  } satisfies InvoiceLine;
}

export function sumOf(lines: InvoiceLine[]): number {
  return lines.reduce((total, line) => total + line.amount, 0);
}

// ---------- tenants, profiles, plans, subscribers, services ----------

export async function createRunTenant(t: TestApp, scopes: string[] = ['admin']): Promise<TenantWithToken> {
  return createTenantWithToken(t, scopes);
}

/** A profile in EUR, never auto-suspending (so the overdue sweep never suspends anyone behind a test's back). */
export async function createProfile(
  t: TestApp,
  token: string,
  overrides: Body = {},
): Promise<BillingProfileRecord> {
  const res = await postBillingProfile(t, token, {
    name: 'Residential monthly',
    currency: 'EUR',
    billing_day: 1,
    payment_terms_days: 14,
    auto_suspend_after_days: null,
    ...overrides,
  });
  ensure(res, 201, 'create billing profile');
  return res.body.data as BillingProfileRecord;
}

export function patchProfile(t: TestApp, token: string, id: string, body: Body) {
  return request(t.http).patch(`/api/v1/billing-profiles/${id}`).set(bearer(token)).send(body);
}

export async function getProfile(t: TestApp, token: string, id: string): Promise<BillingProfileRecord> {
  const res = await request(t.http).get(`/api/v1/billing-profiles/${id}`).set(bearer(token));
  ensure(res, 200, `get billing profile ${id}`);
  return res.body.data as BillingProfileRecord;
}

export async function listProfiles(t: TestApp, token: string): Promise<BillingProfileRecord[]> {
  return listAll<BillingProfileRecord>(t, token, '/api/v1/billing-profiles');
}

/** A monthly EUR plan of `price` (unique name) unless overridden. */
export async function createEurPlan(
  t: TestApp,
  token: string,
  price: number,
  overrides: Body = {},
): Promise<ServicePlan> {
  return createPlan(t, token, { price, currency: 'EUR', ...overrides });
}

/** An active subscriber, on `billingProfileId` when given (else none: the tenant's default applies). */
export async function createBilledSubscriber(t: TestApp, token: string, billingProfileId?: string | null) {
  return createSubscriber(t, token, {
    status: 'active',
    ...(billingProfileId ? { billing_profile_id: billingProfileId } : {}),
  });
}

/** Polls GET /services/{id} until `done` holds; throws with the last service seen after `timeoutMs`. */
export async function waitForService(
  t: TestApp,
  token: string,
  serviceId: string,
  done: (service: Service) => boolean,
  timeoutMs = 30_000,
): Promise<Service> {
  return waitUntil(() => getService(t, token, serviceId), done, {
    timeout: timeoutMs,
    what: `service ${serviceId} in the expected state`,
  });
}

/**
 * A service on `planId` for the subscriber, activated by the worker at the clock's current time: answers it once it
 * is `active` (its activated_at is the clock's now).
 */
export async function createActiveService(
  t: TestApp,
  token: string,
  subscriberId: string,
  planId: string,
): Promise<Service> {
  const res = await postService(t, token, subscriberId, {
    plan_id: planId,
    pppoe_username: uniquePppoeUsername(),
    pppoe_password: 'correct-horse-42',
  });
  ensure(res, 202, 'create service');
  const { service, order } = res.body.data as { service: Service; order: Order };
  const done = await waitForOrder(t, token, order.id, ['completed', 'failed', 'cancelled'], 15_000);
  if (done.status !== 'completed') {
    throw new Error(`activation of ${service.id} ended ${done.status}: ${JSON.stringify(done)}`);
  }
  return waitForService(t, token, service.id, (s) => s.status === 'active');
}

/** Takes an action on a service (202), waits for its order to complete and answers the service after it. */
export async function actOnService(
  t: TestApp,
  token: string,
  serviceId: string,
  body: Body,
): Promise<Service> {
  const res = await postAction(t, token, serviceId, body);
  ensure(res, 202, `action ${JSON.stringify(body)} on ${serviceId}`);
  const done = await waitForOrder(
    t,
    token,
    (res.body.data as Order).id,
    ['completed', 'failed', 'cancelled'],
    15_000,
  );
  if (done.status !== 'completed') {
    throw new Error(`order ${done.id} ended ${done.status}: ${JSON.stringify(done)}`);
  }
  return getService(t, token, serviceId);
}

// ---------- bill runs ----------

export function postRun(t: TestApp, token: string, body: Body = {}) {
  return request(t.http).post('/api/v1/billing-runs').set(bearer(token)).send(body);
}

export function getRunResponse(t: TestApp, token: string, id: string) {
  return request(t.http).get(`/api/v1/billing-runs/${id}`).set(bearer(token));
}

export async function getRun(t: TestApp, token: string, id: string): Promise<BillingRun> {
  const res = await getRunResponse(t, token, id);
  ensure(res, 200, `get billing run ${id}`);
  return res.body.data as BillingRun;
}

/** Starts a run (202) and answers it as the POST did (status running). */
export async function startRun(t: TestApp, token: string, body: Body = {}): Promise<BillingRun> {
  const res = await postRun(t, token, body);
  ensure(res, 202, `start billing run ${JSON.stringify(body)}`);
  return res.body.data as BillingRun;
}

/** Polls GET /billing-runs/{id} until its status is not `running`; throws with the last run seen after `timeoutMs`. */
export async function waitForRun(
  t: TestApp,
  token: string,
  id: string,
  timeoutMs = 30_000,
): Promise<BillingRun> {
  return waitUntil(
    () => getRun(t, token, id),
    (run) => run.status !== 'running',
    { timeout: timeoutMs, interval: 50, what: `billing run ${id} ended` },
  );
}

/** Starts a run and answers it once the worker has carried it out. */
export async function runToCompletion(t: TestApp, token: string, body: Body = {}): Promise<BillingRun> {
  const started = await startRun(t, token, body);
  return waitForRun(t, token, started.id);
}

export async function listRuns(t: TestApp, token: string, query: Record<string, string> = {}) {
  return listAll<BillingRun>(t, token, '/api/v1/billing-runs', query);
}

// ---------- what a run leaves behind ----------

/** A subscriber's invoices, oldest first (each with its lines). */
export async function invoicesOf(t: TestApp, token: string, subscriberId: string): Promise<InvoiceRecord[]> {
  const rows = await listAll<InvoiceRecord>(t, token, '/api/v1/invoices', { subscriber_id: subscriberId });
  return rows.reverse();
}

/** A subscriber's transactions of `kind` (all kinds without it), oldest first. */
export async function transactionsOf(
  t: TestApp,
  token: string,
  subscriberId: string,
  kind?: string,
): Promise<TransactionRecord[]> {
  const rows = await listAll<TransactionRecord>(t, token, '/api/v1/transactions', {
    subscriber_id: subscriberId,
    ...(kind ? { kind } : {}),
  });
  return rows.reverse();
}

export async function ledgerOf(t: TestApp, token: string, subscriberId: string) {
  return listAll<Record<string, unknown>>(t, token, `/api/v1/subscribers/${subscriberId}/ledger`);
}

export async function balanceOf(t: TestApp, token: string, subscriberId: string) {
  const res = await request(t.http).get(`/api/v1/subscribers/${subscriberId}/balance`).set(bearer(token));
  ensure(res, 200, 'get balance');
  return res.body.data as { subscriber_id: string; balances: unknown[] };
}

/** The tenant's events of these types, oldest first. */
export async function eventsOfTypes(t: TestApp, token: string, types: string[]): Promise<EventBody[]> {
  const all: EventBody[] = [];
  for (const type of types) {
    all.push(...(await listAll<EventBody>(t, token, '/api/v1/events', { type })));
  }
  return all.sort((x, y) => x.created_at.localeCompare(y.created_at) || x.id.localeCompare(y.id));
}

/** The event types written about one record, oldest first. */
export async function eventTypesOfSubject(t: TestApp, token: string, subjectId: string): Promise<string[]> {
  const events = await listEvents(t, token, { subject_id: subjectId });
  return events.reverse().map((event) => event.type);
}

// ---------- automation rules ----------

export function patchRule(t: TestApp, token: string, rule: string, body: Body) {
  return request(t.http).patch(`/api/v1/automation/rules/${rule}`).set(bearer(token)).send(body);
}

export async function setRule(t: TestApp, token: string, rule: string, enabled: boolean): Promise<void> {
  const res = await patchRule(t, token, rule, { enabled });
  ensure(res, 200, `PATCH rule ${rule}`);
  if (res.body.data?.enabled !== enabled) {
    throw new Error(`rule ${rule}: enabled is ${JSON.stringify(res.body.data)}`);
  }
}

// ---------- one billed customer ----------

export interface Customer {
  tenant: TenantWithToken;
  profile: BillingProfileRecord;
  subscriberId: string;
}

/** A fresh tenant with an EUR profile (billing_day of `profile`) and one active subscriber on it. */
export async function createCustomer(t: TestApp, profile: Body = {}): Promise<Customer> {
  const tenant = await createRunTenant(t);
  const created = await createProfile(t, tenant.token, profile);
  const subscriber = await createBilledSubscriber(t, tenant.token, created.id);
  return { tenant, profile: created, subscriberId: subscriber.id };
}

export { type InvoiceLine, type InvoiceRecord, type TransactionRecord };

/** Invoice lines as text and money only (description, quantity, unit_amount, amount), without their references. */
export function baseLines<
  T extends { description: string; quantity: number; unit_amount: number; amount: number },
>(lines: T[]): { description: string; quantity: number; unit_amount: number; amount: number }[] {
  return lines.map(({ description, quantity, unit_amount, amount }) => ({
    description,
    quantity,
    unit_amount,
    amount,
  }));
}
