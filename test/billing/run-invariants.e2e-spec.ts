import fc from 'fast-check';
import { addDays } from '../../src/common/dates';
import request, { type Response } from 'supertest';
import { TestClock } from '../support/test-clock';
import {
  type InvoiceRecord,
  type LedgerEntryRecord,
  listAll,
  type TransactionRecord,
} from '../support/billing-factory';
import { bearer } from '../support/factories';
import {
  createPlan,
  getService,
  type Order,
  postAction,
  postService,
  type Service,
  uniquePppoeUsername,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber, type EventBody } from '../support/subscriber-factory';
import { createTenantWithToken, ensure, startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait-for';
import type { BillingRun } from '../support/billing-run-factory';

/**
 * Issue #16: bill runs' invariants under random sequences of what happens to a tenant's customers between (and on)
 * billing days. An in-process app on a TestClock; each fast-check run is a fresh tenant with a default profile billing
 * on the 1st, three monthly EUR plans and two or three subscribers with an active service, living through a year of
 * its own (the clock only moves forward). Commands: move the clock some days or to the next billing day, start bill
 * runs on the clock's day (sometimes a dry run first, sometimes repeated), record payments and allocate them (to named
 * invoices or oldest first), allocate bill-run credits, change plans, suspend/resume, terminate and add services,
 * each order waited for so its day is the clock's.
 *
 * Checked after each run: its figures are what it wrote (invoices and credits it created, their totals; due = billed),
 * a dry run reported the figures the real run then had, a run on another day than the billing day bills nobody, a
 * repeated run bills nobody, every subscriber with a billable service has exactly one invoice or credit for the
 * period, each invoice bills in advance exactly the subscriber's active/suspended services at their plan's price
 * (last), and a subscriber billed for the previous period with nothing changed since gets no adjustment line. After each sequence: the ledger runs, its last balance_after is the
 * balance endpoint's and equals invoices − payments − credits; invoices' lines sum to their total ≥ 0 and
 * amount_paid ≤ total; no subscriber is billed twice for a period; every transaction's allocated + unallocated +
 * refunded = amount; the runs' figures per day add up to what exists.
 */

const SEED = 20_261_601;
const RUNS = 15;
const FIRST_YEAR = 2041;
const TERMS_DAYS = 14;
const PRICES = [3100, 6200, 4650];

const ENV: Record<string, string> = {
  BILLING_SCHEDULER_ENABLED: 'false',
  BILLING_RUN_BATCH_SIZE: '2',
  AUTOMATION_POLL_MS: '50',
  PROVISIONING_POLL_MS: '50',
  PROVISIONING_RETRY_DELAYS_S: '0.05,0.05',
  NETWORK_DRIVER: 'none',
};

type Command =
  | { type: 'advance'; days: number }
  | { type: 'billing_day'; run: boolean; dryFirst: boolean; repeat: boolean }
  | { type: 'run'; dryFirst: boolean; repeat: boolean }
  | { type: 'pay'; sub: number; amount: number; oldestFirst: boolean }
  | { type: 'use_credit'; sub: number }
  | { type: 'change_plan'; sub: number; plan: number }
  | { type: 'suspend_resume'; sub: number }
  | { type: 'terminate'; sub: number }
  | { type: 'add_service'; sub: number; plan: number };

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ type: fc.constant('advance' as const), days: fc.integer({ min: 1, max: 20 }) }),
  },
  {
    // Mostly the run of that day right away, so consecutive periods are billed and trued up.
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('billing_day' as const),
      run: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
      dryFirst: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      repeat: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('run' as const),
      dryFirst: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
      repeat: fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('pay' as const),
      sub: fc.nat(),
      amount: fc.integer({ min: 100, max: 9000 }),
      oldestFirst: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('use_credit' as const), sub: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('change_plan' as const), sub: fc.nat(), plan: fc.nat() }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('suspend_resume' as const), sub: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('terminate' as const), sub: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('add_service' as const), sub: fc.nat(), plan: fc.nat() }),
  },
);

