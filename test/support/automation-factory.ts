import { Client } from 'pg';
import { addDays } from '../../src/common/dates';
import request from 'supertest';
import { TestClock } from './test-clock';
import {
  allocate,
  createInvoice,
  createPayment,
  eventsOf,
  listAll,
  type InvoiceRecord,
} from './billing-factory';
import { bearer } from './factories';
import {
  createPlan,
  createService,
  getService,
  listOrders,
  type Order,
  type ScriptedDriver,
  scriptDriver,
  type Service,
  type ServicePlan,
  uniquePppoeUsername,
  waitForOrder,
} from './provisioning-factory';
import {
  type BillingProfile,
  createBillingProfile,
  createSubscriber,
  type EventBody,
  getSubscriber,
  listen,
  type SubscriberRecord,
} from './subscriber-factory';
import type { Ticket } from './ticket-factory';
import { createTenantWithToken, ensure, startTestApp, type TenantWithToken, type TestApp } from './test-app';
import { letTimePass, waitUntil } from './wait-for';
import type { BillingRun } from './billing-run-factory';

export { TestClock };

type Body = Record<string, unknown>;

/**
 * What every automation suite runs with: the bill scheduler off (runs are started by the tests), the automation
 * consumer and sweep, and the provisioning worker, polling every 50 ms; transient driver failures retried 50 ms apart.
 */
export const AUTOMATION_ENV: Record<string, string> = {
  BILLING_SCHEDULER_ENABLED: 'false',
  AUTOMATION_POLL_MS: '50',
  PROVISIONING_POLL_MS: '50',
  PROVISIONING_RETRY_DELAYS_S: '0.05,0.05',
};

/** The rules of the contract, in its order. */
export const RULE_IDS = [
  'service_follows_subscriber',
  'overdue_invoices',
  'paid_up',
  'invoice_reminders',
  'late_fee',
  'reconnection_fee',
  'termination_billing',
  'failed_provisioning',
] as const;
export type RuleId = (typeof RULE_IDS)[number];

export const RULE_KEYS = ['description', 'emits', 'enabled', 'id', 'name', 'triggers'];

export interface AutomationRule {
  id: RuleId;
  name: string;
  description: string;
  triggers: string[];
  emits: string[];
  enabled: boolean;
}

/** The actor an automation rule writes its events under. */
export function automationActor(rule: RuleId): { type: 'automation'; id: RuleId } {
  return { type: 'automation', id: rule };
}

/** The clock's first day in every suite: tests only move it forward (see nextMonth). */
export const CLOCK_START = '2026-02-15T10:00:00.000Z';

/** An app on its own TestClock, listening on a loopback port, with AUTOMATION_ENV (and `env` on top). */
export async function startAutomationApp(
  clock: TestClock,
  env: Record<string, string> = {},
): Promise<TestApp> {
  const t = await startTestApp({ ...AUTOMATION_ENV, ...env }, { clock });
  await listen(t);
  return t;
}

/** What automationSuite starts: the app, its clock and its scripted network driver. */
export interface AutomationSuite {
  t: TestApp;
  clock: TestClock;
  driver: ScriptedDriver;
}

/**
 * The app of the describe block that calls it: before its tests, startAutomationApp on a fresh TestClock at
 * CLOCK_START, its network driver scripted (scriptDriver), handed to `ready`; after them, the driver restored and the
 * app closed.
 */
export function automationSuite(ready: (suite: AutomationSuite) => unknown): void {
  let suite: AutomationSuite | undefined;
  beforeAll(async () => {
    const clock = new TestClock(CLOCK_START);
    const t = await startAutomationApp(clock);
    suite = { t, clock, driver: scriptDriver(t) };
    await ready(suite);
  });
  afterAll(async () => {
    suite?.driver.restore();
    await suite?.t.close();
  });
}

// ---------- days ----------

/** `day` (YYYY-MM-DD) moved by `n` UTC days: the app's own day arithmetic. */
export { addDays };

/** The first day of the month after `day`'s. */
export function nextMonthOf(day: string): string {
  const at = new Date(`${day}T00:00:00.000Z`);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
}

