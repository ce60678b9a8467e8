import fc from 'fast-check';
import request, { type Response } from 'supertest';
import { listAll } from '../support/billing-factory';
import { bearer } from '../support/factories';
import {
  postAction,
  postService,
  type Service,
  type ServicePlan,
  uniquePppoeUsername,
  waitForOrder,
} from '../support/provisioning-factory';
import {
  addDays,
  at,
  type BillingRun,
  createEurPlan,
  createProfile,
  createRunTenant,
  listRuns,
  type RunApp,
  runToCompletion,
  waitForService,
  runAppSuite,
} from '../support/billing-run-factory';
import { createSubscriber } from '../support/subscriber-factory';
import { ensure } from '../support/test-app';

/**
 * Issue #28, item 1: every service-day is billed exactly once, whatever happens between and on billing days. Each
 * fast-check run is a fresh tenant in a year of its own (the clock only moves forward) with two billing profiles on
 * random billing days, three monthly EUR plans and two or three subscribers with a service each, then a random
 * sequence of: clock advances of 1..20 days (the bill run of every billing day passed, as the scheduler would, the
 * last day's when the clock leaves it, so what happens on a billing day may come before or after its run), new
 * services, billing-day changes, moves to the other profile, plan changes, suspensions and resumes, terminations,
 * and explicit runs of today. At the end the clock goes on two months (a run on each billing day) so every service is
 * billed past the last day of the sequence and every charge in advance covering a day up to it trued up, and the charges are counted per service and day: each invoice line and
 * each line a bill run credit carried (GET /billing-runs/{id}/items) with a service_id counts +1 (a charge) or −1 (a
 * credit) on each day from period_start to period_end, on its plan. Every day from a service's activation to the
 * sequence's last day (before its termination) must net exactly 1, on the plan the service was on that day; every
 * other day 0, except days after the last day, billed in advance: 0 or 1.
 */

const SEED = 2_028_001;
const RUNS = 14;
const FIRST_YEAR = 2101;
const PRICES = [3100, 4999, 2750];

type Command =
  | { type: 'advance'; days: number }
  | { type: 'activate'; sub: number; plan: number }
  | { type: 'billing_day'; profile: number; day: number }
  | { type: 'move'; sub: number }
  | { type: 'change_plan'; service: number; plan: number }
  | { type: 'suspend_resume'; service: number }
  | { type: 'terminate'; service: number }
  | { type: 'run_today' };

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ type: fc.constant('advance' as const), days: fc.integer({ min: 1, max: 20 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('activate' as const), sub: fc.nat(), plan: fc.nat() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('billing_day' as const),
      profile: fc.nat(),
      day: fc.integer({ min: 1, max: 28 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('move' as const), sub: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('change_plan' as const), service: fc.nat(), plan: fc.nat() }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('suspend_resume' as const), service: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('terminate' as const), service: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('run_today' as const) }) },
);

const scenarioArbitrary = fc.record({
  profileDays: fc.tuple(fc.integer({ min: 1, max: 28 }), fc.integer({ min: 1, max: 28 })),
  subscribers: fc.array(
    fc.record({ profile: fc.nat({ max: 1 }), plan: fc.nat({ max: PRICES.length - 1 }) }),
    {
      minLength: 2,
      maxLength: 3,
    },
  ),
  startDay: fc.integer({ min: 1, max: 28 }),
  commands: fc.array(commandArbitrary, { minLength: 6, maxLength: 14 }),
});

/**
 * Sequences fast-check tries first: a never-billed service whose subscriber's billing day moves later (its first run
 * then comes almost two months after its activation), ended before that run (A), changed plan more than a month
 * before it (B), or both (C: its settlement at the termination charges each day at its plan).
 */
const EXAMPLES: Scenario[] = [
  {
    profileDays: [5, 28],
    subscribers: [
      { profile: 0, plan: 0 },
      { profile: 1, plan: 1 },
    ],
    startDay: 6,
    commands: [
      { type: 'advance', days: 20 },
      { type: 'advance', days: 9 },
      { type: 'billing_day', profile: 0, day: 3 },
      { type: 'advance', days: 16 },
      { type: 'terminate', service: 0 },
    ],
  },
  {
    profileDays: [5, 28],
    subscribers: [
      { profile: 0, plan: 0 },
      { profile: 1, plan: 1 },
    ],
    startDay: 6,
    commands: [
      { type: 'advance', days: 4 },
      { type: 'change_plan', service: 0, plan: 1 },
      { type: 'advance', days: 20 },
      { type: 'advance', days: 5 },
      { type: 'billing_day', profile: 0, day: 3 },
      { type: 'advance', days: 20 },
    ],
  },
  {
    profileDays: [5, 28],
    subscribers: [
      { profile: 0, plan: 0 },
      { profile: 1, plan: 1 },
    ],
    startDay: 6,
    commands: [
      { type: 'advance', days: 4 },
      { type: 'change_plan', service: 0, plan: 1 },
      { type: 'advance', days: 20 },
      { type: 'advance', days: 5 },
      { type: 'billing_day', profile: 0, day: 3 },
      { type: 'advance', days: 16 },
      { type: 'terminate', service: 0 },
    ],
  },
];