const scenarioArbitrary = fc.record({
  subscribers: fc.array(fc.nat({ max: PRICES.length - 1 }), { minLength: 2, maxLength: 3 }),
  startDay: fc.integer({ min: 2, max: 27 }),
  commands: fc.array(commandArbitrary, { minLength: 12, maxLength: 24 }),
});

type Scenario = {
  subscribers: number[];
  startDay: number;
  commands: Command[];
};

interface Plan {
  id: string;
  name: string;
  price: number;
}
interface ModelService {
  id: string;
  status: 'active' | 'suspended' | 'terminated';
  planId: string;
}
interface ModelSubscriber {
  id: string;
  services: ModelService[];
  /** The period start of its last invoice or credit. */
  lastBilled: string | null;
  /** Whether a service of it was added, changed plan or was terminated since then. */
  changed: boolean;
}

// ---------- days ----------

/** The 1st of the month after `day`. */
function nextFirst(day: string): string {
  const date = new Date(`${day}T00:00:00.000Z`);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
}

/** The 1st of the month before `day` (a 1st). */
function previousFirst(day: string): string {
  const date = new Date(`${day}T00:00:00.000Z`);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - 1, 1)).toISOString().slice(0, 10);
}

/** The last day of the monthly period starting `asOf`. */
function periodLastDay(asOf: string): string {
  return addDays(nextFirst(asOf), -1);
}

const sum = <T>(rows: T[], value: (row: T) => number) => rows.reduce((total, row) => total + value(row), 0);
const eur = (run: BillingRun) => run.amount_total.find((entry) => entry.currency === 'EUR')?.amount ?? 0;
const billable = (service: ModelService) => service.status === 'active' || service.status === 'suspended';

/** The in-advance line of an invoice: `<plan>, <as_of> to <last day>` (not a credit, no "(d of N days)"). */
const ADVANCE_LINE = /^(.+), (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})$/;

