import request from 'supertest';
import { listAll } from '../support/billing-factory';
import { type EventBody, ISO_MS, listEvents, postBillingProfile } from '../support/subscriber-factory';
import { expectError, expectList, expectSuccess, expectNotFound, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createPlan,
  getService,
  postAction,
  postService,
  uniquePppoeUsername,
} from '../support/provisioning-factory';
import { createTenantWithToken } from '../support/test-app';
import {
  actOnService,
  addDays,
  at,
  balanceOf,
  BILLING_RUN_ID,
  BILLING_RUN_KEYS,
  type BillingRun,
  chargeLine,
  createActiveService,
  createBilledSubscriber,
  createCustomer,
  createEurPlan,
  createProfile,
  createRunTenant,
  daysBetween,
  eventsOfTypes,
  eventTypesOfSubject,
  getProfile,
  getRun,
  getRunResponse,
  invoicesOf,
  ledgerOf,
  listProfiles,
  listRuns,
  patchProfile,
  periodLine,
  postRun,
  type RunApp,
  runToCompletion,
  startRun,
  waitForRun,
  startSchedulerApp,
  runAppSuite,
  schedulerAppSuite,
  oneInvoiceRun,
} from '../support/billing-run-factory';
import { baseLines } from '../support/billing-run-factory';
import { ownDatabase, type OwnDatabase } from '../support/own-database';
import { letTimePass, waitUntil } from '../support/wait-for';

/** Issue #16: bill runs (POST/GET /api/v1/billing-runs), the default billing profile, currency_mismatch, the scheduler. */

/**
 * Each test bills days of a year of its own, later than every earlier test's: the clock only ever moves forward within
 * an app, and no test's periods overlap another's.
 */
let lastYear = 2039;
const nextYear = () => ++lastYear;

/** The figures a dry run must report the same as the real run. */
const figures = (run: BillingRun) => ({
  subscribers_due: run.subscribers_due,
  subscribers_billed: run.subscribers_billed,
  invoices_created: run.invoices_created,
  amount_total: run.amount_total,
  errors: run.errors,
});