type Scenario = {
  profileDays: [number, number];
  subscribers: { profile: number; plan: number }[];
  startDay: number;
  commands: Command[];
};

interface Line {
  description: string;
  amount: number;
  service_id?: string;
  plan_id?: string;
  period_start?: string;
  period_end?: string;
}

interface RunItem {
  billing_run_id: string;
  subscriber_id: string;
  lines: Line[];
  invoice_id: string | null;
  credit_id: string | null;
  error: string | null;
}

interface Invoice {
  id: string;
  subscriber_id: string;
  lines: Line[];
}

interface ModelService {
  id: string;
  sub: number;
  status: 'active' | 'suspended' | 'terminated';
  activatedOn: string;
  terminatedOn: string | null;
  /** The plan set on each day one was set (activation, then plan changes), oldest first. */
  plans: { on: string; planId: string }[];
}

function planOn(service: ModelService, day: string): string {
  let planId = service.plans[0].planId;
  for (const change of service.plans) {
    if (change.on <= day) {
      planId = change.planId;
    }
  }
  return planId;
}

function daysOf(first: string, last: string): string[] {
  const days: string[] = [];
  for (let day = first; day <= last; day = addDays(day, 1)) {
    days.push(day);
  }
  return days;
}

describe('Bill runs: every service-day billed exactly once (issue #28, property)', () => {
  let app: RunApp;
  let year = FIRST_YEAR - 1;
  const seen: Record<string, number> = {};
  const count = (key: string) => (seen[key] = (seen[key] ?? 0) + 1);

  runAppSuite((started) => (app = started), { NETWORK_DRIVER: 'none' }, `${FIRST_YEAR}-01-01T00:00:00.000Z`);

  async function play(scenario: Scenario): Promise<void> {
    const { t, clock } = app;
    year += 1;
    const log: string[] = [];
    const fail = (message: string): never => {
      throw new Error(
        `${message}\n  year ${year}, scenario ${JSON.stringify(scenario)}\n  log:\n    ${log.join('\n    ')}`,
      );
    };
    let today = `${year}-01-${String(scenario.startDay).padStart(2, '0')}`;
    clock.set(at(today, '10:00'));
    const tenant = await createRunTenant(t);
    const token = tenant.token;
    const send = (method: 'post' | 'patch', path: string, body: object) =>
      request(t.http)[method](path).set(bearer(token)).send(body);

    const profiles: { id: string; day: number }[] = [];
    for (const [i, day] of scenario.profileDays.entries()) {
      const profile = await createProfile(t, token, { name: `Profile ${i}`, billing_day: day });
      profiles.push({ id: profile.id, day });
    }
    const plans: ServicePlan[] = [];
    for (const [i, price] of PRICES.entries()) {
      plans.push(await createEurPlan(t, token, price, { name: `Plan ${'ABC'[i]} ${year}` }));
    }
    const planName = new Map(plans.map((plan) => [plan.id, plan.name]));
    const subscribers: { id: string; profile: number }[] = [];
    const services: ModelService[] = [];
    /** Days a run was made on (real runs only), and the runs. */
    const runDays = new Set<string>();

    const runToday = async (why: string) => {
      const run = await runToCompletion(t, token, { as_of: today });
      log.push(`${today} run (${why}): billed ${run.subscribers_billed}, credits ${run.credits_created}`);
      if (run.status !== 'completed' || run.errors.length > 0) {
        fail(`run of ${today}: ${JSON.stringify(run)}`);
      }
      runDays.add(today);
      count('run');
      if (run.subscribers_billed > 0) {
        count('run billed');
      }
    };
    const isBillingDay = (day: string) =>
      profiles.some((profile) => profile.day === Number(day.slice(8, 10)));
    /** The clock leaves `today`: its run if it is a billing day not run yet, then each billing day up to `to`. */
    const advanceTo = async (to: string) => {
      if (!runDays.has(today) && isBillingDay(today)) {
        await runToday('leaving the day');
      }
      for (let day = addDays(today, 1); day < to; day = addDays(day, 1)) {
        if (isBillingDay(day)) {
          today = day;
          clock.set(at(day, '02:30'));
          await runToday('billing day passed');
        }
      }
      today = to;
      clock.set(at(to, '10:00'));
    };

    const completed = async (res: Response, what: string) => {
      ensure(res, 202, what);
      const order = (res.body.data.order ?? res.body.data) as { id: string };
      const done = await waitForOrder(t, token, order.id, ['completed', 'failed', 'cancelled'], 15_000);
      if (done.status !== 'completed') {
        fail(`${what}: order ${JSON.stringify(done)}`);
      }
    };
    const activate = async (sub: number, planIndex: number) => {
      const plan = plans[planIndex % plans.length];
      const res = await postService(t, token, subscribers[sub].id, {
        plan_id: plan.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: 'correct-horse-42',
      });
      await completed(res, `activate a service of subscriber ${sub}`);
      const service = res.body.data.service as Service;
      const active = await waitForService(t, token, service.id, (s) => s.status === 'active');
      if (active.activated_at?.slice(0, 10) !== today) {
        fail(`service ${service.id} activated ${active.activated_at}, the clock on ${today}`);
      }
      services.push({
        id: service.id,
        sub,
        status: 'active',
        activatedOn: today,
        terminatedOn: null,
        plans: [{ on: today, planId: plan.id }],
      });
      log.push(`${today} activate ${service.id} (subscriber ${sub}) on ${plan.name}`);
      count('activate');
    };

    for (const spec of scenario.subscribers) {
      const created = await createSubscriber(t, token, {
        status: 'active',
        billing_profile_id: profiles[spec.profile].id,
      });
      subscribers.push({ id: created.id, profile: spec.profile });
      await activate(subscribers.length - 1, spec.plan);
    }
    const live = () => services.filter((service) => service.status !== 'terminated');

    for (const command of scenario.commands) {
      switch (command.type) {
        case 'advance':
          await advanceTo(addDays(today, command.days));
          break;
        case 'activate':
          await activate(command.sub % subscribers.length, command.plan);
          break;
        case 'billing_day': {
          const profile = profiles[command.profile % profiles.length];
          if (profile.day === command.day) {
            break;
          }
          ensure(
            await send('patch', `/api/v1/billing-profiles/${profile.id}`, { billing_day: command.day }),
            200,
            'PATCH billing_day',
          );
          log.push(
            `${today} profile ${profiles.indexOf(profile)} billing day ${profile.day} → ${command.day}`,
          );
          profile.day = command.day;
          count('billing day changed');
          break;
        }
        case 'move': {
          const subscriber = subscribers[command.sub % subscribers.length];
          const to = 1 - subscriber.profile;
          ensure(
            await send('patch', `/api/v1/subscribers/${subscriber.id}`, {
              billing_profile_id: profiles[to].id,
            }),
            200,
            'move subscriber',
          );
          log.push(
            `${today} subscriber ${subscribers.indexOf(subscriber)} → profile ${to} (day ${profiles[to].day})`,
          );
          subscriber.profile = to;
          if (profiles[0].day !== profiles[1].day) {
            count('moved to another billing day');
          }
          break;
        }
        case 'change_plan': {
          const candidates = live();
          if (candidates.length === 0) {
            break;
          }
          const service = candidates[command.service % candidates.length];
          const plan = plans[command.plan % plans.length];
          if (
            planOn(service, today) === plan.id &&
            service.plans[service.plans.length - 1].planId === plan.id
          ) {
            break;
          }
          await completed(
            await postAction(t, token, service.id, { action: 'change_plan', plan_id: plan.id }),
            `change_plan ${service.id}`,
          );
          service.plans.push({ on: today, planId: plan.id });
          log.push(`${today} change_plan ${service.id} → ${plan.name}`);
          count('change_plan');
          break;
        }
        case 'suspend_resume': {
          const candidates = live();
          if (candidates.length === 0) {
            break;
          }
          const service = candidates[command.service % candidates.length];
          const action = service.status === 'active' ? 'suspend' : 'resume';
          await completed(await postAction(t, token, service.id, { action }), `${action} ${service.id}`);
          service.status = action === 'suspend' ? 'suspended' : 'active';
          log.push(`${today} ${action} ${service.id}`);
          count(action);
          break;
        }
        case 'terminate': {
          const candidates = live();
          if (candidates.length === 0) {
            break;
          }
          const service = candidates[command.service % candidates.length];
          await completed(
            await postAction(t, token, service.id, { action: 'terminate' }),
            `terminate ${service.id}`,
          );
          service.status = 'terminated';
          service.terminatedOn = today;
          log.push(`${today} terminate ${service.id}`);
          count(service.activatedOn === today ? 'terminated the day it started' : 'terminate');
          break;
        }
        case 'run_today':
          await runToday('explicit');
          break;
      }
    }

    // The sequence's last day; then two months on, a run on every billing day, so every service is billed past it and
    // every charge in advance covering a day up to it is trued up (a run after its span: up to a month after it ends).
    const last = today;
    await advanceTo(addDays(last, 62));

    // What was billed: invoice lines, and the lines of the credits bill runs issued.
    const runs = (await listRuns(t, token)).filter((run: BillingRun) => !run.dry_run);
    const items: RunItem[] = [];
    for (const run of runs) {
      items.push(...(await listAll<RunItem>(t, token, `/api/v1/billing-runs/${run.id}/items`)));
    }
    const invoices = await listAll<Invoice>(t, token, '/api/v1/invoices');
    const byId = new Map(invoices.map((invoice) => [invoice.id, invoice]));
    for (const item of items) {
      if (item.error !== null) {
        fail(`run ${item.billing_run_id} could not bill ${item.subscriber_id}: ${item.error}`);
      }
      if (
        item.invoice_id !== null &&
        JSON.stringify(byId.get(item.invoice_id)?.lines) !== JSON.stringify(item.lines)
      ) {
        fail(
          `item of ${item.billing_run_id} differs from invoice ${item.invoice_id}: ${JSON.stringify(item.lines)}`,
        );
      }
    }
    const lines = [
      ...invoices.flatMap((invoice) => invoice.lines),
      ...items.filter((item) => item.credit_id !== null).flatMap((item) => item.lines),
    ];
    if (items.some((item) => item.credit_id !== null)) {
      count('credit issued');
    }
    for (const subscriber of subscribers) {
      const pending = await listAll<{ id: string }>(t, token, `/api/v1/subscribers/${subscriber.id}/charges`);
      if (pending.length > 0) {
        fail(`subscriber ${subscriber.id} still has pending charges: ${JSON.stringify(pending)}`);
      }
    }

    const planOfLine = (line: Line): string => {
      if (line.plan_id) {
        return line.plan_id;
      }
      const text = line.description.replace(/^Credit: /, '');
      const found = plans.find((plan) => text.startsWith(`${plan.name}, `));
      return found ? found.id : fail(`no plan for line ${JSON.stringify(line)}`);
    };
    if (
      lines.some(
        (line) => /\(\d+ of \d+ days\)$/.test(line.description) && !line.description.startsWith('Credit'),
      )
    ) {
      count('prorated charge');
    }

    for (const service of services) {
      const net = new Map<string, Map<string, number>>();
      for (const line of lines.filter((each) => each.service_id === service.id)) {
        if (!line.period_start || !line.period_end || line.amount === 0) {
          fail(`line without a period or amount: ${JSON.stringify(line)}`);
        }
        const sign = line.amount > 0 ? 1 : -1;
        const plan = planOfLine(line);
        for (const day of daysOf(line.period_start!, line.period_end!)) {
          const perPlan = net.get(day) ?? new Map<string, number>();
          perPlan.set(plan, (perPlan.get(plan) ?? 0) + sign);
          net.set(day, perPlan);
        }
      }
      const wrong: string[] = [];
      const lastExpected = service.terminatedOn === null ? last : addDays(service.terminatedOn, -1);
      const days = new Set([...net.keys(), ...daysOf(service.activatedOn, lastExpected)]);
      for (const day of [...days].sort()) {
        const perPlan = net.get(day) ?? new Map<string, number>();
        const total = [...perPlan.values()].reduce((sum, n) => sum + n, 0);
        const inService =
          day >= service.activatedOn && (service.terminatedOn === null || day < service.terminatedOn);
        const expected = planOn(service, day);
        const shown = [...perPlan]
          .filter(([, n]) => n !== 0)
          .map(([plan, n]) => `${planName.get(plan)}:${n}`);
        const ok = !inService
          ? [...perPlan.values()].every((n) => n === 0)
          : day <= last
            ? total === 1 && perPlan.get(expected) === 1
            : total === 0 || (total === 1 && perPlan.get(expected) === 1);
        if (!ok) {
          wrong.push(
            `${day}: ${shown.join(' ') || 'nothing'} (expected ${inService ? planName.get(expected) : 'nothing'})`,
          );
        }
      }
      if (wrong.length > 0) {
        const own = lines
          .filter((line) => line.service_id === service.id)
          .map((line) => `${line.description}: ${line.amount}`);
        fail(
          `service ${service.id} (activated ${service.activatedOn}, terminated ${service.terminatedOn ?? '-'}) ` +
            `billed wrongly on ${wrong.length} days:\n    ${wrong.slice(0, 12).join('\n    ')}\n  its lines:\n    ${own.join('\n    ')}`,
        );
      }
    }
  }

  it(`should bill every service-day exactly once over ${RUNS} random sequences`, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        await play(scenario);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true, examples: EXAMPLES.map((example) => [example]) },
    );
    const exercised = [
      'run billed',
      'activate',
      'billing day changed',
      'moved to another billing day',
      'change_plan',
      'suspend',
      'terminate',
      'credit issued',
      'prorated charge',
    ];
    expect({ missing: exercised.filter((key) => !seen[key]), seen }).toEqual({ missing: [], seen });
  }, 180_000);
});