describe('Bill runs: invariants under random sequences of days, runs, payments and service changes', () => {
  let t: TestApp;
  let clock: TestClock;
  let year = FIRST_YEAR - 1;
  const outcomes: Record<string, number> = {};
  const count = (key: string) => (outcomes[key] = (outcomes[key] ?? 0) + 1);

  beforeAll(async () => {
    clock = new TestClock(`${FIRST_YEAR}-01-01T10:00:00.000Z`);
    t = await startTestApp(ENV, { clock });
  });
  afterAll(async () => {
    await t.close();
  });

  /** One scenario: a fresh tenant in a year of its own; throws on the first broken invariant. */
  async function play(scenario: Scenario): Promise<void> {
    year += 1;
    clock.set(`${year}-01-${String(scenario.startDay).padStart(2, '0')}T10:00:00.000Z`);
    const tenant = await createTenantWithToken(t, ['admin']);
    const token = tenant.token;
    const api = {
      get: (path: string, query: Record<string, string> = {}) =>
        request(t.http).get(path).query(query).set(bearer(token)),
      post: (path: string, body: object) => request(t.http).post(path).set(bearer(token)).send(body),
    };
    const log: string[] = [];
    const fail = (message: string): never => {
      throw new Error(`${message}\n  year ${year}, commands so far:\n    ${log.join('\n    ')}`);
    };

    const profile = await api.post('/api/v1/billing-profiles', {
      name: 'Monthly',
      currency: 'EUR',
      billing_day: 1,
      payment_terms_days: TERMS_DAYS,
      auto_suspend_after_days: null,
      is_default: true,
    });
    ensure(profile, 201, 'create the default profile');
    const plans: Plan[] = [];
    for (const [i, price] of PRICES.entries()) {
      const plan = await createPlan(t, token, { name: `Plan ${'ABC'[i]} ${year}`, price, currency: 'EUR' });
      plans.push({ id: plan.id, name: plan.name, price });
    }
    const planOf = (id: string) => plans.find((plan) => plan.id === id)!;

    const waitOrder = async (res: Response, what: string): Promise<Order> => {
      ensure(res, 202, what);
      const order = (res.body.data.order ?? res.body.data) as Order;
      const done = await waitForOrder(t, token, order.id, ['completed', 'failed', 'cancelled'], 15_000);
      if (done.status !== 'completed') {
        fail(`${what}: order ${done.status} ${JSON.stringify(done)}`);
      }
      return done;
    };
    const addService = async (subscriber: ModelSubscriber, plan: Plan) => {
      const res = await postService(t, token, subscriber.id, {
        plan_id: plan.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: 'correct-horse-42',
      });
      await waitOrder(res, `add a service on ${plan.name}`);
      const service = res.body.data.service as Service;
      const after = await getService(t, token, service.id);
      if (after.status !== 'active' || after.activated_at?.slice(0, 10) !== clock.today()) {
        fail(`service ${service.id} after activation: ${JSON.stringify(after)} (clock ${clock.today()})`);
      }
      subscriber.services.push({ id: service.id, status: 'active', planId: plan.id });
      subscriber.changed = true;
    };

    const subscribers: ModelSubscriber[] = [];
    for (const planIndex of scenario.subscribers) {
      const created = await createSubscriber(t, token, { status: 'active' });
      const subscriber: ModelSubscriber = { id: created.id, services: [], lastBilled: null, changed: false };
      subscribers.push(subscriber);
      await addService(subscriber, plans[planIndex]);
    }
    const pick = (n: number) => subscribers[n % subscribers.length];

    /** Invoice and credit ids seen so far (the ones a run creates are the new ones after it). */
    const knownInvoices = new Set<string>();
    const knownCredits = new Set<string>();
    const runs: BillingRun[] = [];

    const allInvoices = () => listAll<InvoiceRecord>(t, token, '/api/v1/invoices');
    const allCredits = () => listAll<TransactionRecord>(t, token, '/api/v1/transactions', { kind: 'credit' });
    /** The period start an invoice bills: runs issue them due as_of + payment_terms_days. */
    const periodOfInvoice = (invoice: InvoiceRecord) => addDays(invoice.due_date, -TERMS_DAYS);
    const periodOfCredit = (credit: TransactionRecord) => String(credit.metadata?.period_start);

    const runToEnd = async (body: object): Promise<BillingRun> => {
      const res = await api.post('/api/v1/billing-runs', body);
      ensure(res, 202, `start run ${JSON.stringify(body)}`);
      const id = res.body.data.id as string;
      return waitUntil(
        async () => {
          const got = await api.get(`/api/v1/billing-runs/${id}`);
          ensure(got, 200, 'get run');
          return got.body.data as BillingRun;
        },
        (run) => run.status !== 'running',
        { interval: 20, what: `run ${id} ended` },
      );
    };

    const figures = (run: BillingRun) => ({
      subscribers_due: run.subscribers_due,
      subscribers_billed: run.subscribers_billed,
      invoices_created: run.invoices_created,
      credits_created: run.credits_created,
      amount_total: run.amount_total,
      errors: run.errors,
    });

    /** A real run on the clock's day, and what it must have written. */
    const billToday = async (command: { dryFirst: boolean; repeat: boolean }) => {
      const asOf = clock.today();
      const billingDay = asOf.endsWith('-01');
      let dry: BillingRun | undefined;
      if (command.dryFirst) {
        dry = await runToEnd({ as_of: asOf, dry_run: true });
        runs.push(dry);
        const [invoices, credits] = await Promise.all([allInvoices(), allCredits()]);
        if (invoices.some((i) => !knownInvoices.has(i.id)) || credits.some((c) => !knownCredits.has(c.id))) {
          fail(`dry run ${dry.id} wrote invoices or credits`);
        }
      }
      const run = await runToEnd({ as_of: asOf });
      runs.push(run);
      count(
        `run ${billingDay ? 'billing day' : 'other day'} billed ${run.subscribers_billed > 0 ? '>0' : '0'}`,
      );
      if (run.status !== 'completed' || run.errors.length > 0) {
        fail(`run ${JSON.stringify(run)}`);
      }
      if (dry) {
        expect({ dry: figures(dry) }).toEqual({ dry: figures(run) });
      }
      const [invoices, credits] = await Promise.all([allInvoices(), allCredits()]);
      const created = invoices.filter((invoice) => !knownInvoices.has(invoice.id));
      const credited = credits.filter((credit) => !knownCredits.has(credit.id));
      created.forEach((invoice) => knownInvoices.add(invoice.id));
      credited.forEach((credit) => knownCredits.add(credit.id));
      if (credited.length > 0) {
        count('credit created');
      }
      // The run's figures are what it wrote.
      expect({ run: run.id, ...figures(run), amount_total: eur(run) }).toEqual({
        run: run.id,
        ...figures(run),
        subscribers_billed: created.length + credited.length,
        // Due when the run started and not yet billed, less those with nothing to bill: with no run alongside, who
        // it billed.
        subscribers_due: created.length + credited.length,
        invoices_created: created.length,
        credits_created: credited.length,
        amount_total: sum(created, (invoice) => invoice.total),
      });
      if (!billingDay) {
        expect({ asOf, due: run.subscribers_due, billed: run.subscribers_billed }).toEqual({
          asOf,
          due: 0,
          billed: 0,
        });
        return;
      }
      for (const invoice of created) {
        expect({ invoice: invoice.id, period: periodOfInvoice(invoice) }).toEqual({
          invoice: invoice.id,
          period: asOf,
        });
      }
      for (const credit of credited) {
        expect({ credit: credit.id, period: periodOfCredit(credit), positive: credit.amount > 0 }).toEqual({
          credit: credit.id,
          period: asOf,
          positive: true,
        });
      }
      // Exactly once: whoever has a billable service now has one invoice or credit for the period; nobody two.
      for (const subscriber of subscribers) {
        const records = [
          ...invoices.filter((i) => i.subscriber_id === subscriber.id && periodOfInvoice(i) === asOf),
          ...credits.filter((c) => c.subscriber_id === subscriber.id && periodOfCredit(c) === asOf),
        ];
        const expected = subscriber.services.some(billable) ? 1 : records.length > 0 ? 1 : 0;
        if (records.length !== expected) {
          const history = await listAll<Order>(t, token, '/api/v1/provisioning-orders', {
            subscriber_id: subscriber.id,
          });
          fail(
            `subscriber ${subscriber.id} has ${records.length} invoices/credits for ${asOf}, expected ${expected}` +
              `\n  run: ${JSON.stringify(run)}\n  model: ${JSON.stringify(subscriber)}` +
              `\n  its invoices: ${JSON.stringify(invoices.filter((i) => i.subscriber_id === subscriber.id).map((i) => [i.number, i.due_date, i.total, i.lines]))}` +
              `\n  its credits: ${JSON.stringify(credits.filter((c) => c.subscriber_id === subscriber.id).map((c) => [c.amount, c.metadata]))}` +
              `\n  its orders: ${JSON.stringify(history.map((o) => [o.action, o.status, o.plan_id, o.completed_at]))}`,
          );
        }
      }
      // A new invoice bills in advance exactly the subscriber's active/suspended services, each at its plan's price.
      for (const invoice of created) {
        const subscriber = subscribers.find((s) => s.id === invoice.subscriber_id)!;
        const advance = invoice.lines
          .filter((line) => !line.description.startsWith('Credit: ') && ADVANCE_LINE.test(line.description))
          .map((line) => ({ description: line.description, amount: line.amount }))
          .sort((a, b) => a.description.localeCompare(b.description));
        const expected = subscriber.services
          .filter(billable)
          .map((service) => planOf(service.planId))
          .map((plan) => ({
            description: `${plan.name}, ${asOf} to ${periodLastDay(asOf)}`,
            amount: plan.price,
          }))
          .sort((a, b) => a.description.localeCompare(b.description));
        expect({ invoice: invoice.id, advance }).toEqual({ invoice: invoice.id, advance: expected });
        // The in-advance lines come last, after the previous period's adjustments.
        const tail = invoice.lines.slice(invoice.lines.length - expected.length);
        expect(
          tail.every((line) => ADVANCE_LINE.test(line.description) && !/ days\)$/.test(line.description)),
        ).toBe(true);
      }
      // Billed for the previous period in advance and nothing changed since: nothing to true up, only the new period.
      for (const invoice of created) {
        const subscriber = subscribers.find((s) => s.id === invoice.subscriber_id)!;
        if (subscriber.lastBilled === previousFirst(asOf) && !subscriber.changed) {
          count('unchanged subscriber re-billed');
          expect({
            invoice: invoice.id,
            adjustments: invoice.lines.filter((l) => / days\)$/.test(l.description)),
          }).toEqual({ invoice: invoice.id, adjustments: [] });
        }
      }
      for (const record of [...created, ...credited]) {
        const subscriber = subscribers.find((s) => s.id === record.subscriber_id)!;
        subscriber.lastBilled = asOf;
        subscriber.changed = false;
      }
      if (command.repeat) {
        const again = await runToEnd({ as_of: asOf });
        runs.push(again);
        count('repeated run');
        expect({ status: again.status, ...figures(again) }).toMatchObject({
          status: 'completed',
          subscribers_billed: 0,
          invoices_created: 0,
          credits_created: 0,
          amount_total: [],
          errors: [],
        });
        const [afterInvoices, afterCredits] = await Promise.all([allInvoices(), allCredits()]);
        expect({ invoices: afterInvoices.length, credits: afterCredits.length }).toEqual({
          invoices: invoices.length,
          credits: credits.length,
        });
      }
    };

    const openInvoicesOf = async (subscriberId: string) =>
      (await listAll<InvoiceRecord>(t, token, '/api/v1/invoices', { subscriber_id: subscriberId }))
        .filter((invoice) => invoice.status === 'open' || invoice.status === 'partially_paid')
        .sort((a, b) => a.sequence! - b.sequence!);

    for (const command of scenario.commands) {
      log.push(`${clock.today()} ${JSON.stringify(command)}`);
      switch (command.type) {
        case 'advance':
          clock.set(`${addDays(clock.today(), command.days)}T10:00:00.000Z`);
          break;
        case 'billing_day':
          clock.set(`${nextFirst(clock.today())}T10:00:00.000Z`);
          if (command.run) {
            await billToday(command);
          }
          break;
        case 'run':
          await billToday(command);
          break;
        case 'pay': {
          const subscriber = pick(command.sub);
          const payment = await api.post('/api/v1/transactions', {
            subscriber_id: subscriber.id,
            kind: 'payment',
            source: 'external',
            amount: command.amount,
            currency: 'EUR',
            // Allocated by hand below (auto-apply, the default, is the auto-apply suite's).
            auto_apply: false,
          });
          ensure(payment, 201, 'record a payment');
          const open = await openInvoicesOf(subscriber.id);
          if (open.length === 0) {
            count('payment unallocated');
            break;
          }
          let body: object;
          if (command.oldestFirst) {
            body = { strategy: 'oldest_first' };
          } else {
            let left = command.amount;
            const allocations: { invoice_id: string; amount: number }[] = [];
            for (const invoice of open) {
              const amount = Math.min(left, invoice.amount_due);
              if (amount > 0) {
                allocations.push({ invoice_id: invoice.id, amount });
                left -= amount;
              }
            }
            body = { allocations };
          }
          const allocated = await api.post(`/api/v1/transactions/${payment.body.data.id}/allocate`, body);
          ensure(allocated, 200, `allocate ${JSON.stringify(body)}`);
          count(`payment allocated ${command.oldestFirst ? 'oldest_first' : 'to invoices'}`);
          break;
        }
        case 'use_credit': {
          const subscriber = pick(command.sub);
          const credits = (
            await listAll<TransactionRecord>(t, token, '/api/v1/transactions', {
              subscriber_id: subscriber.id,
              kind: 'credit',
            })
          ).filter((credit) => credit.unallocated_amount > 0);
          const open = await openInvoicesOf(subscriber.id);
          if (credits.length === 0 || open.length === 0) {
            break;
          }
          const allocated = await api.post(`/api/v1/transactions/${credits[0].id}/allocate`, {
            strategy: 'oldest_first',
          });
          ensure(allocated, 200, 'allocate a bill-run credit oldest first');
          count('credit allocated');
          break;
        }
        case 'change_plan': {
          const service = pick(command.sub).services.find(billable);
          if (!service) {
            break;
          }
          const current = plans.findIndex((plan) => plan.id === service.planId);
          const next = plans[(current + 1 + (command.plan % (plans.length - 1))) % plans.length];
          await waitOrder(
            await postAction(t, token, service.id, { action: 'change_plan', plan_id: next.id }),
            `change_plan ${service.id} to ${next.name}`,
          );
          service.planId = next.id;
          pick(command.sub).changed = true;
          count('change_plan');
          break;
        }
        case 'suspend_resume': {
          const service = pick(command.sub).services.find(billable);
          if (!service) {
            break;
          }
          const action = service.status === 'active' ? 'suspend' : 'resume';
          await waitOrder(await postAction(t, token, service.id, { action }), `${action} ${service.id}`);
          service.status = action === 'suspend' ? 'suspended' : 'active';
          count(action);
          break;
        }
        case 'terminate': {
          const service = pick(command.sub).services.find(billable);
          if (!service) {
            break;
          }
          await waitOrder(
            await postAction(t, token, service.id, { action: 'terminate' }),
            `terminate ${service.id}`,
          );
          service.status = 'terminated';
          pick(command.sub).changed = true;
          count('terminate');
          break;
        }
        case 'add_service':
          await addService(pick(command.sub), plans[command.plan % plans.length]);
          count('add_service');
          break;
      }
    }
    // The services are as the model has them (no automation acted on them behind the sequence's back).
    for (const subscriber of subscribers) {
      for (const service of subscriber.services) {
        const got = await getService(t, token, service.id);
        expect({ id: got.id, status: got.status, plan_id: got.plan_id }).toEqual({
          id: service.id,
          status: service.status,
          plan_id: service.planId,
        });
      }
    }

    await checkInvariants(t, token, subscribers, runs, fail);
  }

  it('should still bill, on a later run of the same day, a subscriber the first run found with nothing to bill', async () => {
    // The shape the property found: the only service terminated on the billing day before the run (its previous
    // period used in full and billed in advance: no line), then a new service the same day, then a run of that day.
    clock.set('2040-01-10T10:00:00.000Z');
    const tenant = await createTenantWithToken(t, ['admin']);
    const token = tenant.token;
    const post = (path: string, body: object) => request(t.http).post(path).set(bearer(token)).send(body);
    ensure(
      await post('/api/v1/billing-profiles', {
        name: 'Monthly',
        currency: 'EUR',
        billing_day: 1,
        payment_terms_days: TERMS_DAYS,
        auto_suspend_after_days: null,
        is_default: true,
      }),
      201,
      'create the default profile',
    );
    const plan = await createPlan(t, token, { name: 'Plan Z 2040', price: 3100, currency: 'EUR' });
    const subscriber = await createSubscriber(t, token, { status: 'active' });
    const activate = async () => {
      const res = await postService(t, token, subscriber.id, {
        plan_id: plan.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: 'correct-horse-42',
      });
      ensure(res, 202, 'create a service');
      const order = (res.body.data as { order: Order }).order;
      expect((await waitForOrder(t, token, order.id, ['completed', 'failed'], 15_000)).status).toBe(
        'completed',
      );
      return (res.body.data as { service: Service }).service;
    };
    const runOn = async (asOf: string) => {
      const res = await post('/api/v1/billing-runs', { as_of: asOf });
      ensure(res, 202, 'start a run');
      return waitUntil(
        async () =>
          (
            await request(t.http)
              .get(`/api/v1/billing-runs/${res.body.data.id as string}`)
              .set(bearer(token))
          ).body.data as BillingRun,
        (run) => run.status !== 'running',
        { interval: 20, what: `the run of ${asOf} ended` },
      );
    };
    const invoicesOfDay = async (asOf: string) =>
      (await listAll<InvoiceRecord>(t, token, '/api/v1/invoices', { subscriber_id: subscriber.id })).filter(
        (invoice) => addDays(invoice.due_date, -TERMS_DAYS) === asOf,
      );

    const first = await activate();
    clock.set('2040-02-01T10:00:00.000Z');
    expect((await runOn('2040-02-01')).subscribers_billed).toBe(1);
    clock.set('2040-03-01T10:00:00.000Z');
    const terminate = await postAction(t, token, first.id, { action: 'terminate' });
    ensure(terminate, 202, 'terminate');
    await waitForOrder(t, token, (terminate.body.data as Order).id, ['completed'], 15_000);
    // Nothing to bill: February used in full and billed in advance, no billable service left.
    expect(await runOn('2040-03-01')).toMatchObject({ subscribers_due: 0, subscribers_billed: 0 });
    expect(await invoicesOfDay('2040-03-01')).toEqual([]);

    // A new service the same day: the subscriber is due on 2040-03-01 and not billed for its period yet.
    await activate();
    const later = await runOn('2040-03-01');
    const invoices = await invoicesOfDay('2040-03-01');
    expect({
      run: { due: later.subscribers_due, billed: later.subscribers_billed, invoices: later.invoices_created },
      lines: invoices.map((invoice) => invoice.lines.map((line) => [line.description, line.amount])),
    }).toEqual({
      run: { due: 1, billed: 1, invoices: 1 },
      lines: [[['Plan Z 2040, 2040-03-01 to 2040-03-31', 3100]]],
    });
  });

  it(`should keep billing's invariants over ${RUNS} random sequences of days, runs, payments and service changes`, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        await play(scenario);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    // The sequences exercised what they are about.
    const exercised = [
      'run billing day billed >0',
      'run other day billed 0',
      'repeated run',
      'payment allocated oldest_first',
      'payment allocated to invoices',
      'change_plan',
      'terminate',
      'unchanged subscriber re-billed',
    ];
    expect({ missing: exercised.filter((key) => !outcomes[key]), outcomes }).toEqual({
      missing: [],
      outcomes,
    });
  }, 120_000);
});