describe('Bill runs (scheduler off)', () => {
  let app: RunApp;

  runAppSuite((started) => (app = started), { BILLING_RUN_BATCH_SIZE: '2' }, '2039-01-01T00:00:00.000Z');

  describe('who is billed, and the invoice a run issues', () => {
    it('should bill a subscriber with two services on its billing day: lines, total, due date, open, events', async () => {
      const { t, clock } = app;
      const y = nextYear();
      const asOf = `${y}-05-15`;
      const c = await createCustomer(t, { billing_day: 15, payment_terms_days: 10 });
      const token = c.tenant.token;
      const fiber = await createEurPlan(t, token, 2500);
      const tv = await createEurPlan(t, token, 1200);

      // Another subscriber of the same tenant, billed on the 16th.
      const day16 = await createProfile(t, token, { billing_day: 16 });
      const later = await createBilledSubscriber(t, token, day16.id);

      clock.set(at(asOf, '00:30'));
      await createActiveService(t, token, c.subscriberId, fiber.id);
      await createActiveService(t, token, c.subscriberId, tv.id);
      await createActiveService(t, token, later.id, fiber.id);

      clock.set(at(asOf, '03:00'));
      const started = await startRun(t, token, { as_of: asOf });
      expect(started).toMatchObject({ as_of: asOf, dry_run: false, trigger: 'api', status: 'running' });
      const run = await waitForRun(t, token, started.id);
      expect(run).toMatchObject(
        oneInvoiceRun([{ currency: 'EUR', amount: 3700 }], { id: started.id, as_of: asOf }),
      );

      const invoices = await invoicesOf(t, token, c.subscriberId);
      expect(invoices).toHaveLength(1);
      const [invoice] = invoices;
      expect(invoice).toMatchObject({
        subscriber_id: c.subscriberId,
        currency: 'EUR',
        status: 'open',
        total: 3700,
        amount_paid: 0,
        amount_due: 3700,
        due_date: `${y}-05-25`,
        voided_at: null,
        paid_at: null,
      });
      expect(invoice.due_date).toBe(addDays(asOf, 10));
      expect(baseLines(invoice.lines)).toEqual([
        periodLine(fiber.name, 2500, asOf),
        periodLine(tv.name, 1200, asOf),
      ]);
      // The period's last day is shown inclusive: 15 May to 14 June.
      expect(invoice.lines.map((line) => line.description)).toEqual([
        `${fiber.name}, ${y}-05-15 to ${y}-06-14`,
        `${tv.name}, ${y}-05-15 to ${y}-06-14`,
      ]);
      expect(invoice.lines.map((line) => [line.quantity, line.unit_amount, line.amount])).toEqual([
        [1, 2500, 2500],
        [1, 1200, 1200],
      ]);
      expect(await eventTypesOfSubject(t, token, invoice.id)).toEqual([
        'invoice.created',
        'invoice.finalized',
      ]);
      const created = await listEvents(t, token, { subject_id: invoice.id, type: 'invoice.created' });
      expect(created[0].data.object).toMatchObject({ id: invoice.id, total: 3700, status: 'open' });

      // The subscriber billed on the 16th was not due on the 15th.
      expect(await invoicesOf(t, token, later.id)).toEqual([]);

      // ... and is on the 16th, while the first one is not billed again. Its previous period [04-16, 05-16) has 30
      // days, of which it used one (05-15, its activation day) not billed in advance: 2500 × 1 / 30 = 83.33 → 83.
      const day16Run = addDays(asOf, 1);
      clock.set(at(day16Run, '03:00'));
      const next = await runToCompletion(t, token, { as_of: day16Run });
      expect(next).toMatchObject(oneInvoiceRun([{ currency: 'EUR', amount: 2583 }]));
      const laterInvoices = await invoicesOf(t, token, later.id);
      expect(laterInvoices).toHaveLength(1);
      expect(laterInvoices[0]).toMatchObject({
        total: 2583,
        due_date: addDays(day16Run, 14),
        status: 'open',
      });
      expect(baseLines(laterInvoices[0].lines)).toEqual([
        chargeLine(fiber.name, 2500, asOf, asOf, daysBetween(`${y}-04-16`, day16Run)),
        periodLine(fiber.name, 2500, day16Run),
      ]);
      expect(baseLines([laterInvoices[0].lines[0]])[0]).toEqual({
        description: `${fiber.name}, ${y}-05-15 to ${y}-05-15 (1 of 30 days)`,
        quantity: 1,
        unit_amount: 83,
        amount: 83,
      });
      expect(await invoicesOf(t, token, c.subscriberId)).toHaveLength(1);
    });

    it("should take as_of from the clock's UTC day when the body has none", async () => {
      const { t, clock } = app;
      const y = nextYear();
      const asOf = `${y}-02-07`;
      const c = await createCustomer(t, { billing_day: 7 });
      const plan = await createEurPlan(t, c.tenant.token, 999);
      clock.set(at(asOf, '00:10'));
      await createActiveService(t, c.tenant.token, c.subscriberId, plan.id);
      clock.set(at(asOf, '23:59'));
      const started = await startRun(t, c.tenant.token, {});
      expect(started.as_of).toBe(asOf);
      const run = await waitForRun(t, c.tenant.token, started.id);
      expect(run).toMatchObject({ as_of: asOf, subscribers_billed: 1, invoices_created: 1 });
      const [invoice] = await invoicesOf(t, c.tenant.token, c.subscriberId);
      expect(baseLines(invoice.lines)).toEqual([periodLine(plan.name, 999, asOf)]);
      expect(invoice.lines[0].description).toBe(`${plan.name}, ${y}-02-07 to ${y}-03-06`);
    });

    it('should issue a zero-total invoice paid (plan price 0), with invoice.paid', async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-03-01`;
      const c = await createCustomer(t, { billing_day: 1 });
      const free = await createEurPlan(t, c.tenant.token, 0);
      clock.set(at(asOf, '00:30'));
      await createActiveService(t, c.tenant.token, c.subscriberId, free.id);
      clock.set(at(asOf, '04:00'));
      const run = await runToCompletion(t, c.tenant.token, { as_of: asOf });
      expect(run).toMatchObject({
        status: 'completed',
        subscribers_billed: 1,
        invoices_created: 1,
        errors: [],
      });
      const invoices = await invoicesOf(t, c.tenant.token, c.subscriberId);
      expect(invoices).toHaveLength(1);
      expect(invoices[0]).toMatchObject({
        status: 'paid',
        total: 0,
        amount_due: 0,
        paid_at: expect.any(String),
      });
      expect(baseLines(invoices[0].lines)).toEqual([periodLine(free.name, 0, asOf)]);
      expect(await eventTypesOfSubject(t, c.tenant.token, invoices[0].id)).toEqual([
        'invoice.created',
        'invoice.finalized',
        'invoice.paid',
      ]);
    });
    it('should sum amount_total by currency over subscribers billed in different currencies', async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-09-04`;
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const eurProfile = await createProfile(t, token, { billing_day: 4, currency: 'EUR' });
      const usdProfile = await createProfile(t, token, { billing_day: 4, currency: 'USD' });
      const eur = await createEurPlan(t, token, 1000);
      const usd = await createPlan(t, token, { price: 1700, currency: 'USD' });
      clock.set(at(asOf, '00:30'));
      const inEuro = [
        await createBilledSubscriber(t, token, eurProfile.id),
        await createBilledSubscriber(t, token, eurProfile.id),
      ];
      const inDollar = await createBilledSubscriber(t, token, usdProfile.id);
      for (const subscriber of inEuro) {
        await createActiveService(t, token, subscriber.id, eur.id);
      }
      await createActiveService(t, token, inDollar.id, usd.id);
      await createActiveService(t, token, inDollar.id, usd.id);
      clock.set(at(asOf, '03:00'));
      const run = await runToCompletion(t, token, { as_of: asOf });
      expect(run).toMatchObject({
        status: 'completed',
        subscribers_billed: 3,
        invoices_created: 3,
        errors: [],
      });
      expect([...run.amount_total].sort((x, y) => x.currency.localeCompare(y.currency))).toEqual([
        { currency: 'EUR', amount: 2000 },
        { currency: 'USD', amount: 3400 },
      ]);
      const [dollarInvoice] = await invoicesOf(t, token, inDollar.id);
      expect(dollarInvoice).toMatchObject({ currency: 'USD', total: 3400 });
    });

    it('should bill a service ended before the previous period once: the day it was used, settled at its termination', async () => {
      // Issue #28: every service-day is billed once. The day it was active (01-05) is charged at its termination (a
      // pending charge, 2000 × 1 / 31 = 64.5 → 65), carried by the subscriber's next run; nothing else is due.
      const { t, clock } = app;
      const y = nextYear();
      const c = await createCustomer(t, { billing_day: 5 });
      const plan = await createEurPlan(t, c.tenant.token, 2000);
      clock.set(at(`${y}-01-05`, '00:30'));
      const service = await createActiveService(t, c.tenant.token, c.subscriberId, plan.id);
      clock.set(at(`${y}-01-06`, '10:00'));
      await actOnService(t, c.tenant.token, service.id, { action: 'terminate' });
      clock.set(at(`${y}-03-05`, '03:00'));
      const run = await runToCompletion(t, c.tenant.token, { as_of: `${y}-03-05` });
      expect(run).toMatchObject({
        status: 'completed',
        subscribers_billed: 1,
        invoices_created: 1,
        credits_created: 0,
        amount_total: [{ currency: 'EUR', amount: 65 }],
        errors: [],
      });
      const [invoice] = await invoicesOf(t, c.tenant.token, c.subscriberId);
      expect(baseLines(invoice.lines)).toEqual([
        {
          description: `${plan.name}, ${y}-01-05 to ${y}-01-05 (1 of 31 days)`,
          quantity: 1,
          unit_amount: 65,
          amount: 65,
        },
      ]);
      expect(invoice.lines[0]).toMatchObject({ service_id: service.id, period_start: `${y}-01-05` });
      const again = await runToCompletion(t, c.tenant.token, { as_of: `${y}-03-05` });
      expect(again).toMatchObject({ subscribers_billed: 0, invoices_created: 0 });
    });

    it('should walk past many subscribers billed on another day to bill the due ones after them (batches of 2)', async () => {
      // A batch looks at a window of the next few subscribers (4 per subscriber it may bill): a window holding nobody
      // due must move the run on, not end it.
      const { t, clock } = app;
      const y = nextYear();
      const asOf = `${y}-02-07`;
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const other = await createProfile(t, token, { billing_day: 20, currency: 'EUR' });
      const due = await createProfile(t, token, { billing_day: 7, currency: 'EUR' });
      const plan = await createEurPlan(t, token, 1500);
      clock.set(at(asOf, '00:10'));
      for (let i = 0; i < 12; i++) {
        const subscriber = await createBilledSubscriber(t, token, other.id);
        await createActiveService(t, token, subscriber.id, plan.id);
      }
      const billed: string[] = [];
      for (let i = 0; i < 3; i++) {
        const subscriber = await createBilledSubscriber(t, token, due.id);
        await createActiveService(t, token, subscriber.id, plan.id);
        billed.push(subscriber.id);
      }
      clock.set(at(asOf, '04:00'));

      const dry = await runToCompletion(t, token, { as_of: asOf, dry_run: true });
      const run = await runToCompletion(t, token, { as_of: asOf });
      for (const each of [dry, run]) {
        expect(each).toMatchObject({
          status: 'completed',
          subscribers_due: 3,
          subscribers_billed: 3,
          invoices_created: 3,
          amount_total: [{ currency: 'EUR', amount: 3 * 1500 }],
          errors: [],
        });
      }
      for (const id of billed) {
        expect(await invoicesOf(t, token, id)).toHaveLength(1);
      }
    });
  });

  describe('the default billing profile', () => {
    it('should create a profile with is_default false unless told, and answer it on reads', async () => {
      const { t } = app;
      const tenant = await createRunTenant(t);
      const plain = await createProfile(t, tenant.token);
      expect(plain.is_default).toBe(false);
      expect((await getProfile(t, tenant.token, plain.id)).is_default).toBe(false);
      const dflt = await createProfile(t, tenant.token, { is_default: true });
      expect(dflt.is_default).toBe(true);
      expect((await getProfile(t, tenant.token, dflt.id)).is_default).toBe(true);
    });

    it('should bill a subscriber without a profile through the tenant default', async () => {
      const { t, clock } = app;
      const y = nextYear();
      const asOf = `${y}-06-03`;
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const dflt = await createProfile(t, token, {
        billing_day: 3,
        payment_terms_days: 7,
        currency: 'EUR',
        is_default: true,
      });
      expect(dflt.is_default).toBe(true);
      const subscriber = await createBilledSubscriber(t, token, null);
      expect(subscriber.billing_profile_id).toBeNull();
      const plan = await createEurPlan(t, token, 4100);
      clock.set(at(asOf, '01:00'));
      await createActiveService(t, token, subscriber.id, plan.id);
      clock.set(at(asOf, '05:00'));

      const run = await runToCompletion(t, token, { as_of: asOf });
      expect(run).toMatchObject(oneInvoiceRun([{ currency: 'EUR', amount: 4100 }]));
      const invoices = await invoicesOf(t, token, subscriber.id);
      expect(invoices).toHaveLength(1);
      expect(invoices[0]).toMatchObject({
        currency: 'EUR',
        total: 4100,
        status: 'open',
        due_date: `${y}-06-10`,
      });
      expect(baseLines(invoices[0].lines)).toEqual([periodLine(plan.name, 4100, asOf)]);

      // Another profile made the default (billing day 4, terms 3): the subscriber now bills through it.
      const next = await createProfile(t, token, {
        billing_day: 4,
        payment_terms_days: 3,
        currency: 'EUR',
        is_default: true,
      });
      expect((await getProfile(t, token, dflt.id)).is_default).toBe(false);
      const nextMonth = `${y}-07-03`;
      clock.set(at(nextMonth, '05:00'));
      const skipped = await runToCompletion(t, token, { as_of: nextMonth });
      expect(skipped).toMatchObject({ status: 'completed', subscribers_billed: 0, invoices_created: 0 });
      const onDay4 = `${y}-07-04`;
      clock.set(at(onDay4, '05:00'));
      const billed = await runToCompletion(t, token, { as_of: onDay4 });
      expect(billed).toMatchObject({ status: 'completed', subscribers_billed: 1, invoices_created: 1 });
      const after = await invoicesOf(t, token, subscriber.id);
      expect(after).toHaveLength(2);
      // Its previous period [06-04, 07-04) had 30 days, all on the plan; 06-04..07-03 was billed in advance from
      // 06-03 (period [06-03, 07-03)), and the day 07-03 never: whatever the proration, the new period is in advance.
      expect(after[1]).toMatchObject({ currency: 'EUR', due_date: `${y}-07-07` });
      expect(baseLines(after[1].lines)[after[1].lines.length - 1]).toEqual(
        periodLine(plan.name, 4100, onDay4),
      );
      expect(next.is_default).toBe(true);
    });

    it('should keep one default per tenant: setting it on one profile clears it on the previous one', async () => {
      const { t } = app;
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const first = await createProfile(t, token, { is_default: true });
      const second = await createProfile(t, token, { is_default: true, billing_day: 2 });
      expect(second.is_default).toBe(true);
      expect((await getProfile(t, token, first.id)).is_default).toBe(false);
      let defaults = (await listProfiles(t, token)).filter((profile) => profile.is_default);
      expect(defaults.map((profile) => profile.id)).toEqual([second.id]);

      const res = await patchProfile(t, token, first.id, { is_default: true });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ id: first.id, is_default: true });
      expect((await getProfile(t, token, second.id)).is_default).toBe(false);
      defaults = (await listProfiles(t, token)).filter((profile) => profile.is_default);
      expect(defaults.map((profile) => profile.id)).toEqual([first.id]);

      // Another tenant's default is its own business.
      const other = await createRunTenant(t);
      const theirs = await createProfile(t, other.token, { is_default: true });
      expect((await getProfile(t, token, first.id)).is_default).toBe(true);
      expect((await getProfile(t, other.token, theirs.id)).is_default).toBe(true);
    });

    it('should refuse a non-boolean is_default (422) and leave the tenant without default when it is unset', async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-02-02`;
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      expectError(
        await postBillingProfile(t, token, { name: 'P', currency: 'EUR', billing_day: 2, is_default: 'yes' }),
        422,
        'validation_failed',
        'is_default',
      );
      const dflt = await createProfile(t, token, { billing_day: 2, is_default: true });
      expectError(
        await patchProfile(t, token, dflt.id, { is_default: 1 }),
        422,
        'validation_failed',
        'is_default',
      );
      expect((await getProfile(t, token, dflt.id)).is_default).toBe(true);

      const subscriber = await createBilledSubscriber(t, token, null);
      const plan = await createEurPlan(t, token, 1200);
      clock.set(at(asOf, '00:30'));
      await createActiveService(t, token, subscriber.id, plan.id);
      const res = await patchProfile(t, token, dflt.id, { is_default: false });
      expectSuccess(res);
      expect(res.body.data.is_default).toBe(false);
      expect((await listProfiles(t, token)).filter((profile) => profile.is_default)).toEqual([]);

      clock.set(at(asOf, '03:00'));
      const run = await runToCompletion(t, token, { as_of: asOf });
      expect(run).toMatchObject({ status: 'completed', subscribers_billed: 0, invoices_created: 0 });
      expect(await invoicesOf(t, token, subscriber.id)).toEqual([]);
    });

    it('should let a subscriber with neither profile nor default have services, and skip it in runs', async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-01-01`;
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const subscriber = await createBilledSubscriber(t, token, null);
      const plan = await createEurPlan(t, token, 1500);
      clock.set(at(asOf, '00:30'));
      await createActiveService(t, token, subscriber.id, plan.id);
      clock.set(at(asOf, '03:00'));
      const run = await runToCompletion(t, token, { as_of: asOf });
      expect(run).toMatchObject({ status: 'completed', subscribers_billed: 0, invoices_created: 0 });
      expect(await invoicesOf(t, token, subscriber.id)).toEqual([]);
    });
  });

  describe('currency_mismatch', () => {
    it("should refuse a service on a plan in another currency than the subscriber's profile: 422 on plan_id", async () => {
      const { t } = app;
      const c = await createCustomer(t, { currency: 'EUR' });
      const usd = await createPlan(t, c.tenant.token, { price: 1000, currency: 'USD' });
      const res = await postService(t, c.tenant.token, c.subscriberId, {
        plan_id: usd.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: 'correct-horse-42',
      });
      expectError(res, 422, 'currency_mismatch', 'plan_id');
      const services = await request(t.http)
        .get(`/api/v1/subscribers/${c.subscriberId}/services`)
        .set(bearer(c.tenant.token));
      expectList(services);
      expect(services.body.data).toEqual([]);
    });

    it("should refuse a service whose plan's currency differs from the tenant default's (no profile of its own)", async () => {
      const { t } = app;
      const tenant = await createRunTenant(t);
      await createProfile(t, tenant.token, { currency: 'EUR', is_default: true });
      const subscriber = await createBilledSubscriber(t, tenant.token, null);
      const usd = await createPlan(t, tenant.token, { price: 1000, currency: 'USD' });
      const res = await postService(t, tenant.token, subscriber.id, {
        plan_id: usd.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: 'correct-horse-42',
      });
      expectError(res, 422, 'currency_mismatch', 'plan_id');
    });

    it('should refuse change_plan to a plan in another currency: 422 on plan_id, no order, service unchanged', async () => {
      const { t, clock } = app;
      clock.set(at(`${nextYear()}-01-10`, '10:00'));
      const c = await createCustomer(t, { currency: 'EUR' });
      const eur = await createEurPlan(t, c.tenant.token, 2000);
      const usd = await createPlan(t, c.tenant.token, { price: 2000, currency: 'USD' });
      const service = await createActiveService(t, c.tenant.token, c.subscriberId, eur.id);
      const res = await postAction(t, c.tenant.token, service.id, { action: 'change_plan', plan_id: usd.id });
      expectError(res, 422, 'currency_mismatch', 'plan_id');
      expect(await getService(t, c.tenant.token, service.id)).toEqual(service);
      const orders = await request(t.http)
        .get('/api/v1/provisioning-orders')
        .query({ service_id: service.id })
        .set(bearer(c.tenant.token));
      expectList(orders);
      expect(orders.body.data.map((order: { action: string }) => order.action)).toEqual(['activate']);

      // A plan in the same currency is taken.
      const eur2 = await createEurPlan(t, c.tenant.token, 3000);
      const changed = await actOnService(t, c.tenant.token, service.id, {
        action: 'change_plan',
        plan_id: eur2.id,
      });
      expect(changed.plan_id).toBe(eur2.id);
    });
  });

  describe('exactly once', () => {
    it('should bill nobody twice when a run is repeated for the same as_of (second run subscribers_billed 0)', async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-04-09`;
      const c = await createCustomer(t, { billing_day: 9 });
      const plan = await createEurPlan(t, c.tenant.token, 3300);
      clock.set(at(asOf, '00:30'));
      await createActiveService(t, c.tenant.token, c.subscriberId, plan.id);
      clock.set(at(asOf, '03:00'));
      const first = await runToCompletion(t, c.tenant.token, { as_of: asOf });
      expect(first).toMatchObject({ status: 'completed', subscribers_billed: 1, invoices_created: 1 });
      const second = await runToCompletion(t, c.tenant.token, { as_of: asOf });
      expect(second.id).not.toBe(first.id);
      expect(second).toMatchObject({
        status: 'completed',
        subscribers_due: 0,
        subscribers_billed: 0,
        invoices_created: 0,
        credits_created: 0,
        amount_total: [],
        errors: [],
      });
      expect(await invoicesOf(t, c.tenant.token, c.subscriberId)).toHaveLength(1);
      expect(await eventsOfTypes(t, c.tenant.token, ['invoice.created'])).toHaveLength(1);
    });

    it('should bill each subscriber exactly once when two runs start at the same time (batches of 2)', async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-08-20`;
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const profile = await createProfile(t, token, { billing_day: 20 });
      const plan = await createEurPlan(t, token, 1990);
      clock.set(at(asOf, '00:30'));
      const subscribers: string[] = [];
      for (let i = 0; i < 7; i++) {
        const subscriber = await createBilledSubscriber(t, token, profile.id);
        await createActiveService(t, token, subscriber.id, plan.id);
        subscribers.push(subscriber.id);
      }
      clock.set(at(asOf, '02:30'));

      const [one, two] = await Promise.all([
        postRun(t, token, { as_of: asOf }),
        postRun(t, token, { as_of: asOf }),
      ]);
      expectSuccess(one, 202);
      expectSuccess(two, 202);
      expect(one.body.data.id).not.toBe(two.body.data.id);
      const runs = await Promise.all([
        waitForRun(t, token, one.body.data.id as string),
        waitForRun(t, token, two.body.data.id as string),
      ]);
      expect(runs.map((run) => run.status)).toEqual(['completed', 'completed']);
      expect(runs[0].subscribers_billed + runs[1].subscribers_billed).toBe(7);
      expect(runs[0].invoices_created + runs[1].invoices_created).toBe(7);
      expect(runs.flatMap((run) => run.errors)).toEqual([]);
      const euros = runs.flatMap((run) => run.amount_total).reduce((sum, row) => sum + row.amount, 0);
      expect(euros).toBe(7 * 1990);

      for (const id of subscribers) {
        const invoices = await invoicesOf(t, token, id);
        expect({ id, count: invoices.length }).toEqual({ id, count: 1 });
        expect(baseLines(invoices[0].lines)).toEqual([periodLine(plan.name, 1990, asOf)]);
      }
      expect(await eventsOfTypes(t, token, ['invoice.created'])).toHaveLength(7);
      // Numbered like POST /invoices: the tenant's sequence, no gap, no repeat.
      const numbers: number[] = [];
      for (const id of subscribers) {
        numbers.push(...(await invoicesOf(t, token, id)).map((invoice) => invoice.sequence!));
      }
      expect(numbers.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7]);

      // A third run finds nobody left.
      const third = await runToCompletion(t, token, { as_of: asOf });
      expect(third).toMatchObject({ subscribers_billed: 0, invoices_created: 0 });
    });
  });

  describe('dry run', () => {
    it('should write nothing (no invoice, ledger, balance or invoice event) yet report what the real run then does', async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-10-05`;
      const tenant = await createRunTenant(t);
      const token = tenant.token;
      const profile = await createProfile(t, token, { billing_day: 5 });
      const a = await createEurPlan(t, token, 2990);
      const b = await createEurPlan(t, token, 500);
      clock.set(at(asOf, '00:30'));
      const first = await createBilledSubscriber(t, token, profile.id);
      const second = await createBilledSubscriber(t, token, profile.id);
      await createActiveService(t, token, first.id, a.id);
      await createActiveService(t, token, first.id, b.id);
      await createActiveService(t, token, second.id, a.id);
      clock.set(at(asOf, '06:00'));

      const before = {
        ledger: [await ledgerOf(t, token, first.id), await ledgerOf(t, token, second.id)],
        balance: [await balanceOf(t, token, first.id), await balanceOf(t, token, second.id)],
        events: new Set((await listAll<EventBody>(t, token, '/api/v1/events')).map((event) => event.id)),
      };
      const dry = await runToCompletion(t, token, { as_of: asOf, dry_run: true });
      expect(dry).toMatchObject({
        as_of: asOf,
        dry_run: true,
        status: 'completed',
        subscribers_due: 2,
        subscribers_billed: 2,
        invoices_created: 2,
        credits_created: 0,
        amount_total: [{ currency: 'EUR', amount: 2990 + 500 + 2990 }],
        errors: [],
      });
      expect(await invoicesOf(t, token, first.id)).toEqual([]);
      expect(await invoicesOf(t, token, second.id)).toEqual([]);
      expect([await ledgerOf(t, token, first.id), await ledgerOf(t, token, second.id)]).toEqual(
        before.ledger,
      );
      expect([await balanceOf(t, token, first.id), await balanceOf(t, token, second.id)]).toEqual(
        before.balance,
      );
      expect(await eventsOfTypes(t, token, ['invoice.*', 'transaction.*'])).toEqual([]);
      // No event but the run's own.
      const written = (await listAll<EventBody>(t, token, '/api/v1/events')).filter(
        (event) => !before.events.has(event.id),
      );
      expect(written.map((event) => [event.type, event.subject_id])).toEqual([
        ['billing_run.completed', dry.id],
      ]);

      // The real run after it is not hindered by the dry one, and reports the same figures.
      const real = await runToCompletion(t, token, { as_of: asOf });
      expect(real.dry_run).toBe(false);
      expect(figures(real)).toEqual(figures(dry));
      const [firstInvoice] = await invoicesOf(t, token, first.id);
      expect(firstInvoice).toMatchObject({ total: 3490, status: 'open' });
      expect(await invoicesOf(t, token, second.id)).toHaveLength(1);
      expect((await eventsOfTypes(t, token, ['invoice.created'])).length).toBe(2);
      // The real run's invoice moves the ledger and the balance as POST /invoices does.
      expect(await ledgerOf(t, token, first.id)).toEqual([
        expect.objectContaining({
          type: 'invoice',
          currency: 'EUR',
          amount: 3490,
          balance_after: 3490,
          source_id: firstInvoice.id,
        }),
      ]);
      expect((await balanceOf(t, token, first.id)).balances).toEqual([
        { currency: 'EUR', balance: 3490, open_invoices_due: 3490, unallocated_credit: 0 },
      ]);
    });
  });

  describe('the BillingRun resource', () => {
    it('should answer 202 with a running run of every field, and GET it completed with completed_at', async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-07-12`;
      const c = await createCustomer(t, { billing_day: 12 });
      clock.set(at(asOf, '02:00'));
      const res = await postRun(t, c.tenant.token, { as_of: asOf, dry_run: false });
      expectSuccess(res, 202);
      const started = res.body.data as BillingRun;
      expect(Object.keys(started).sort()).toEqual(BILLING_RUN_KEYS);
      expect(started).toEqual({
        id: expect.stringMatching(BILLING_RUN_ID),
        as_of: asOf,
        dry_run: false,
        trigger: 'api',
        status: 'running',
        subscribers_due: expect.any(Number),
        subscribers_billed: expect.any(Number),
        invoices_created: expect.any(Number),
        credits_created: expect.any(Number),
        amount_total: expect.any(Array),
        errors: expect.any(Array),
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        completed_at: null,
      });

      const done = await waitForRun(t, c.tenant.token, started.id);
      const get = await getRunResponse(t, c.tenant.token, started.id);
      expect(successRecord(get, BILLING_RUN_KEYS)).toEqual({
        ...started,
        status: 'completed',
        // A subscriber without a service is not due.
        subscribers_due: 0,
        subscribers_billed: 0,
        invoices_created: 0,
        credits_created: 0,
        amount_total: [],
        errors: [],
        updated_at: expect.stringMatching(ISO_MS),
        completed_at: expect.stringMatching(ISO_MS),
      });
      expect(get.body.data).toEqual(done);
    });

    it('should list runs newest first, filter by status, and page with limit/starting_after', async () => {
      const { t, clock } = app;
      const y = nextYear();
      const tenant = await createRunTenant(t);
      const ids: string[] = [];
      for (const [i, day] of ['01', '02', '03'].entries()) {
        clock.set(at(`${y}-01-${day}`, `0${i + 2}:00`));
        ids.push((await runToCompletion(t, tenant.token, { as_of: `${y}-01-${day}` })).id);
      }
      const res = await request(t.http).get('/api/v1/billing-runs').set(bearer(tenant.token));
      expectList(res);
      expect(res.body.data.map((run: BillingRun) => run.id)).toEqual([...ids].reverse());
      expect(res.body.data.map((run: BillingRun) => run.as_of)).toEqual([
        `${y}-01-03`,
        `${y}-01-02`,
        `${y}-01-01`,
      ]);
      for (const run of res.body.data as BillingRun[]) {
        expect(Object.keys(run).sort()).toEqual(BILLING_RUN_KEYS);
      }

      const page = await request(t.http)
        .get('/api/v1/billing-runs')
        .query({ limit: '2' })
        .set(bearer(tenant.token));
      expectList(page);
      expect(page.body.data.map((run: BillingRun) => run.id)).toEqual([ids[2], ids[1]]);
      expect(page.body.meta.pagination).toMatchObject({ limit: 2, has_more: true });
      const rest = await request(t.http)
        .get('/api/v1/billing-runs')
        .query({ limit: '2', starting_after: page.body.meta.pagination.next_cursor as string })
        .set(bearer(tenant.token));
      expectList(rest);
      expect(rest.body.data.map((run: BillingRun) => run.id)).toEqual([ids[0]]);
      expect(rest.body.meta.pagination.has_more).toBe(false);

      expect((await listRuns(t, tenant.token, { status: 'completed' })).map((run) => run.id)).toEqual(
        [...ids].reverse(),
      );
      expect(await listRuns(t, tenant.token, { status: 'running' })).toEqual([]);
      expect(await listRuns(t, tenant.token, { status: 'failed' })).toEqual([]);
      expectError(
        await request(t.http)
          .get('/api/v1/billing-runs')
          .query({ status: 'bogus' })
          .set(bearer(tenant.token)),
        400,
        'invalid_query',
        'status',
      );
    });

    it("should answer 404 not_found for another tenant's run and for an unknown id", async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-01-01`;
      clock.set(at(asOf, '03:00'));
      const mine = await createRunTenant(t);
      const theirs = await createRunTenant(t);
      const run = await runToCompletion(t, theirs.token, { as_of: asOf });
      expectNotFound(await getRunResponse(t, mine.token, run.id));
      expectNotFound(await getRunResponse(t, mine.token, 'brun_00000000000000000000000000'));
      expect(await listRuns(t, mine.token)).toEqual([]);
      expect((await getRun(t, theirs.token, run.id)).id).toBe(run.id);
    });

    it.each([
      ['an as_of that is not a date', { as_of: 'yesterday' }, 422, 'validation_failed', 'as_of'],
      ['an as_of that does not exist', { as_of: '2026-02-30' }, 422, 'validation_failed', 'as_of'],
      ['an as_of with a time', { as_of: '2026-02-03T00:00:00Z' }, 422, 'validation_failed', 'as_of'],
      ['a numeric as_of', { as_of: 20260203 }, 422, 'validation_failed', 'as_of'],
      ["a dry_run of 'yes'", { dry_run: 'yes' }, 422, 'validation_failed', 'dry_run'],
      ['a dry_run of 1', { dry_run: 1 }, 422, 'validation_failed', 'dry_run'],
      ['an unknown field', { as_of: '2026-02-03', colour: 'blue' }, 400, 'unknown_field', 'colour'],
    ])('should refuse %s (%j) and start no run', async (_label, body, status, code, field) => {
      const { t } = app;
      const tenant = await createRunTenant(t);
      expectError(await postRun(t, tenant.token, body), status, code, field);
      expect(await listRuns(t, tenant.token)).toEqual([]);
    });

    it('should need billing:write to start a run (billing:read: 403) and billing:read to read runs', async () => {
      const { t, clock } = app;
      clock.set(at(`${nextYear()}-01-01`, '03:00'));
      const reader = await createTenantWithToken(t, ['billing:read']);
      expectError(await postRun(t, reader.token, {}), 403, 'insufficient_scope');
      expect(await listRuns(t, reader.token)).toEqual([]);
      expectError(
        await request(t.http).post('/api/v1/billing-runs').send({}),
        401,
        'authentication_required',
      );
      expectError(await request(t.http).get('/api/v1/billing-runs'), 401, 'authentication_required');

      const outsider = await createTenantWithToken(t, ['subscribers:*', 'provisioning:*']);
      expectError(await postRun(t, outsider.token, {}), 403, 'insufficient_scope');
      expectError(
        await request(t.http).get('/api/v1/billing-runs').set(bearer(outsider.token)),
        403,
        'insufficient_scope',
      );

      const writer = await createTenantWithToken(t, ['billing:write']);
      const res = await postRun(t, writer.token, {});
      expectSuccess(res, 202);
      const both = await createTenantWithToken(t, ['billing:*']);
      const run = await runToCompletion(t, both.token, {});
      expect(run.status).toBe('completed');
    });

    it('should write billing_run.completed with the completed run as data.object', async () => {
      const { t, clock } = app;
      const asOf = `${nextYear()}-11-11`;
      const c = await createCustomer(t, { billing_day: 11 });
      const plan = await createEurPlan(t, c.tenant.token, 1111);
      clock.set(at(asOf, '00:30'));
      await createActiveService(t, c.tenant.token, c.subscriberId, plan.id);
      clock.set(at(asOf, '03:00'));
      const run = await runToCompletion(t, c.tenant.token, { as_of: asOf });
      expect(run.status).toBe('completed');
      const events = await listEvents(t, c.tenant.token, { subject_id: run.id });
      expect(events.map((event) => event.type)).toEqual(['billing_run.completed']);
      expect(events[0].data.object).toEqual(run);
      expect(await listEvents(t, c.tenant.token, { type: 'billing_run.failed' })).toEqual([]);

      // A dry run writes its own completion event too, and nothing else.
      const dry = await runToCompletion(t, c.tenant.token, { as_of: addDays(asOf, 1), dry_run: true });
      const dryEvents = await listEvents(t, c.tenant.token, { subject_id: dry.id });
      expect(dryEvents.map((event) => event.type)).toEqual(['billing_run.completed']);
      expect(dryEvents[0].data.object).toEqual(dry);
    });
  });
});

describe('The bill scheduler (BILLING_SCHEDULER_ENABLED=true)', () => {
  let app: RunApp;
  const day = '2060-06-10';

  schedulerAppSuite(day, (started) => (app = started));

  it('should start no run before BILLING_RUN_HOUR_UTC, then exactly one scheduled run for the day once past it', async () => {
    const { t, clock } = app;
    const tenant = await createRunTenant(t);
    const token = tenant.token;
    const profile = await createProfile(t, token, { billing_day: 10, is_default: true });
    const subscriber = await createBilledSubscriber(t, token, profile.id);
    const plan = await createEurPlan(t, token, 2750);
    await createActiveService(t, token, subscriber.id, plan.id);
    // A tenant without services gets no run.
    const idle = await createRunTenant(t);
    await createBilledSubscriber(t, idle.token, (await createProfile(t, idle.token, { billing_day: 10 })).id);

    // 01:30: many ticks of the scheduler pass (polling real time, not moving the clock), and no run starts: time is
    // let pass on purpose, there being nothing to wait for.
    await letTimePass(750);
    expect(await listRuns(t, token)).toEqual([]);

    clock.set(at(day, '02:05'));
    const runs = await waitUntil(
      () => listRuns(t, token),
      (found) => found.length > 0,
      { what: 'the scheduled run' },
    );
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: 'schedule', as_of: day, dry_run: false });
    const done = await waitForRun(t, token, runs[0].id);
    expect(done).toMatchObject(oneInvoiceRun([{ currency: 'EUR', amount: 2750 }], { trigger: 'schedule' }));
    const invoices = await invoicesOf(t, token, subscriber.id);
    expect(invoices).toHaveLength(1);
    expect(baseLines(invoices[0].lines)).toEqual([periodLine(plan.name, 2750, day)]);

    // More ticks, later the same day: still one run (time let pass on purpose, as above).
    await letTimePass(500);
    clock.set(at(day, '17:45'));
    await letTimePass(500);
    const after = await listRuns(t, token);
    expect(after.map((run) => run.id)).toEqual([runs[0].id]);
    expect(await listRuns(t, idle.token)).toEqual([]);
    expect(await invoicesOf(t, token, subscriber.id)).toHaveLength(1);

    // The next day past 02:00: one more scheduled run, for that day.
    const nextDay = addDays(day, 1);
    clock.set(at(nextDay, '02:00'));
    await waitUntil(
      () => listRuns(t, token),
      (found) => found.length >= 2,
      { what: "the next day's scheduled run" },
    );
    // And no third: more ticks pass (on purpose) before the count.
    await letTimePass(500);
    const both = await listRuns(t, token);
    expect(both.map((run) => [run.trigger, run.as_of])).toEqual([
      ['schedule', nextDay],
      ['schedule', day],
    ]);
  });
});

describe('Two instances sharing the database (scheduler on in both)', () => {
  let one: RunApp;
  let two: RunApp;
  const day = '2062-09-14';

  let database: OwnDatabase | undefined;

  beforeAll(async () => {
    database = await ownDatabase('two_instances');
    one = await startSchedulerApp(day, database);
    two = await startSchedulerApp(day, database);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await database?.drop();
  });

  it('should bill each subscriber once when both instances take a run at once, and schedule one run per tenant and day', async () => {
    const t = one.t;
    const tenant = await createRunTenant(t);
    const token = tenant.token;
    const profile = await createProfile(t, token, { billing_day: 14, is_default: true });
    const plan = await createEurPlan(t, token, 1450);
    const subscribers: string[] = [];
    for (let i = 0; i < 5; i++) {
      const subscriber = await createBilledSubscriber(t, token, i % 2 === 0 ? profile.id : null);
      await createActiveService(t, token, subscriber.id, plan.id);
      subscribers.push(subscriber.id);
    }

    const [a, b] = await Promise.all([
      postRun(one.t, token, { as_of: day }),
      postRun(two.t, token, { as_of: day }),
    ]);
    expectSuccess(a, 202);
    expectSuccess(b, 202);
    const runs = await Promise.all([
      waitForRun(one.t, token, a.body.data.id as string),
      waitForRun(two.t, token, b.body.data.id as string),
    ]);
    expect(runs.map((run) => run.status)).toEqual(['completed', 'completed']);
    expect(runs[0].subscribers_billed + runs[1].subscribers_billed).toBe(5);
    expect(runs[0].invoices_created + runs[1].invoices_created).toBe(5);
    for (const id of subscribers) {
      expect({ id, invoices: (await invoicesOf(t, token, id)).length }).toEqual({ id, invoices: 1 });
    }

    // Past 02:00 on both instances: one scheduled run for the tenant, which finds everybody billed.
    one.clock.set(at(day, '02:05'));
    two.clock.set(at(day, '02:05'));
    const scheduledRuns = async () => (await listRuns(t, token)).filter((run) => run.trigger === 'schedule');
    await waitUntil(scheduledRuns, (found) => found.length > 0, { what: 'a scheduled run' });
    // Both schedulers tick many times (time let pass on purpose) and the second starts no other run.
    await letTimePass(750);
    const scheduled = await scheduledRuns();
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0].as_of).toBe(day);
    const done = await waitForRun(t, token, scheduled[0].id);
    expect(done).toMatchObject({ status: 'completed', subscribers_billed: 0, invoices_created: 0 });
    for (const id of subscribers) {
      expect({ id, invoices: (await invoicesOf(t, token, id)).length }).toEqual({ id, invoices: 1 });
    }
  });
});