/** How many days the month starting on `firstOfMonth` has. */
export function daysInMonth(firstOfMonth: string): number {
  const at = new Date(`${firstOfMonth}T00:00:00.000Z`);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 0)).getUTCDate();
}

/** Sets the clock to 10:00 UTC of `day`. */
export function setDay(clock: TestClock, day: string): void {
  clock.set(`${day}T10:00:00.000Z`);
}

/**
 * Moves the clock to the first day of its next month and answers that day: each test starts in a month of its own,
 * and time never goes back (the app's earlier tenants keep living on the same clock).
 */
export function nextMonth(clock: TestClock): string {
  const day = nextMonthOf(clock.today());
  setDay(clock, day);
  return day;
}

/** round half up to the minor unit, as the contract's proration does (amounts here are positive). */
export function roundHalfUp(value: number): number {
  return Math.floor(value + 0.5);
}

// ---------- waiting ----------

/**
 * Lets the background work (the rules' consumer, the overdue sweep, the provisioning worker; every 50 ms) go round
 * many times without moving the clock: for checks that something did NOT happen, after a witness has shown that the
 * work ran.
 */
export function settle(ms = 600): Promise<void> {
  return letTimePass(ms);
}

/** Polls `probe` every 50 ms until `done` holds and answers its value; throws with the last value after `timeoutMs`. */
export function eventually<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  return waitUntil(probe, done, { timeout: timeoutMs, interval: 50, what });
}

/**
 * Holds the automation's horizon on the database at `url`: a transaction with an id stays open (on a connection of its
 * own), and the automation reads only events from transactions older than every one still running, so nothing
 * written after this call reaches it until `release` (which may be called again: it releases once).
 */
export async function holdHorizon(url: string): Promise<{ release: () => Promise<void> }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT pg_current_xact_id()');
  let held = true;
  return {
    release: async () => {
      if (!held) {
        return;
      }
      held = false;
      await client.query('COMMIT');
      await client.end();
    },
  };
}

// ---------- automation rules ----------

export function getRules(t: TestApp, token: string) {
  return request(t.http).get('/api/v1/automation/rules').set(bearer(token));
}

export function patchRule(t: TestApp, token: string, id: string, body: unknown) {
  return request(t.http)
    .patch(`/api/v1/automation/rules/${id}`)
    .set(bearer(token))
    .send(body as object);
}

export async function listRules(t: TestApp, token: string): Promise<AutomationRule[]> {
  const res = await getRules(t, token);
  ensure(res, 200, 'list automation rules');
  return res.body.data as AutomationRule[];
}

export async function setRule(t: TestApp, token: string, id: RuleId, enabled: boolean) {
  const res = await patchRule(t, token, id, { enabled });
  ensure(res, 200, `set rule ${id} enabled=${enabled}`);
  return res.body.data as AutomationRule;
}

// ---------- bill runs ----------

export function postBillingRun(t: TestApp, token: string, body: Body = {}) {
  return request(t.http).post('/api/v1/billing-runs').set(bearer(token)).send(body);
}

export async function getBillingRun(t: TestApp, token: string, id: string): Promise<BillingRun> {
  const res = await request(t.http).get(`/api/v1/billing-runs/${id}`).set(bearer(token));
  ensure(res, 200, `get billing run ${id}`);
  return res.body.data as BillingRun;
}

/** Starts a bill run (202) for `asOf` and waits for it to leave `running`. */
export async function runBilling(t: TestApp, token: string, asOf: string): Promise<BillingRun> {
  const res = await postBillingRun(t, token, { as_of: asOf });
  ensure(res, 202, `start bill run as of ${asOf}`);
  const started = res.body.data as BillingRun;
  return eventually(
    `bill run ${started.id}`,
    () => getBillingRun(t, token, started.id),
    (run) => run.status !== 'running',
    20_000,
  );
}

// ---------- billing reads ----------

export function invoicesOf(t: TestApp, token: string, subscriberId: string): Promise<InvoiceRecord[]> {
  return listAll<InvoiceRecord>(t, token, '/api/v1/invoices', { subscriber_id: subscriberId });
}

