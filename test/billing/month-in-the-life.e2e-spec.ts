import request from 'supertest';
import { listAll } from '../support/billing-factory';
import {
  actOnService,
  addDays,
  at,
  baseLines,
  type BillingRun,
  createActiveService,
  type InvoiceRecord,
  invoicesOf,
  listRuns,
} from '../support/billing-run-factory';
import { bearer } from '../support/factories';
import { createPlan, getService, type ServicePlan } from '../support/provisioning-factory';
import {
  type BillingProfile,
  createBillingProfile,
  createSubscriber,
  type EventBody,
  getSubscriber,
} from '../support/subscriber-factory';
import { ensure, type TestApp } from '../support/test-app';
import {
  advanceTestClock,
  type ClockedTenant,
  createClockedTenant,
  startClockApp,
} from '../support/test-clock-factory';
import { waitUntil } from '../support/wait-for';

/**
 * Issue #28, "Done when": a month in the life of an ISP, replayed through the API alone on a test clock (issue #32
 * item 5, docs/test-clocks.md). The app runs on the real system Clock; a live tenant makes a test clock frozen at
 * 1 January 2031 00:00 UTC, and the ISP is the clock's test tenant, acting with the admin token the clock was made
 * with. Its time moves only by POST /test-clocks/{id}/advance: the test advances the clock to 10:00 UTC of each day
 * something happens (1 January to 15 February 2031) and waits for the clock to be `ready` (GET /test-clocks/{id}).
 * By then the advance has carried out, day by day, each day's scheduled bill run (at BILLING_RUN_HOUR_UTC, 02:00;
 * it bills those whose billing day it is), the overdue sweep and suspensions for non-payment, and the rules' reactions
 * to them; the test then acts as the ISP would (the rules react to its acts at the clock's time, the provisioning
 * worker completes its orders), and asserts the whole table: per subscriber its status, its services' statuses, its
 * invoices (total, status, amount due, due date), its balance (GET /subscribers/{id}/balance), its pending charges
 * and its invoice.overdue events. Nothing sets the time, and nothing is read or written but through the API.
 *
 * Every expected figure is literal, worked out by hand in the comments: proration is round_half_up(amount × days /
 * days of the billing period holding them), January 2031 has 31 days, February 28.
 *
 * The cast (20 subscribers, EUR):
 * - profile Residential: billing day 1, payment terms 14 days, suspended 7 days after the due date (auto-apply on);
 * - profile Business: billing day 1, payment terms 30 days, never auto-suspended; its billing day moves to 15 on
 *   10 January;
 * - plans Home 50 (29.99), Home 300 (44.99), Business 1G (119.00), all monthly.
 */

const ISSUE = 'issue #28';

type Name =
  | 'Anna'
  | 'Ben'
  | 'Carla'
  | 'Dmitri'
  | 'Emil'
  | 'Fatima'
  | 'Georg'
  | 'Hanna'
  | 'Ivan'
  | 'Julia'
  | 'Karl'
  | 'Lena'
  | 'Marta'
  | 'Nils'
  | 'Olga'
  | 'Pavel'
  | 'Quantum'
  | 'Rhein'
  | 'Stern'
  | 'Tor';

type PlanKey = 'home50' | 'home300' | 'business';
type ProfileKey = 'residential' | 'business';

/** Who is who: the profile each bills through, and its story (the steps below act it out). */
const CAST: Record<Name, { profile: ProfileKey; story: string }> = {
  Anna: { profile: 'residential', story: 'Home 50 from 1 Jan; pays in full on 5 Jan' },
  Ben: { profile: 'residential', story: 'Home 300 from 1 Jan; pays in full on 10 Jan' },
  Carla: {
    profile: 'residential',
    story: 'Home 50; pays 10.00 on 10 Jan, overdue on 16 Jan, pays the rest on 20 Jan',
  },
  Dmitri: {
    profile: 'residential',
    story: 'Home 50; pays 29.99 on 8 Jan with auto_apply false, allocated by hand on 2 Feb',
  },
  Emil: {
    profile: 'residential',
    story: 'Home 300; never pays, overdue 16 Jan, suspended 23 Jan, pays 25 Jan, restored',
  },
  Fatima: { profile: 'residential', story: 'Home 50 activated on 10 Jan' },
  Georg: { profile: 'residential', story: 'Home 50, changes to Home 300 on 16 Jan' },
  Hanna: { profile: 'residential', story: 'Home 50; suspended by the ISP on 12 Jan, resumed on 18 Jan' },
  Ivan: { profile: 'residential', story: 'Home 300; terminates his service on 20 Jan' },
  Julia: { profile: 'residential', story: 'Home 50; pays on 1 Jan, gets a 5.00 credit on 20 Jan' },
  Karl: { profile: 'residential', story: 'Home 50; buys a router (49.00, a one-off charge) on 18 Jan' },
  Lena: {
    profile: 'residential',
    story: 'Home 50; never pays, cancelled, written off and archived on 27 Jan, pays 20.00 on 2 Feb',
  },
  Marta: { profile: 'residential', story: 'Home 50; pays in full on 12 Jan' },
  Nils: { profile: 'residential', story: 'Home 300 activated on 25 Jan' },
  Olga: { profile: 'residential', story: 'Home 300; pays in full on 10 Jan' },
  Pavel: { profile: 'residential', story: 'Home 50; pays in full on 5 Jan' },
  Quantum: { profile: 'business', story: 'Business 1G from 1 Jan; pays January on 20 Jan' },
  Rhein: { profile: 'business', story: 'Business 1G and Home 300 from 1 Jan; pays January on 27 Jan' },
  Stern: { profile: 'business', story: 'Business 1G activated on 20 Jan, after the move to billing day 15' },
  Tor: { profile: 'business', story: 'Business 1G activated on 5 Jan, before the move; pays on 2 Feb' },
};