/** The tenant-wide invariants after a sequence. */
async function checkInvariants(
  t: TestApp,
  token: string,
  subscribers: ModelSubscriber[],
  runs: BillingRun[],
  fail: (message: string) => never,
): Promise<void> {
  const invoices = await listAll<InvoiceRecord>(t, token, '/api/v1/invoices');
  const transactions = await listAll<TransactionRecord>(t, token, '/api/v1/transactions');
  const periodOfInvoice = (invoice: InvoiceRecord) => addDays(invoice.due_date, -TERMS_DAYS);

  // Every invoice: lines sum to the total, total ≥ 0, 0 ≤ amount_paid ≤ total, status in line with what is paid.
  for (const invoice of invoices) {
    const state = {
      id: invoice.id,
      linesSum: sum(invoice.lines, (line) => line.amount),
      linesProducts: invoice.lines.every((line) => line.amount === line.quantity * line.unit_amount),
      nonNegative: invoice.total >= 0,
      paidInRange: invoice.amount_paid >= 0 && invoice.amount_paid <= invoice.total,
      paidPlusDue: invoice.amount_paid + invoice.amount_due,
      paidStatus: invoice.status === 'paid' ? invoice.amount_due === 0 : invoice.amount_due > 0,
    };
    expect(state).toEqual({
      id: invoice.id,
      linesSum: invoice.total,
      linesProducts: true,
      nonNegative: true,
      paidInRange: true,
      paidPlusDue: invoice.total,
      paidStatus: true,
    });
    expect(['open', 'partially_paid', 'paid']).toContain(invoice.status);
  }

  // Every transaction: allocated + unallocated + refunded = amount, nothing negative.
  for (const txn of transactions) {
    expect({
      id: txn.id,
      sum: txn.allocated_amount + txn.unallocated_amount + txn.refunded_amount,
      nonNegative: txn.allocated_amount >= 0 && txn.unallocated_amount >= 0 && txn.refunded_amount >= 0,
    }).toEqual({ id: txn.id, sum: txn.amount, nonNegative: true });
  }

  // No subscriber billed twice for a period (an invoice or a credit per subscriber and period start).
  const billings = [
    ...invoices.map((invoice) => `${invoice.subscriber_id} ${periodOfInvoice(invoice)}`),
    ...transactions
      .filter((txn) => txn.kind === 'credit')
      .map((txn) => `${txn.subscriber_id} ${String(txn.metadata?.period_start)}`),
  ];
  const twice = billings.filter((key, i) => billings.indexOf(key) !== i);
  if (twice.length > 0) {
    fail(`billed twice for a period: ${JSON.stringify(twice)}`);
  }

  // The runs' figures, per day, add up to what exists for that period.
  const realRuns = runs.filter((run) => !run.dry_run);
  for (const asOf of [...new Set(realRuns.map((run) => run.as_of))]) {
    const ofDay = realRuns.filter((run) => run.as_of === asOf);
    const periodInvoices = invoices.filter((invoice) => periodOfInvoice(invoice) === asOf);
    const periodCredits = transactions.filter(
      (txn) => txn.kind === 'credit' && txn.metadata?.period_start === asOf,
    );
    expect({
      asOf,
      billed: sum(ofDay, (run) => run.subscribers_billed),
      invoices: sum(ofDay, (run) => run.invoices_created),
      credits: sum(ofDay, (run) => run.credits_created),
      amount: sum(ofDay, eur),
    }).toEqual({
      asOf,
      billed: periodInvoices.length + periodCredits.length,
      invoices: periodInvoices.length,
      credits: periodCredits.length,
      amount: sum(periodInvoices, (invoice) => invoice.total),
    });
  }

  // One invoice.created per invoice, one transaction.created per transaction.
  const created = await listAll<EventBody>(t, token, '/api/v1/events', { type: 'invoice.created' });
  expect(created.map((event) => event.subject_id).sort()).toEqual(
    invoices.map((invoice) => invoice.id).sort(),
  );

  // Per subscriber: the ledger runs; its last balance_after is the balance endpoint's, and is what the invoices and
  // transactions make it.
  for (const subscriber of subscribers) {
    const entries = await listAll<LedgerEntryRecord>(t, token, `/api/v1/subscribers/${subscriber.id}/ledger`);
    const oldestFirst = [...entries].reverse();
    let running = 0;
    for (const entry of oldestFirst) {
      expect(entry.currency).toBe('EUR');
      running += entry.amount;
      expect({ id: entry.id, balance_after: entry.balance_after }).toEqual({
        id: entry.id,
        balance_after: running,
      });
    }
    const res = await request(t.http).get(`/api/v1/subscribers/${subscriber.id}/balance`).set(bearer(token));
    ensure(res, 200, 'get balance');
    const balance =
      (res.body.data.balances as { currency: string; balance: number }[]).find(
        (row) => row.currency === 'EUR',
      )?.balance ?? 0;
    const own = invoices.filter((invoice) => invoice.subscriber_id === subscriber.id);
    const txns = transactions.filter((txn) => txn.subscriber_id === subscriber.id);
    const owed =
      sum(own, (invoice) => invoice.total) +
      sum(
        txns.filter((txn) => txn.kind === 'debit' || txn.kind === 'refund'),
        (txn) => txn.amount,
      ) -
      sum(
        txns.filter((txn) => txn.kind === 'payment' || txn.kind === 'credit'),
        (txn) => txn.amount,
      );
    expect({ subscriber: subscriber.id, last: entries[0]?.balance_after ?? 0, balance }).toEqual({
      subscriber: subscriber.id,
      last: owed,
      balance: owed,
    });
  }
}