/** An open invoice of one line of `total` USD due on `dueDate` (POST /api/v1/invoices). */
export function invoiceDue(
  t: TestApp,
  token: string,
  subscriberId: string,
  dueDate: string,
  total = 3000,
): Promise<InvoiceRecord> {
  return createInvoice(t, token, subscriberId, total, { due_date: dueDate, currency: 'USD' });
}

/** The invoice.overdue events of an invoice, oldest first. */
export function overdueEvents(t: TestApp, token: string, invoiceId: string): Promise<EventBody[]> {
  return eventsOf(t, token, invoiceId, 'invoice.overdue');
}

/** The subscriber.status_changed events of a subscriber, oldest first. */
export function statusEvents(t: TestApp, token: string, subscriberId: string): Promise<EventBody[]> {
  return eventsOf(t, token, subscriberId, 'subscriber.status_changed');
}

/** Every event of the tenant of this type, oldest first. */
export async function tenantEvents(t: TestApp, token: string, type: string): Promise<EventBody[]> {
  return (await listAll<EventBody>(t, token, '/api/v1/events', { type })).reverse();
}

// ---------- subscribers and services ----------

export interface Customer {
  profile: BillingProfile | null;
  subscriber: SubscriberRecord;
  plan: ServicePlan;
  service: Service;
}

/**
 * An active subscriber (on a fresh billing profile made with `profile`, or none when `profile` is null) with one
 * active service on a fresh monthly USD plan of 3100, its activation completed on the clock's day.
 */
export async function activeCustomer(
  t: TestApp,
  token: string,
  options: { profile?: Body | null; plan?: Body; subscriber?: Body } = {},
): Promise<Customer> {
  const profile =
    options.profile === null
      ? null
      : await createBillingProfile(t, token, {
          billing_day: 1,
          payment_terms_days: 14,
          auto_suspend_after_days: 7,
          ...options.profile,
        });
  const created = await createSubscriber(t, token, {
    status: 'active',
    ...(profile ? { billing_profile_id: profile.id } : {}),
    ...options.subscriber,
  });
  const plan = await createPlan(t, token, { price: 3100, currency: 'USD', ...options.plan });
  const service = await activeService(t, token, created.id, plan);
  return { profile, subscriber: await getSubscriber(t, token, created.id), plan, service };
}

/** A fresh service of the subscriber on `plan`, its activation completed. */
export async function activeService(
  t: TestApp,
  token: string,
  subscriberId: string,
  plan: ServicePlan,
  overrides: Body = {},
): Promise<Service> {
  const { service, order } = await createService(t, token, subscriberId, { plan_id: plan.id, ...overrides });
  const done = await waitForOrder(t, token, order.id, ['completed', 'failed', 'cancelled']);
  if (done.status !== 'completed') {
    throw new Error(`activation of ${service.id} ended ${done.status}: ${JSON.stringify(done)}`);
  }
  return getService(t, token, service.id);
}

/**
 * An active customer (activeCustomer, on a profile that suspends one day after a due date) suspended for non-payment
 * in a month of its own: an invoice of `amount` due the day after the month's first, the clock two days past it, and
 * the subscriber and its service seen suspended. Answers the customer, that invoice and the month's first day.
 */
export async function suspendedForNonPayment(t: TestApp, token: string, clock: TestClock, amount: number) {
  const day0 = nextMonth(clock);
  const customer = await activeCustomer(t, token, { profile: { auto_suspend_after_days: 1 } });
  const overdue = await invoiceDue(t, token, customer.subscriber.id, addDays(day0, 1), amount);
  setDay(clock, addDays(day0, 3));
  await subscriberBecomes(t, token, customer.subscriber.id, 'suspended');
  await serviceBecomes(t, token, customer.service.id, 'suspended');
  return { ...customer, overdue, day0 };
}

/**
 * Two fresh tenants for a test of a rule switched off: `quiet` with `rule` off, and `served` with it on, the witness
 * that the rule does run.
 */
export async function quietAndServed(
  t: TestApp,
  rule: RuleId,
): Promise<{ quiet: TenantWithToken; served: TenantWithToken }> {
  const quiet = await createTenantWithToken(t);
  const served = await createTenantWithToken(t);
  await setRule(t, quiet.token, rule, false);
  return { quiet, served };
}