const NAMES = Object.keys(CAST) as Name[];

/**
 * One subscriber's line of the table.
 * - status: the subscriber's status, with its suspension reason (`suspended non_payment`);
 * - services: its services' statuses, oldest service first;
 * - invoices: oldest first, each `<total> <status> <amount_due> <due date MM-DD>`;
 * - balance: `<balance>/<open_invoices_due>/<unallocated_credit>` in EUR, `-` while it has no ledger;
 * - pending: the amounts of its pending charges (GET /subscribers/{id}/charges), oldest first;
 * - overdue: how many invoice.overdue events its invoices have had.
 */
interface Row {
  status: string;
  services: string;
  invoices: string[];
  balance: string;
  pending: number[];
  overdue: number;
}

type Table = Record<Name, Row>;

interface UpcomingInvoice {
  as_of: string | null;
  due_date: string | null;
  lines: { description: string; amount: number }[];
  total: number;
  credit_to_apply: number;
  amount_due: number;
}

interface RunItem {
  subscriber_id: string;
  total: number;
  invoice_id: string | null;
  credit_id: string | null;
  error: string | null;
}

const YEAR = '2031';

/** `MM-DD` of 2031 as a day. */
const d = (monthDay: string) => `${YEAR}-${monthDay}`;

describe(`Billing: a month in the life of an ISP on a test clock (${ISSUE}, "Done when")`, () => {
  let t: TestApp;
  /** The ISP: the test tenant of a clock its owner (a live tenant) made, and the owner that advances it. */
  let isp: ClockedTenant;
  const profiles = {} as Record<ProfileKey, BillingProfile>;
  const plans = {} as Record<PlanKey, ServicePlan>;
  const ids = {} as Record<Name, string>;
  const services = Object.fromEntries(NAMES.map((name) => [name, [] as string[]])) as Record<Name, string[]>;
  /** The table as it must be now; each step changes the rows its events change, then asserts all of them. */
  const table = Object.fromEntries(
    NAMES.map((name): [Name, Row] => [
      name,
      { status: 'prospect', services: '', invoices: [], balance: '-', pending: [], overdue: 0 },
    ]),
  ) as Table;

  const token = () => isp.token;
  const api = () => request(t.http);

  function set(name: Name, changes: Partial<Row>): void {
    table[name] = { ...table[name], ...changes };
  }

  // ---------- what the ISP does ----------

  /** A payment of `amount` (EUR) received now; answers the response (201 expected, checked by the caller). */
  function pay(name: Name, amount: number, extra: Record<string, unknown> = {}) {
    return api()
      .post('/api/v1/transactions')
      .set(bearer(token()))
      .send({
        subscriber_id: ids[name],
        kind: 'payment',
        source: 'external',
        amount,
        currency: 'EUR',
        ...extra,
      });
  }

  async function payOk(name: Name, amount: number, extra: Record<string, unknown> = {}) {
    return ensure(await pay(name, amount, extra), 201, `payment of ${amount} by ${name}`).body.data as {
      id: string;
    };
  }

  function moveTo(name: Name, status: string, reason?: string) {
    return api()
      .post(`/api/v1/subscribers/${ids[name]}/status`)
      .set(bearer(token()))
      .send(reason ? { status, reason } : { status });
  }

  async function activate(name: Name, plan: PlanKey): Promise<void> {
    const service = await createActiveService(t, token(), ids[name], plans[plan].id);
    services[name].push(service.id);
  }

  /**
   * Advances the ISP's test clock to `day` at 10:00 UTC and waits for it to be ready there: every day's scheduled
   * bill run up to `day` (at 02:00) has completed, and its overdue sweep, suspensions and the rules' reactions are
   * done. Answers the scheduled runs of `day`.
   */
  async function goTo(day: string): Promise<BillingRun[]> {
    await advanceTestClock(t, isp.owner.token, isp.clock.id, at(day, '10:00'));
    return (await listRuns(t, token())).filter((run) => run.as_of === day && run.trigger === 'schedule');
  }

  // ---------- what the table reads ----------

  async function rowOf(name: Name, overdueBy: Map<string, number>): Promise<Row> {
    const id = ids[name];
    const [subscriber, invoices, balance, pending, serviceRows] = await Promise.all([
      getSubscriber(t, token(), id),
      invoicesOf(t, token(), id),
      api().get(`/api/v1/subscribers/${id}/balance`).set(bearer(token())),
      listAll<{ amount: number; created_at: string; id: string }>(
        t,
        token(),
        `/api/v1/subscribers/${id}/charges`,
      ),
      Promise.all(services[name].map((serviceId) => getService(t, token(), serviceId))),
    ]);
    ensure(balance, 200, `balance of ${name}`);
    const balances = balance.body.data.balances as {
      currency: string;
      balance: number;
      open_invoices_due: number;
      unallocated_credit: number;
    }[];
    const eur = balances.find((row) => row.currency === 'EUR');
    return {
      status: subscriber.suspension_reason
        ? `${subscriber.status} ${subscriber.suspension_reason}`
        : subscriber.status,
      services: serviceRows.map((service) => service.status).join(' '),
      invoices: invoices.map(
        (invoice) => `${invoice.total} ${invoice.status} ${invoice.amount_due} ${invoice.due_date.slice(5)}`,
      ),
      balance:
        balances.length === 0
          ? '-'
          : `${eur?.balance}/${eur?.open_invoices_due}/${eur?.unallocated_credit}${balances.length > 1 ? ' +other currencies' : ''}`,
      pending: pending.reverse().map((charge) => charge.amount),
      overdue: invoices.reduce((sum, invoice) => sum + (overdueBy.get(invoice.id) ?? 0), 0),
    };
  }

  async function snapshot(): Promise<Table> {
    const overdue = await listAll<EventBody>(t, token(), '/api/v1/events', { type: 'invoice.overdue' });
    const overdueBy = new Map<string, number>();
    for (const event of overdue) {
      const invoiceId = event.subject_id ?? '';
      overdueBy.set(invoiceId, (overdueBy.get(invoiceId) ?? 0) + 1);
    }
    const rows = await Promise.all(NAMES.map((name) => rowOf(name, overdueBy)));
    return Object.fromEntries(NAMES.map((name, index) => [name, rows[index]])) as Table;
  }

  /**
   * Asserts the table. The day's bill run, overdue sweep and suspensions are done (the clock is ready); what the
   * step's own actions set off (the rules' reactions at the clock's time, the provisioning worker moving services)
   * comes after them: the table is read until it matches, and compared: on a timeout, the last reading against the
   * expected table. (The next advance reads the rules' reactions to every event before its first sweep, so a reaction
   * that came late and wrong would show in the next step's table.)
   */
  async function expectTable(): Promise<void> {
    const expected = JSON.stringify(table);
    const seen = await waitUntil(snapshot, (now) => JSON.stringify(now) === expected, {
      interval: 100,
      what: 'the table',
    }).catch(() => snapshot());
    expect(seen).toEqual(table);
  }

  /** The lines (description and amount) of the newest invoice of `name`: the one a run just issued. */
  async function newestLines(name: Name): Promise<[string, number][]> {
    const invoices = await invoicesOf(t, token(), ids[name]);
    const newest = invoices[invoices.length - 1];
    return newest ? baseLines(newest.lines).map((line) => [line.description, line.amount]) : [];
  }

  /**
   * Runs every check of a step, even after one fails, and fails with all their messages: a step's table, run figures
   * and lines each tell a part of what went wrong.
   */
  async function checkAll(...checks: (() => unknown)[]): Promise<void> {
    const failures: string[] = [];
    for (const check of checks) {
      try {
        await check();
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    if (failures.length > 0) {
      throw new Error(failures.join('\n\n----\n\n'));
    }
  }

  async function invoiceOf(name: Name, index: number): Promise<InvoiceRecord> {
    const invoices = await invoicesOf(t, token(), ids[name]);
    return invoices[index];
  }

  beforeAll(async () => {
    // The clock stands at 1 January 2031, 00:00 UTC: before the bill run hour (02:00), the ISP sets up its month.
    t = await startClockApp();
    isp = await createClockedTenant(t, at(d('01-01'), '00:00'), 'A month in the life');
    profiles.residential = await createBillingProfile(t, token(), {
      name: 'Residential',
      currency: 'EUR',
      billing_day: 1,
      payment_terms_days: 14,
      auto_suspend_after_days: 7,
    });
    profiles.business = await createBillingProfile(t, token(), {
      name: 'Business',
      currency: 'EUR',
      billing_day: 1,
      payment_terms_days: 30,
      auto_suspend_after_days: null,
    });
    const plan = (name: string, price: number) =>
      createPlan(t, token(), { name, price, currency: 'EUR', billing_period: 'monthly' });
    plans.home50 = await plan('Home 50', 2999);
    plans.home300 = await plan('Home 300', 4499);
    plans.business = await plan('Business 1G', 11900);
    for (const name of NAMES) {
      // Prospects (the default): their first service makes them pending, its activation active (item 8).
      const subscriber = await createSubscriber(t, token(), {
        full_name: name,
        billing_profile_id: profiles[CAST[name].profile].id,
      });
      ids[name] = subscriber.id;
    }
  });

  afterAll(async () => {
    await t?.close();
  });

  it('1 Jan 00:00: services activated before the day is billed', async () => {
    const home50: Name[] = [
      'Anna',
      'Carla',
      'Dmitri',
      'Georg',
      'Hanna',
      'Julia',
      'Karl',
      'Lena',
      'Marta',
      'Pavel',
    ];
    const home300: Name[] = ['Ben', 'Emil', 'Ivan', 'Olga'];
    await Promise.all([
      ...home50.map((name) => activate(name, 'home50')),
      ...home300.map((name) => activate(name, 'home300')),
      activate('Quantum', 'business'),
      // Rhein's two services one after the other: its invoices list them in that order.
      activate('Rhein', 'business').then(() => activate('Rhein', 'home300')),
    ]);
    // Each was a prospect; its service made it pending, the activation active (item 8).
    for (const name of [...home50, ...home300, 'Quantum'] as Name[]) {
      set(name, { status: 'active', services: 'active' });
    }
    set('Rhein', { status: 'active', services: 'active active' });
    // Fatima, Nils, Stern and Tor have no service yet: still prospects.
    await checkAll(
      () => expectTable(),
      async () => expect(await listRuns(t, token())).toEqual([]),
    );
  });

  it('1 Jan: the day’s scheduled run bills the month in advance (Residential and Business both on day 1); Julia pays', async () => {
    const runs = await goTo(d('01-01'));
    await payOk('Julia', 2999);

    // Residential invoices are due 1 Jan + 14 = 15 Jan; Business ones 1 Jan + 30 = 31 Jan.
    for (const name of [
      'Anna',
      'Carla',
      'Dmitri',
      'Georg',
      'Hanna',
      'Karl',
      'Lena',
      'Marta',
      'Pavel',
    ] as Name[]) {
      set(name, { invoices: ['2999 open 2999 01-15'], balance: '2999/2999/0' });
    }
    for (const name of ['Ben', 'Emil', 'Ivan', 'Olga'] as Name[]) {
      set(name, { invoices: ['4499 open 4499 01-15'], balance: '4499/4499/0' });
    }
    // Julia's payment is applied on receipt (auto-apply): 2999 − 2999 = 0.
    set('Julia', { invoices: ['2999 paid 0 01-15'], balance: '0/0/0' });
    set('Quantum', { invoices: ['11900 open 11900 01-31'], balance: '11900/11900/0' });
    // 11900 + 4499 = 16399
    set('Rhein', { invoices: ['16399 open 16399 01-31'], balance: '16399/16399/0' });

    await checkAll(
      () => expectTable(),
      () =>
        expect(runs).toEqual([
          expect.objectContaining({
            trigger: 'schedule',
            status: 'completed',
            // 14 Residential and 2 Business subscribers have a service (Fatima, Nils, Stern and Tor none yet).
            subscribers_due: 16,
            subscribers_billed: 16,
            invoices_created: 16,
            credits_created: 0,
            // 10 × 2999 (Home 50) + 4 × 4499 (Home 300) + 11900 (Quantum) + 16399 (Rhein)
            // = 29990 + 17996 + 11900 + 16399 = 76285
            amount_total: [{ currency: 'EUR', amount: 76285 }],
            errors: [],
          }),
        ]),
      async () => expect(await newestLines('Anna')).toEqual([['Home 50, 2031-01-01 to 2031-01-31', 2999]]),
      async () =>
        expect(await newestLines('Rhein')).toEqual([
          ['Business 1G, 2031-01-01 to 2031-01-31', 11900],
          ['Home 300, 2031-01-01 to 2031-01-31', 4499],
        ]),
    );
  });

  it('5 Jan: Anna, Ivan, Hanna, Pavel and Georg pay in full; Tor (Business) is connected', async () => {
    await goTo(d('01-05'));
    await payOk('Anna', 2999);
    await payOk('Ivan', 4499);
    await payOk('Hanna', 2999);
    await payOk('Pavel', 2999);
    await payOk('Georg', 2999);
    await activate('Tor', 'business');
    for (const name of ['Anna', 'Hanna', 'Pavel', 'Georg'] as Name[]) {
      set(name, { invoices: ['2999 paid 0 01-15'], balance: '0/0/0' });
    }
    set('Ivan', { invoices: ['4499 paid 0 01-15'], balance: '0/0/0' });
    // Tor: prospect → pending → active; not billed before its billing day.
    set('Tor', { status: 'active', services: 'active' });
    await expectTable();
  });

  it('8 Jan: Dmitri pays 29.99 without an allocation (auto_apply false); Karl pays in full', async () => {
    await goTo(d('01-08'));
    const dmitri = await pay('Dmitri', 2999, { auto_apply: false });
    await payOk('Karl', 2999);
    // Dmitri: the invoice stays open, the money waits for the operator: balance 2999 − 2999 = 0, open 2999,
    // unallocated 2999.
    set('Dmitri', { balance: '0/2999/2999' });
    set('Karl', { invoices: ['2999 paid 0 01-15'], balance: '0/0/0' });
    await checkAll(
      () => expectTable(),
      () =>
        expect([
          dmitri.status,
          dmitri.body.data?.allocated_amount,
          dmitri.body.data?.unallocated_amount,
        ]).toEqual([201, 0, 2999]),
    );
  });

  it('10 Jan: Carla pays 10.00 of 29.99; Ben and Olga pay; Business moves to billing day 15; Fatima is connected', async () => {
    await goTo(d('01-10'));
    await payOk('Carla', 1000);
    await payOk('Ben', 4499);
    await payOk('Olga', 4499);
    const moved = await api()
      .patch(`/api/v1/billing-profiles/${profiles.business.id}`)
      .set(bearer(token()))
      .send({ billing_day: 15 });
    await activate('Fatima', 'home50');
    // Carla: 2999 − 1000 = 1999 due.
    set('Carla', { invoices: ['2999 partially_paid 1999 01-15'], balance: '1999/1999/0' });
    set('Ben', { invoices: ['4499 paid 0 01-15'], balance: '0/0/0' });
    set('Olga', { invoices: ['4499 paid 0 01-15'], balance: '0/0/0' });
    set('Fatima', { status: 'active', services: 'active' });
    await checkAll(
      () => expectTable(),
      () => expect([moved.status, moved.body.data?.billing_day]).toEqual([200, 15]),
    );
  });

  it('12 Jan: the ISP suspends Hanna (manual); Marta pays', async () => {
    await goTo(d('01-12'));
    const suspended = await moveTo('Hanna', 'suspended', 'manual');
    await payOk('Marta', 2999);
    // Her service follows her (service_follows_subscriber).
    set('Hanna', { status: 'suspended manual', services: 'suspended' });
    set('Marta', { invoices: ['2999 paid 0 01-15'], balance: '0/0/0' });
    await checkAll(
      () => expectTable(),
      () => expect(suspended.status).toBe(200),
    );
  });

  it('15 Jan: the day’s scheduled run bills Business on its new day: a bridge for those billed to 31 Jan, a full period for Tor', async () => {
    // 13 and 14 Jan are no billing day: their runs (in the advance) bill nobody; today's bills Business.
    const runs = await goTo(d('01-15'));
    // Due 15 Jan + 30 = 14 Feb. (The Residential invoices are due today: not overdue yet.)
    // Quantum: 11900 + 5374 = 17274. Rhein: 16399 + 7406 = 23805.
    set('Quantum', {
      invoices: ['11900 open 11900 01-31', '5374 open 5374 02-14'],
      balance: '17274/17274/0',
    });
    set('Rhein', { invoices: ['16399 open 16399 01-31', '7406 open 7406 02-14'], balance: '23805/23805/0' });
    set('Tor', { invoices: ['15739 open 15739 02-14'], balance: '15739/15739/0' });
    await checkAll(
      () => expectTable(),
      () =>
        expect(runs).toEqual([
          expect.objectContaining({
            status: 'completed',
            subscribers_billed: 3,
            invoices_created: 3,
            credits_created: 0,
            // 5374 + 7406 + 15739 (below)
            amount_total: [{ currency: 'EUR', amount: 28519 }],
            errors: [],
          }),
        ]),
      // Quantum was billed through 31 Jan on day 1; the grid is now 15 Jan – 14 Feb (31 days). Only the bridge
      // 1–14 Feb is billed: 11900 × 14 / 31 = 5374.19 → 5374.
      async () =>
        expect(await newestLines('Quantum')).toEqual([
          ['Business 1G, 2031-02-01 to 2031-02-14 (14 of 31 days)', 5374],
        ]),
      // Rhein: the same bridge for both services: 5374, and 4499 × 14 / 31 = 2031.81 → 2032; 7406.
      async () =>
        expect(await newestLines('Rhein')).toEqual([
          ['Business 1G, 2031-02-01 to 2031-02-14 (14 of 31 days)', 5374],
          ['Home 300, 2031-02-01 to 2031-02-14 (14 of 31 days)', 2032],
        ]),
      // Tor, connected 5 Jan, never billed: 5–14 Jan in the grid period 15 Dec – 14 Jan (31 days):
      // 11900 × 10 / 31 = 3838.71 → 3839; then 15 Jan – 14 Feb in advance, 11900. 15739.
      async () =>
        expect(await newestLines('Tor')).toEqual([
          ['Business 1G, 2031-01-05 to 2031-01-14 (10 of 31 days)', 3839],
          ['Business 1G, 2031-01-15 to 2031-02-14', 11900],
        ]),
    );
  });

  it('16 Jan: Carla, Emil and Lena are overdue, Dmitri (paid, unallocated) is not; Georg moves to Home 300', async () => {
    await goTo(d('01-16'));
    await actOnService(t, token(), services.Georg[0], {
      action: 'change_plan',
      plan_id: plans.home300.id,
    });
    // One invoice.overdue each for what is really owed past 15 Jan: Carla's 1999, Emil's 4499, Lena's 2999. Dmitri's
    // 2999 is covered by his unapplied 2999: none.
    set('Carla', { overdue: 1 });
    set('Emil', { overdue: 1 });
    set('Lena', { overdue: 1 });
    await checkAll(
      () => expectTable(),
      // The overdue sweep of the advance's 16 Jan stop (the run hour, 02:00), dated by the clock.
      async () =>
        expect(
          (await listAll<EventBody>(t, token(), '/api/v1/events', { type: 'invoice.overdue' })).map(
            (event) => event.created_at,
          ),
        ).toEqual(Array.from({ length: 3 }, () => at(d('01-16'), '02:00'))),
      // The invoices' own `overdue` flag is per invoice, on the clock's day (16 Jan, not the real date): Dmitri's
      // reads true too, unpaid past its due date whatever his unapplied payment; the invoice.overdue events above are
      // what judge money really owed.
      async () =>
        expect(
          Object.fromEntries(
            await Promise.all(
              (['Carla', 'Dmitri', 'Emil', 'Lena', 'Julia'] as Name[]).map(async (name) => [
                name,
                (await invoiceOf(name, 0)).overdue,
              ]),
            ),
          ),
        ).toEqual({ Carla: true, Dmitri: true, Emil: true, Lena: true, Julia: false }),
    );
  });

  it('18 Jan: Karl buys a router (a pending charge); the ISP resumes Hanna', async () => {
    await goTo(d('01-18'));
    const charge = await api()
      .post(`/api/v1/subscribers/${ids.Karl}/charges`)
      .set(bearer(token()))
      .send({ description: 'Router TP-Link Archer C6', amount: 4900, currency: 'EUR' });
    const resumed = await moveTo('Hanna', 'active');
    set('Karl', { pending: [4900] });
    set('Hanna', { status: 'active', services: 'active' });
    await checkAll(
      () => expectTable(),
      () => expect(charge.status).toBe(201),
      () =>
        expect(charge.body.data).toMatchObject({
          status: 'pending',
          quantity: 1,
          amount: 4900,
          source: 'api',
        }),
      () => expect(resumed.status).toBe(200),
    );
  });

  it('20 Jan: Carla pays the rest; Julia gets a 5.00 credit; Quantum pays January; Ivan terminates; Stern is connected', async () => {
    await goTo(d('01-20'));
    await payOk('Carla', 1999);
    const credit = await api().post('/api/v1/transactions').set(bearer(token())).send({
      subscriber_id: ids.Julia,
      kind: 'credit',
      source: 'adjustment',
      amount: 500,
      currency: 'EUR',
      description: 'Apology for the outage of 19 Jan',
    });
    await payOk('Quantum', 11900);
    await actOnService(t, token(), services.Ivan[0], { action: 'terminate' });
    await activate('Stern', 'business');
    set('Carla', { invoices: ['2999 paid 0 01-15'], balance: '0/0/0' });
    // Julia has nothing open: the credit waits for her next invoice. 0 − 500 = −500, unallocated 500.
    set('Julia', { balance: '-500/0/500' });
    // Applied oldest due first: the invoice due 31 Jan. 17274 − 11900 = 5374.
    set('Quantum', { invoices: ['11900 paid 0 01-31', '5374 open 5374 02-14'], balance: '5374/5374/0' });
    // Ivan was billed 4499 for 1–31 Jan and used 1–19 Jan: the unused 20–31 Jan (12 of 31 days) are credited at
    // once as a pending charge: 4499 − 4499 × 19 / 31 = 4499 − 2757.45 → 4499 − 2757 = 1742.
    set('Ivan', { services: 'terminated', pending: [-1742] });
    set('Stern', { status: 'active', services: 'active' });
    await checkAll(
      () => expectTable(),
      () => expect(credit.status).toBe(201),
    );
  });

  it('22 Jan: the last day of grace, nobody is suspended', async () => {
    await goTo(d('01-22'));
    // Emil's and Lena's invoices are due 15 Jan: 15 + 7 = 22 Jan is still within the grace.
    await expectTable();
  });

  it('23 Jan: Emil and Lena are suspended for non-payment; Dmitri, who paid without an allocation, is not', async () => {
    await goTo(d('01-23'));
    set('Emil', { status: 'suspended non_payment', services: 'suspended' });
    set('Lena', { status: 'suspended non_payment', services: 'suspended' });
    await expectTable();
  });

  it('25 Jan: Emil pays (no allocate call) and is restored automatically; Nils is connected', async () => {
    await goTo(d('01-25'));
    await payOk('Emil', 4499);
    await activate('Nils', 'home300');
    // Auto-apply pays his invoice; paid_up makes him active and his service is resumed.
    set('Emil', { status: 'active', services: 'active', invoices: ['4499 paid 0 01-15'], balance: '0/0/0' });
    set('Nils', { status: 'active', services: 'active' });
    await expectTable();
  });

  it('27 Jan: Lena is cancelled, her invoice written off and she is archived (409 before the write-off); Rhein pays', async () => {
    await goTo(d('01-27'));
    const cancelled = await moveTo('Lena', 'cancelled');
    // Her service is terminated by the rule service_follows_subscriber.
    await waitUntil(
      () => getService(t, token(), services.Lena[0]),
      (service) => service.status === 'terminated',
      { what: "Lena's service terminated" },
    );
    const refused = await moveTo('Lena', 'archived');
    const lenaInvoice = await invoiceOf('Lena', 0);
    const writtenOff = await api()
      .post(`/api/v1/invoices/${lenaInvoice.id}/write-off`)
      .set(bearer(token()))
      .send({ reason: 'moved abroad, no forwarding address' });
    const archived = await moveTo('Lena', 'archived');
    await payOk('Rhein', 16399);

    // Lena was billed 2999 for 1–31 Jan and used 1–26 Jan: 27–31 Jan (5 of 31 days) credited as a pending charge:
    // 2999 − 2999 × 26 / 31 = 2999 − 2515.29 → 2999 − 2515 = 484. Written off ("closes what is due"): nothing is due
    // on the invoice any more; 2999 − 2999 = 0 owed.
    set('Lena', {
      status: 'archived',
      services: 'terminated',
      invoices: ['2999 written_off 0 01-15'],
      balance: '0/0/0',
      pending: [-484],
    });
    // Oldest due first: the invoice due 31 Jan. 23805 − 16399 = 7406.
    set('Rhein', { invoices: ['16399 paid 0 01-31', '7406 open 7406 02-14'], balance: '7406/7406/0' });
    await checkAll(
      () => expectTable(),
      // What 1 Feb will issue, previewed (item 11); the run must then issue exactly this (figures: next step).
      async () =>
        expect(
          Object.fromEntries(
            await Promise.all(
              (['Georg', 'Ivan', 'Julia', 'Karl', 'Nils'] as Name[]).map(async (name) => {
                const res = ensure(
                  await api().get(`/api/v1/subscribers/${ids[name]}/upcoming-invoice`).set(bearer(token())),
                  200,
                  `upcoming invoice of ${name}`,
                );
                const preview = res.body.data as UpcomingInvoice;
                return [
                  name,
                  {
                    as_of: preview.as_of,
                    due_date: preview.due_date,
                    amounts: preview.lines.map((line) => line.amount),
                    total: preview.total,
                    credit_to_apply: preview.credit_to_apply,
                    amount_due: preview.amount_due,
                  },
                ];
              }),
            ),
          ),
        ).toEqual({
          Georg: {
            as_of: d('02-01'),
            due_date: d('02-15'),
            amounts: [-1548, 2322, 4499],
            total: 5273,
            credit_to_apply: 0,
            amount_due: 5273,
          },
          // Nets below zero: a credit will be issued, nothing to pay.
          Ivan: {
            as_of: d('02-01'),
            due_date: d('02-15'),
            amounts: [-1742],
            total: -1742,
            credit_to_apply: 0,
            amount_due: 0,
          },
          // Her 5.00 credit will pay part of it: 2999 − 500 = 2499.
          Julia: {
            as_of: d('02-01'),
            due_date: d('02-15'),
            amounts: [2999],
            total: 2999,
            credit_to_apply: 500,
            amount_due: 2499,
          },
          Karl: {
            as_of: d('02-01'),
            due_date: d('02-15'),
            amounts: [2999, 4900],
            total: 7899,
            credit_to_apply: 0,
            amount_due: 7899,
          },
          Nils: {
            as_of: d('02-01'),
            due_date: d('02-15'),
            amounts: [1016, 4499],
            total: 5515,
            credit_to_apply: 0,
            amount_due: 5515,
          },
        }),
      () => expect(cancelled.status).toBe(200),
      () =>
        expect([refused.status, refused.body.error?.code, refused.body.error?.field]).toEqual([
          409,
          'balance_outstanding',
          'status',
        ]),
      () => expect(refused.body.error?.message).toContain('2999 EUR'),
      () =>
        expect(writtenOff.body.data).toMatchObject({
          status: 'written_off',
          total: 2999,
          amount_paid: 0,
          amount_due: 0,
          amount_written_off: 2999,
        }),
      () => expect(archived.status).toBe(200),
    );
  });

  it('1 Feb: the day’s scheduled run bills Residential: arrears, a plan change, a credit, a charge, a termination', async () => {
    // 28–31 Jan are no billing day: their runs (in the advance) bill nobody.
    const runs = await goTo(d('02-01'));
    // New invoices are due 1 Feb + 14 = 15 Feb.
    for (const name of ['Anna', 'Carla', 'Hanna', 'Marta', 'Pavel'] as Name[]) {
      set(name, { invoices: ['2999 paid 0 01-15', '2999 open 2999 02-15'], balance: '2999/2999/0' });
    }
    for (const name of ['Ben', 'Emil', 'Olga'] as Name[]) {
      set(name, { invoices: ['4499 paid 0 01-15', '4499 open 4499 02-15'], balance: '4499/4499/0' });
    }
    // Dmitri's payment is the operator's to allocate (auto_apply false): it stays unallocated, and still covers his
    // January invoice (past due 17 days), so he is neither overdue nor suspended. 2999 − 2999 + 2999 = 2999 owed,
    // 5998 open, 2999 unallocated.
    set('Dmitri', { invoices: ['2999 open 2999 01-15', '2999 open 2999 02-15'], balance: '2999/5998/2999' });
    set('Fatima', { invoices: ['5127 open 5127 02-15'], balance: '5127/5127/0' });
    set('Georg', { invoices: ['2999 paid 0 01-15', '5273 open 5273 02-15'], balance: '5273/5273/0' });
    // Ivan: the pending −1742 alone nets below zero: a credit of 1742, no invoice. 0 − 1742 = −1742, unallocated 1742.
    set('Ivan', { pending: [], balance: '-1742/0/1742' });
    // Julia: her 5.00 credit pays part of the new invoice when it is issued: 2999 − 500 = 2499 due.
    set('Julia', {
      invoices: ['2999 paid 0 01-15', '2999 partially_paid 2499 02-15'],
      balance: '2499/2499/0',
    });
    set('Karl', {
      invoices: ['2999 paid 0 01-15', '7899 open 7899 02-15'],
      balance: '7899/7899/0',
      pending: [],
    });
    set('Nils', { invoices: ['5515 open 5515 02-15'], balance: '5515/5515/0' });
    // Lena is archived: her services are not billed, but her pending credit (484) is issued by the run as a credit
    // transaction (an archived subscriber is billed its pending charges only): never lost. 0 − 484 = −484, unapplied.
    set('Lena', { balance: '-484/0/484', pending: [] });
    // Business bills on the 15th now.
    await checkAll(
      () => expectTable(),
      () =>
        expect(runs).toEqual([
          expect.objectContaining({
            status: 'completed',
            // 15 Residential subscribers, and archived Lena's pending credit alone.
            subscribers_billed: 16,
            invoices_created: 14,
            credits_created: 2,
            // 7 × 2999 (Anna, Carla, Dmitri, Hanna, Julia, Marta, Pavel) + 3 × 4499 (Ben, Emil, Olga)
            // + 5127 (Fatima) + 5273 (Georg) + 7899 (Karl) + 5515 (Nils) = 20993 + 13497 + 23814 = 58304
            amount_total: [{ currency: 'EUR', amount: 58304 }],
            errors: [],
          }),
        ]),
      // Fatima, connected 10 Jan: 10–31 Jan (22 of 31 days): 2999 × 22 / 31 = 2128.32 → 2128; + 2999. 5127.
      async () =>
        expect(await newestLines('Fatima')).toEqual([
          ['Home 50, 2031-01-10 to 2031-01-31 (22 of 31 days)', 2128],
          ['Home 50, 2031-02-01 to 2031-02-28', 2999],
        ]),
      // Georg, billed Home 50 (2999) for January, on Home 300 from 16 Jan: 16–31 Jan (16 of 31 days) not on Home 50
      // are credited 2999 − 2999 × 15 / 31 = 2999 − 1451.13 → 2999 − 1451 = 1548, and charged on Home 300:
      // 4499 × 16 / 31 = 2322.06 → 2322; then February on Home 300, 4499. −1548 + 2322 + 4499 = 5273.
      async () =>
        expect(await newestLines('Georg')).toEqual([
          ['Credit: Home 50, unused 2031-01-16 to 2031-01-31 (16 of 31 days)', -1548],
          ['Home 300, 2031-01-16 to 2031-01-31 (16 of 31 days)', 2322],
          ['Home 300, 2031-02-01 to 2031-02-28', 4499],
        ]),
      // Karl: February and the router. 2999 + 4900 = 7899.
      async () =>
        expect(await newestLines('Karl')).toEqual([
          ['Home 50, 2031-02-01 to 2031-02-28', 2999],
          ['Router TP-Link Archer C6', 4900],
        ]),
      // Nils, connected 25 Jan: 25–31 Jan (7 of 31 days): 4499 × 7 / 31 = 1015.90 → 1016; + 4499. 5515.
      async () =>
        expect(await newestLines('Nils')).toEqual([
          ['Home 300, 2031-01-25 to 2031-01-31 (7 of 31 days)', 1016],
          ['Home 300, 2031-02-01 to 2031-02-28', 4499],
        ]),
      // What the run billed each subscriber (item 11): Ivan's lines became a credit, not an invoice.
      async () => {
        const items = await listAll<RunItem>(t, token(), `/api/v1/billing-runs/${runs[0]?.id}/items`);
        expect(items).toHaveLength(16);
        const ivan = items.find((item) => item.subscriber_id === ids.Ivan);
        expect(ivan).toMatchObject({ total: -1742, invoice_id: null, error: null });
        expect(ivan?.credit_id).toMatch(/^txn_/);
        expect(items.find((item) => item.subscriber_id === ids.Lena)).toMatchObject({
          total: -484,
          invoice_id: null,
        });
      },
      // Emil and Hanna were suspended part of January: billed in full, a suspended service is billed.
      async () => expect(await newestLines('Emil')).toEqual([['Home 300, 2031-02-01 to 2031-02-28', 4499]]),
      async () => expect(await newestLines('Hanna')).toEqual([['Home 50, 2031-02-01 to 2031-02-28', 2999]]),
    );
  });

  it('2 Feb: the operator allocates Dmitri’s payment; archived Lena pays 20.00; Tor pays', async () => {
    await goTo(d('02-02'));
    const lena = await pay('Lena', 2000);
    await payOk('Tor', 15739);
    const dmitriPayment = (
      await listAll<{ id: string; kind: string }>(t, token(), '/api/v1/transactions', {
        subscriber_id: ids.Dmitri,
      })
    ).find((transaction) => transaction.kind === 'payment');
    const january = await invoiceOf('Dmitri', 0);
    const allocated = await api()
      .post(`/api/v1/transactions/${dmitriPayment?.id}/allocate`)
      .set(bearer(token()))
      .send({ allocations: [{ invoice_id: january.id, amount: 2999 }] });
    // Money received from an archived subscriber is recorded (item 5): −484 − 2000 = −2484, unallocated 2484.
    set('Lena', { balance: '-2484/0/2484' });
    set('Dmitri', { invoices: ['2999 paid 0 01-15', '2999 open 2999 02-15'], balance: '2999/2999/0' });
    set('Tor', { invoices: ['15739 paid 0 02-14'], balance: '0/0/0' });
    await checkAll(
      () => expectTable(),
      () => expect(lena.status).toBe(201),
      () => expect([allocated.status, allocated.body.error?.code]).toEqual([200, undefined]),
    );
  });

  it('15 Feb: the day’s scheduled run bills Business a full period from the 15th; unpaid bridges are overdue', async () => {
    // 3–14 Feb are no billing day: their runs (in the advance) bill nobody.
    const runs = await goTo(d('02-15'));
    // Due 15 Feb + 30 = 17 Mar. Quantum's and Rhein's bridges (due 14 Feb) are overdue; Business is never suspended.
    // Quantum: 5374 + 11900 = 17274; Rhein: 7406 + 16399 = 23805.
    set('Quantum', {
      invoices: ['11900 paid 0 01-31', '5374 open 5374 02-14', '11900 open 11900 03-17'],
      balance: '17274/17274/0',
      overdue: 1,
    });
    set('Rhein', {
      invoices: ['16399 paid 0 01-31', '7406 open 7406 02-14', '16399 open 16399 03-17'],
      balance: '23805/23805/0',
      overdue: 1,
    });
    set('Tor', { invoices: ['15739 paid 0 02-14', '11900 open 11900 03-17'], balance: '11900/11900/0' });
    set('Stern', { invoices: ['21881 open 21881 03-17'], balance: '21881/21881/0' });
    await checkAll(
      () => expectTable(),
      () =>
        expect(runs).toEqual([
          expect.objectContaining({
            status: 'completed',
            subscribers_billed: 4,
            invoices_created: 4,
            credits_created: 0,
            // 11900 (Quantum) + 16399 (Rhein) + 11900 (Tor) + 21881 (Stern) = 62080
            amount_total: [{ currency: 'EUR', amount: 62080 }],
            errors: [],
          }),
        ]),
      // Quantum is billed through 14 Feb (the bridge): the period 15 Feb – 14 Mar, nothing else.
      async () =>
        expect(await newestLines('Quantum')).toEqual([['Business 1G, 2031-02-15 to 2031-03-14', 11900]]),
      async () =>
        expect(await newestLines('Rhein')).toEqual([
          ['Business 1G, 2031-02-15 to 2031-03-14', 11900],
          ['Home 300, 2031-02-15 to 2031-03-14', 4499],
        ]),
      async () =>
        expect(await newestLines('Tor')).toEqual([['Business 1G, 2031-02-15 to 2031-03-14', 11900]]),
      // Stern, connected 20 Jan: 20 Jan – 14 Feb (26 of the 31 days of 15 Jan – 14 Feb): 11900 × 26 / 31 = 9980.65
      // → 9981; + 11900. 21881.
      async () =>
        expect(await newestLines('Stern')).toEqual([
          ['Business 1G, 2031-01-20 to 2031-02-14 (26 of 31 days)', 9981],
          ['Business 1G, 2031-02-15 to 2031-03-14', 11900],
        ]),
      // One scheduled run per day the clock went through, 1 Jan – 15 Feb (each day's run hour was a stop of an
      // advance), all completed; only the tenant's billing days billed anyone: 1 and 15 Jan (Business moved to the
      // 15th), 1 and 15 Feb.
      async () => {
        const scheduled = (await listRuns(t, token())).filter((run) => run.trigger === 'schedule');
        // 31 days of January and 15 of February.
        const days = Array.from({ length: 46 }, (_, index) => addDays(d('01-01'), index));
        expect(scheduled.map((run) => [run.as_of, run.status]).sort()).toEqual(
          days.map((day) => [day, 'completed']),
        );
        expect(
          scheduled
            .filter((run) => run.subscribers_billed > 0)
            .map((run) => run.as_of)
            .sort(),
        ).toEqual(['01-01', '01-15', '02-01', '02-15'].map(d));
      },
    );
  });
});