/** Polls the service until its status is `status`. */
export function serviceBecomes(t: TestApp, token: string, serviceId: string, status: string) {
  return eventually(
    `service ${serviceId} ${status}`,
    () => getService(t, token, serviceId),
    (service) => service.status === status,
  );
}

/** Polls the subscriber until its status is `status`. */
export function subscriberBecomes(t: TestApp, token: string, subscriberId: string, status: string) {
  return eventually(
    `subscriber ${subscriberId} ${status}`,
    () => getSubscriber(t, token, subscriberId),
    (subscriber) => subscriber.status === status,
  );
}

/** The service's orders, oldest first. */
export async function ordersOf(t: TestApp, token: string, serviceId: string): Promise<Order[]> {
  return (await listOrders(t, token, { service_id: serviceId })).reverse();
}

/** The event that opened an order (its actor says who asked for it). */
export async function orderCreatedEvent(t: TestApp, token: string, orderId: string): Promise<EventBody> {
  const [event] = await eventsOf(t, token, orderId, 'provisioning_order.created');
  if (!event) {
    throw new Error(`no provisioning_order.created event for ${orderId}`);
  }
  return event;
}

export function postSubscriberStatus(t: TestApp, token: string, id: string, body: Body) {
  return request(t.http).post(`/api/v1/subscribers/${id}/status`).set(bearer(token)).send(body);
}

export async function moveSubscriber(t: TestApp, token: string, id: string, status: string, reason?: string) {
  const res = await postSubscriberStatus(
    t,
    token,
    id,
    reason === undefined ? { status } : { status, reason },
  );
  ensure(res, 200, `move ${id} to ${status}`);
  return res.body.data as SubscriberRecord;
}

// ---------- tickets ----------

export function ticketsOf(t: TestApp, token: string, subscriberId: string): Promise<Ticket[]> {
  return listAll<Ticket>(t, token, '/api/v1/tickets', { subscriber_id: subscriberId });
}

export { uniquePppoeUsername };

// ---------- payments and witnesses ----------

/**
 * A payment of `amount` USD allocated in full to the invoice; answers the allocate response. The payment opts out of
 * auto-apply (`auto_apply: false`), so the allocation goes to this invoice and no other.
 */
export async function pay(
  t: TestApp,
  token: string,
  subscriberId: string,
  invoiceId: string,
  amount: number,
) {
  const payment = await createPayment(t, token, subscriberId, amount, { currency: 'USD', auto_apply: false });
  const res = await allocate(t, token, payment.id, { allocations: [{ invoice_id: invoiceId, amount }] });
  ensure(res, 200, `allocate ${amount} to ${invoiceId}`);
  return res;
}

/**
 * Shows that the overdue sweep has run on the clock's current day, after this call began: a fresh subscriber (no
 * billing profile, so never suspended) gets an invoice due yesterday and the test waits for its invoice.overdue.
 * Then a few more rounds go by, for checks that something else did NOT happen.
 */
export async function overdueSweepRan(t: TestApp, token: string, clock: TestClock): Promise<void> {
  const witness = await createSubscriber(t, token);
  const invoice = await invoiceDue(t, token, witness.id, addDays(clock.today(), -1), 100);
  await eventually(
    'the witness invoice overdue',
    () => overdueEvents(t, token, invoice.id),
    (events) => events.length > 0,
  );
  await settle(300);
}

/**
 * Shows that the rules' consumer has reacted to the events written before this call: a fresh subscriber suspended
 * for non_payment with an overdue invoice pays it, and the test waits until paid_up has made it active again. Then a
 * few more rounds go by. (The tenant must not have a default profile that would suspend the witness again.)
 */
export async function paidUpRan(t: TestApp, token: string, clock: TestClock): Promise<void> {
  const witness = await createSubscriber(t, token, { status: 'active' });
  await moveSubscriber(t, token, witness.id, 'suspended', 'non_payment');
  const invoice = await invoiceDue(t, token, witness.id, addDays(clock.today(), -1), 100);
  await pay(t, token, witness.id, invoice.id, 100);
  await subscriberBecomes(t, token, witness.id, 'active');
  await settle(300);
}
