import { randomInt } from 'node:crypto';
import request from 'supertest';
import {
  activeCustomer,
  activeService,
  addDays,
  automationActor,
  type AutomationRule,
  automationSuite,
  CLOCK_START,
  daysInMonth,
  eventually,
  getRules,
  holdHorizon,
  invoiceDue,
  invoicesOf,
  listRules,
  moveSubscriber,
  nextMonth,
  nextMonthOf,
  orderCreatedEvent,
  ordersOf,
  overdueEvents,
  overdueSweepRan,
  paidUpRan,
  patchRule,
  pay,
  roundHalfUp,
  RULE_IDS,
  RULE_KEYS,
  runBilling,
  serviceBecomes,
  setDay,
  setRule,
  settle,
  startAutomationApp,
  statusEvents,
  subscriberBecomes,
  tenantEvents,
  TestClock,
  ticketsOf,
  uniquePppoeUsername,
  quietAndServed,
  suspendedForNonPayment,
} from '../support/automation-factory';
import { listAll, type TransactionRecord } from '../support/billing-factory';
import { expectError, expectSuccess, expectNotFound } from '../support/envelope';
import {
  createPlan,
  createService,
  DEFAULT_PPPOE_PASSWORD,
  getService,
  type Order,
  postAction,
  type Service,
  type ServicePlan,
  waitForOrder,
  expectedRows,
  fail,
  rowsOf,
  type ScriptedDriver,
  scriptDriver,
} from '../support/provisioning-factory';
import { createSubscriber, getSubscriber } from '../support/subscriber-factory';
import type { Ticket } from '../support/ticket-factory';
import { startThrowawayCluster, type ThrowawayCluster } from '../support/pg-cluster';
import { createTenantWithToken, type TenantWithToken, type TestApp, issueToken } from '../support/test-app';

/** Issue #16: the automation rules, their switches, and rule 5 (failed provisioning → ticket). */
describe('Automation: rules', () => {
  let t: TestApp;
  let clock: TestClock;
  let driver: ScriptedDriver;
  automationSuite((suite) => ({ t, clock, driver } = suite));

  /** The service's orders as `action status`, oldest first. */
  async function orderLog(token: string, serviceId: string): Promise<string[]> {
    return (await ordersOf(t, token, serviceId)).map((order) => `${order.action} ${order.status}`);
  }

  describe('GET /api/v1/automation/rules', () => {
    it('should list the rules, each with its fields, all enabled for a new tenant', async () => {
      const isp = await createTenantWithToken(t);
      const res = await getRules(t, isp.token);
      expectSuccess(res);
      const rules = res.body.data as AutomationRule[];
      expect(rules.map((rule) => rule.id).sort()).toEqual([...RULE_IDS].sort());
      for (const rule of rules) {
        expect(Object.keys(rule).sort()).toEqual(RULE_KEYS);
        expect(rule.enabled).toBe(true);
        expect(typeof rule.name).toBe('string');
        expect(rule.name.length).toBeGreaterThan(0);
        expect(typeof rule.description).toBe('string');
        expect(rule.description.length).toBeGreaterThan(0);
        expect(Array.isArray(rule.triggers)).toBe(true);
        expect(rule.triggers.length).toBeGreaterThan(0);
        expect(rule.triggers.every((value) => typeof value === 'string')).toBe(true);
        expect(Array.isArray(rule.emits)).toBe(true);
        expect(rule.emits.every((value) => typeof value === 'string')).toBe(true);
      }
    });

    it('should require authentication', async () => {
      expectError(await request(t.http).get('/api/v1/automation/rules'), 401, 'authentication_required');
      expectError(
        await request(t.http).patch('/api/v1/automation/rules/paid_up').send({ enabled: false }),
        401,
        'authentication_required',
      );
    });

    it.each([['automation:read'], ['automation:*'], ['admin'], ['automation:read', 'automation:write']])(
      'should answer the rules to a token with %s',
      async (...scopes) => {
        const isp = await createTenantWithToken(t);
        const token = (await issueToken(t, isp.slug, scopes)).token;
        const res = await getRules(t, token);
        expectSuccess(res);
        expect(res.body.data).toEqual(await listRules(t, isp.token));
      },
    );

    it('should answer 403 insufficient_scope to automation:write alone (writing does not grant reading, as in every domain)', async () => {
      const isp = await createTenantWithToken(t);
      const writer = (await issueToken(t, isp.slug, ['automation:write'])).token;
      expectError(await getRules(t, writer), 403, 'insufficient_scope');
    });

    it('should answer 403 insufficient_scope to a token without an automation scope', async () => {
      const isp = await createTenantWithToken(t);
      const other = (
        await issueToken(t, isp.slug, [
          'subscribers:*',
          'billing:*',
          'provisioning:*',
          'tickets:*',
          'events:read',
        ])
      ).token;
      expectError(await getRules(t, other), 403, 'insufficient_scope');
    });
  });

  describe('PATCH /api/v1/automation/rules/{id}', () => {
    it.each(RULE_IDS)(
      'should switch %s off and on again (200, the rule; automation_rule.updated), for this tenant only',
      async (id) => {
        const isp = await createTenantWithToken(t);
        const neighbour = await createTenantWithToken(t);
        const before = (await listRules(t, isp.token)).find((rule) => rule.id === id)!;

        const off = await patchRule(t, isp.token, id, { enabled: false });
        expectSuccess(off);
        expect(off.body.data).toEqual({ ...before, enabled: false });
        const rules = await listRules(t, isp.token);
        expect(rules.map((rule) => [rule.id, rule.enabled]).sort()).toEqual(
          RULE_IDS.map((rule) => [rule, rule !== id]).sort(),
        );
        // Per tenant: the neighbour's rules are untouched.
        expect((await listRules(t, neighbour.token)).every((rule) => rule.enabled)).toBe(true);

        const updated = await tenantEvents(t, isp.token, 'automation_rule.updated');
        expect(updated).toHaveLength(1);
        expect(updated[0].data.object).toEqual(off.body.data);
        expect(updated[0].actor.type).toBe('token');
        expect(updated[0].request_id).toBe(off.body.meta.request_id);

        const on = await patchRule(t, isp.token, id, { enabled: true });
        expectSuccess(on);
        expect(on.body.data).toEqual(before);
        expect((await listRules(t, isp.token)).every((rule) => rule.enabled)).toBe(true);
        const events = await tenantEvents(t, isp.token, 'automation_rule.updated');
        expect(events.map((event) => event.data.object)).toEqual([off.body.data, on.body.data]);
      },
    );

    it('should take automation:write, and answer 403 insufficient_scope to automation:read and other scopes', async () => {
      const isp = await createTenantWithToken(t);
      const writer = (await issueToken(t, isp.slug, ['automation:write'])).token;
      expectSuccess(await patchRule(t, writer, 'paid_up', { enabled: false }));
      expect((await listRules(t, isp.token)).find((rule) => rule.id === 'paid_up')?.enabled).toBe(false);

      for (const scopes of [
        ['automation:read'],
        ['subscribers:*', 'billing:*', 'provisioning:*', 'tickets:*'],
      ]) {
        const token = (await issueToken(t, isp.slug, scopes)).token;
        expectError(await patchRule(t, token, 'paid_up', { enabled: true }), 403, 'insufficient_scope');
        expectError(
          await patchRule(t, token, 'overdue_invoices', { enabled: false }),
          403,
          'insufficient_scope',
        );
      }
      const rules = await listRules(t, isp.token);
      expect(rules.find((rule) => rule.id === 'paid_up')?.enabled).toBe(false);
      expect(rules.find((rule) => rule.id === 'overdue_invoices')?.enabled).toBe(true);
      expect(await tenantEvents(t, isp.token, 'automation_rule.updated')).toHaveLength(1);
    });

    // The contract says "400 validation_failed"; the project's error catalog answers a wrong value with 422
    // validation_failed and an absent (or null) required field with 400 missing_field, as billing-runs does for as_of.
    it.each([
      ['a string', { enabled: 'false' }],
      ['a number', { enabled: 0 }],
      ['an object', { enabled: { value: false } }],
      ['an array', { enabled: [false] }],
    ])('should answer 422 validation_failed on field enabled for %s', async (_label, body) => {
      const isp = await createTenantWithToken(t);
      expectError(
        await patchRule(t, isp.token, 'overdue_invoices', body),
        422,
        'validation_failed',
        'enabled',
      );
      expect((await listRules(t, isp.token)).every((rule) => rule.enabled)).toBe(true);
      expect(await tenantEvents(t, isp.token, 'automation_rule.updated')).toEqual([]);
    });

    it.each([
      ['missing', {}],
      ['null', { enabled: null }],
    ])('should answer 400 missing_field on field enabled when it is %s', async (_label, body) => {
      const isp = await createTenantWithToken(t);
      expectError(await patchRule(t, isp.token, 'overdue_invoices', body), 400, 'missing_field', 'enabled');
      expect((await listRules(t, isp.token)).every((rule) => rule.enabled)).toBe(true);
      expect(await tenantEvents(t, isp.token, 'automation_rule.updated')).toEqual([]);
    });

    it('should answer 400 unknown_field for a field other than enabled', async () => {
      const isp = await createTenantWithToken(t);
      expectError(
        await patchRule(t, isp.token, 'paid_up', { enabled: false, name: 'x' }),
        400,
        'unknown_field',
        'name',
      );
      expect((await listRules(t, isp.token)).every((rule) => rule.enabled)).toBe(true);
    });

    it('should answer 404 not_found for an unknown rule', async () => {
      const isp = await createTenantWithToken(t);
      for (const id of ['no_such_rule', 'OVERDUE_INVOICES', 'overdue_invoice']) {
        expectNotFound(await patchRule(t, isp.token, id, { enabled: false }));
      }
      expect((await listRules(t, isp.token)).every((rule) => rule.enabled)).toBe(true);
      expect(await tenantEvents(t, isp.token, 'automation_rule.updated')).toEqual([]);
    });
  });

  describe('a disabled rule does nothing for its tenant', () => {
    it('overdue_invoices: no invoice.overdue and no suspension while disabled (another tenant is served), both once enabled again', async () => {
      const { quiet, served } = await quietAndServed(t, 'overdue_invoices');
      const day0 = nextMonth(clock);
      const customers = [];
      for (const isp of [quiet, served]) {
        const customer = await activeCustomer(t, isp.token, { profile: { auto_suspend_after_days: 2 } });
        const invoice = await invoiceDue(t, isp.token, customer.subscriber.id, addDays(day0, 1));
        customers.push({ isp, ...customer, invoice });
      }
      const [a, b] = customers;

      setDay(clock, addDays(day0, 6));
      // The served tenant: overdue, suspended, its service suspended.
      await eventually(
        'invoice.overdue in the served tenant',
        () => overdueEvents(t, b.isp.token, b.invoice.id),
        (events) => events.length === 1,
      );
      await subscriberBecomes(t, b.isp.token, b.subscriber.id, 'suspended');
      await serviceBecomes(t, b.isp.token, b.service.id, 'suspended');
      await overdueSweepRan(t, served.token, clock);

      // The quiet one: nothing.
      expect(await overdueEvents(t, a.isp.token, a.invoice.id)).toEqual([]);
      expect(await getSubscriber(t, a.isp.token, a.subscriber.id)).toMatchObject({
        status: 'active',
        suspension_reason: null,
      });
      expect(await statusEvents(t, a.isp.token, a.subscriber.id)).toEqual([]);
      expect(await orderLog(a.isp.token, a.service.id)).toEqual(['activate completed']);

      // Enabled again, the sweep finds the invoice still overdue.
      await setRule(t, quiet.token, 'overdue_invoices', true);
      const [overdue] = await eventually(
        'invoice.overdue once enabled',
        () => overdueEvents(t, a.isp.token, a.invoice.id),
        (events) => events.length > 0,
      );
      expect(overdue.actor).toEqual(automationActor('overdue_invoices'));
      await subscriberBecomes(t, a.isp.token, a.subscriber.id, 'suspended');
      await serviceBecomes(t, a.isp.token, a.service.id, 'suspended');
    });

    it('service_follows_subscriber: a subscriber suspended while it is disabled keeps its service active, even once it is enabled again', async () => {
      const { quiet, served } = await quietAndServed(t, 'service_follows_subscriber');
      nextMonth(clock);
      const a = await activeCustomer(t, quiet.token);
      const b = await activeCustomer(t, served.token);

      await moveSubscriber(t, quiet.token, a.subscriber.id, 'suspended', 'manual');
      await moveSubscriber(t, served.token, b.subscriber.id, 'suspended', 'manual');
      await serviceBecomes(t, served.token, b.service.id, 'suspended');
      await settle();

      expect((await getService(t, quiet.token, a.service.id)).status).toBe('active');
      expect(await orderLog(quiet.token, a.service.id)).toEqual(['activate completed']);
      expect(await rowsOf(t, a.service.radius_username)).toEqual(
        expectedRows('active', DEFAULT_PPPOE_PASSWORD, a.plan),
      );

      // The suspension happened while disabled: enabling the rule does not act on it later.
      await setRule(t, quiet.token, 'service_follows_subscriber', true);
      await settle();
      expect((await getService(t, quiet.token, a.service.id)).status).toBe('active');
      expect(await orderLog(quiet.token, a.service.id)).toEqual(['activate completed']);

      // A later change is acted on again.
      await moveSubscriber(t, quiet.token, a.subscriber.id, 'cancelled');
      await serviceBecomes(t, quiet.token, a.service.id, 'terminated');
    });

    it('paid_up: a subscriber suspended for non-payment stays suspended when it pays while the rule is disabled', async () => {
      const quiet = await createTenantWithToken(t);
      await setRule(t, quiet.token, 'paid_up', false);
      const {
        subscriber,
        service,
        overdue: invoice,
      } = await suspendedForNonPayment(t, quiet.token, clock, 1500);

      await pay(t, quiet.token, subscriber.id, invoice.id, 1500);
      // A witness in a served tenant, paying after this payment, is reactivated.
      const served = await createTenantWithToken(t);
      await paidUpRan(t, served.token, clock);

      expect(await getSubscriber(t, quiet.token, subscriber.id)).toMatchObject({
        status: 'suspended',
        suspension_reason: 'non_payment',
      });
      expect((await getService(t, quiet.token, service.id)).status).toBe('suspended');
      expect(await orderLog(quiet.token, service.id)).toEqual(['activate completed', 'suspend completed']);

      // The payment came while disabled: enabling the rule does not act on it later.
      await setRule(t, quiet.token, 'paid_up', true);
      await settle();
      expect((await getSubscriber(t, quiet.token, subscriber.id)).status).toBe('suspended');
    });

    it('termination_billing: no credit for a terminated service’s unused days while disabled (the enabled tenant gets it)', async () => {
      const { quiet, served } = await quietAndServed(t, 'termination_billing');
      const day0 = nextMonth(clock);
      const days = daysInMonth(day0);
      const customers = [];
      for (const isp of [quiet, served]) {
        const customer = await activeCustomer(t, isp.token, {
          profile: { billing_day: 1, auto_suspend_after_days: null },
        });
        const run = await runBilling(t, isp.token, day0);
        expect(run).toMatchObject({ status: 'completed', invoices_created: 1 });
        customers.push({ isp, ...customer });
      }

      // Terminated on day0 + 10: 10 days used, the rest unused.
      setDay(clock, addDays(day0, 10));
      for (const { isp, service } of customers) {
        const res = await postAction(t, isp.token, service.id, { action: 'terminate' });
        expectSuccess(res, 202);
        await waitForOrder(t, isp.token, res.body.data.id, ['completed']);
      }

      const next = nextMonthOf(day0);
      setDay(clock, next);
      const credit = 3100 - roundHalfUp((3100 * 10) / days);
      const [a, b] = customers;

      const servedRun = await runBilling(t, served.token, next);
      expect(servedRun).toMatchObject({ status: 'completed', invoices_created: 0, credits_created: 1 });
      const servedCredits = await listAll<TransactionRecord>(t, served.token, '/api/v1/transactions', {
        subscriber_id: b.subscriber.id,
      });
      expect(servedCredits.filter((txn) => txn.kind === 'credit').map((txn) => txn.amount)).toEqual([credit]);

      const quietRun = await runBilling(t, quiet.token, next);
      expect(quietRun).toMatchObject({ status: 'completed', invoices_created: 0, credits_created: 0 });
      const quietTransactions = await listAll<TransactionRecord>(t, quiet.token, '/api/v1/transactions', {
        subscriber_id: a.subscriber.id,
      });
      expect(quietTransactions.filter((txn) => txn.kind === 'credit')).toEqual([]);
      expect(await invoicesOf(t, quiet.token, a.subscriber.id)).toHaveLength(1);
    });

    it('failed_provisioning: a failed order makes no ticket while disabled (another tenant gets one), nor once enabled again', async () => {
      const { quiet, served } = await quietAndServed(t, 'failed_provisioning');
      nextMonth(clock);

      const failing = async (isp: TenantWithToken) => {
        const subscriber = await createSubscriber(t, isp.token, { status: 'active' });
        const pppoe = uniquePppoeUsername();
        driver.script(`${isp.slug}/${pppoe}`, fail('NAS unknown'));
        const { order } = await createService(t, isp.token, subscriber.id, { pppoe_username: pppoe });
        await waitForOrder(t, isp.token, order.id, ['failed']);
        return subscriber.id;
      };
      const quietSubscriber = await failing(quiet);
      const servedSubscriber = await failing(served);
      await eventually(
        'a ticket in the served tenant',
        () => ticketsOf(t, served.token, servedSubscriber),
        (tickets) => tickets.length === 1,
      );
      await settle();
      expect(await ticketsOf(t, quiet.token, quietSubscriber)).toEqual([]);

      await setRule(t, quiet.token, 'failed_provisioning', true);
      await settle();
      expect(await ticketsOf(t, quiet.token, quietSubscriber)).toEqual([]);
    });
  });

  describe('failed_provisioning: an order that ends failed opens exactly one ticket', () => {
    /** The ticket the rule opened for a failed order, once it is there; it must stay the only one. */
    async function ticketFor(isp: TenantWithToken, subscriberId: string): Promise<Ticket> {
      const [ticket] = await eventually(
        `a ticket for ${subscriberId}`,
        () => ticketsOf(t, isp.token, subscriberId),
        (tickets) => tickets.length > 0,
      );
      return ticket;
    }

    function expectTicketOf(ticket: Ticket, order: Order, type: 'installation' | 'incident'): void {
      // Tickets have no service field: the service is named in the metadata, with the order.
      expect(ticket).toMatchObject({
        type,
        priority: 'high',
        subscriber_id: order.subscriber_id,
        metadata: { provisioning_order_id: order.id, service_id: order.service_id },
      });
      // The contract: subject and description name the action and the order's error (last_error).
      expect(ticket.subject).toContain(order.action);
      expect(ticket.description).toContain(order.action);
      expect(ticket.description).toContain(order.last_error!);
    }

    it('should open an installation ticket for a failed activation, once, and not again on later polls or orders', async () => {
      const isp = await createTenantWithToken(t);
      nextMonth(clock);
      const subscriber = await createSubscriber(t, isp.token, { status: 'active' });
      const pppoe = uniquePppoeUsername();
      driver.script(`${isp.slug}/${pppoe}`, fail('NAS unknown: no such BRAS'));
      const { service, order } = await createService(t, isp.token, subscriber.id, { pppoe_username: pppoe });
      const failed = await waitForOrder(t, isp.token, order.id, ['completed', 'failed']);
      expect(failed).toMatchObject({ status: 'failed', last_error: 'NAS unknown: no such BRAS' });

      const ticket = await ticketFor(isp, subscriber.id);
      expectTicketOf(ticket, failed, 'installation');
      const [created] = await tenantEvents(t, isp.token, 'ticket.created');
      expect(created.actor).toEqual(automationActor('failed_provisioning'));
      expect(created.subject_id).toBe(ticket.id);

      await settle();
      // A later, successful order of the same service opens nothing.
      const retry = await postAction(t, isp.token, service.id, { action: 'activate' });
      expectSuccess(retry, 202);
      await waitForOrder(t, isp.token, retry.body.data.id, ['completed']);
      await settle();
      expect((await ticketsOf(t, isp.token, subscriber.id)).map((row) => row.id)).toEqual([ticket.id]);
      expect(await tenantEvents(t, isp.token, 'ticket.created')).toHaveLength(1);
    });

    it.each(['suspend', 'resume', 'change_plan', 'terminate'])(
      'should open one high incident ticket for a failed %s order',
      async (action) => {
        const isp = await createTenantWithToken(t);
        nextMonth(clock);
        const subscriber = await createSubscriber(t, isp.token, { status: 'active' });
        const plan = await createPlan(t, isp.token);
        const other: ServicePlan = await createPlan(t, isp.token, { download_kbps: 100_000 });
        let service: Service = await activeService(t, isp.token, subscriber.id, plan);
        if (action === 'resume') {
          const res = await postAction(t, isp.token, service.id, { action: 'suspend' });
          expectSuccess(res, 202);
          await waitForOrder(t, isp.token, res.body.data.id, ['completed']);
          service = await getService(t, isp.token, service.id);
        }
        const error = `radius refused ${action}`;
        driver.script(service.radius_username, fail(error));
        const res = await postAction(
          t,
          isp.token,
          service.id,
          action === 'change_plan' ? { action, plan_id: other.id } : { action },
        );
        expectSuccess(res, 202);
        const failed = await waitForOrder(t, isp.token, res.body.data.id, ['completed', 'failed']);
        expect(failed).toMatchObject({ status: 'failed', last_error: error });

        const ticket = await ticketFor(isp, subscriber.id);
        expectTicketOf(ticket, failed, 'incident');
        await settle();
        expect(await ticketsOf(t, isp.token, subscriber.id)).toHaveLength(1);
      },
    );

    it('should open one ticket, with the last error, for an order whose transient failures outlast the retries', async () => {
      const isp = await createTenantWithToken(t);
      nextMonth(clock);
      const subscriber = await createSubscriber(t, isp.token, { status: 'active' });
      const service = await activeService(t, isp.token, subscriber.id, await createPlan(t, isp.token));
      // One attempt, then one per retry delay (0.05,0.05): three transient failures spend them all.
      driver.script(
        service.radius_username,
        fail('radius down', true),
        fail('radius down', true),
        fail('radius still down', true),
      );
      const res = await postAction(t, isp.token, service.id, { action: 'suspend' });
      expectSuccess(res, 202);
      const failed = await waitForOrder(t, isp.token, res.body.data.id, ['completed', 'failed']);
      expect(failed).toMatchObject({ status: 'failed', attempts: 3, last_error: 'radius still down' });
      const ticket = await ticketFor(isp, subscriber.id);
      expectTicketOf(ticket, failed, 'incident');
      await settle();
      expect(await ticketsOf(t, isp.token, subscriber.id)).toHaveLength(1);
    });

    it('should open one ticket for a failed order the automation itself opened, and not order it again and again while the network keeps failing', async () => {
      const isp = await createTenantWithToken(t);
      nextMonth(clock);
      const { subscriber, service } = await activeCustomer(t, isp.token);
      // The NAS refuses this service for good: every attempt fails permanently.
      driver.script(service.radius_username, ...Array.from({ length: 500 }, () => fail('BRAS unreachable')));
      await moveSubscriber(t, isp.token, subscriber.id, 'suspended', 'manual');
      const failed = await eventually(
        'the automation suspend order failed',
        async () => (await ordersOf(t, isp.token, service.id)).find((row) => row.status === 'failed'),
        (order) => order !== undefined,
      );
      expect(failed).toMatchObject({ action: 'suspend', last_error: 'BRAS unreachable' });
      expect((await orderCreatedEvent(t, isp.token, failed!.id)).actor).toEqual(
        automationActor('service_follows_subscriber'),
      );
      const ticket = await ticketFor(isp, subscriber.id);
      expectTicketOf(ticket, failed!, 'incident');

      // Further polls: still one failed order and one ticket (no suspend → failed → suspend … loop).
      await settle(1500);
      expect(await orderLog(isp.token, service.id)).toEqual(['activate completed', 'suspend failed']);
      expect((await ticketsOf(t, isp.token, subscriber.id)).map((row) => row.id)).toEqual([ticket.id]);
      expect((await getService(t, isp.token, service.id)).status).toBe('active');
    });

    it('should keep tenants apart: a tenant’s tickets list only its own failed orders', async () => {
      const a = await createTenantWithToken(t);
      const b = await createTenantWithToken(t);
      nextMonth(clock);
      const subscriberA = await createSubscriber(t, a.token, { status: 'active' });
      const pppoe = uniquePppoeUsername();
      driver.script(`${a.slug}/${pppoe}`, fail('NAS unknown'));
      const { order } = await createService(t, a.token, subscriberA.id, { pppoe_username: pppoe });
      await waitForOrder(t, a.token, order.id, ['failed']);
      await ticketFor(a, subscriberA.id);
      await settle();
      expect(await listAll<Ticket>(t, b.token, '/api/v1/tickets')).toEqual([]);
      expect(await listAll<Ticket>(t, a.token, '/api/v1/tickets')).toHaveLength(1);
    });
  });

  /**
   * The automation reads events only from transactions older than every one still running, while the rules read the
   * state as it is now: an order's end can reach it after the subscriber's later change is written, but before that
   * change's own event. The race needs transactions side by side, which the embedded database (one at a time) never
   * runs: there, these tests run on a throw-away PostgreSQL cluster of their own.
   */
  describe('service_follows_subscriber when the log reaches it late', () => {
    let u: TestApp;
    let uDriver: ScriptedDriver;
    let cluster: ThrowawayCluster | undefined;

    beforeAll(async () => {
      if (process.env.TEST_EMBEDDED_DATABASE !== 'true') {
        // The suite's own app: a second one on the same database would share its orders with another driver.
        u = t;
        uDriver = driver;
        return;
      }
      cluster = await startThrowawayCluster(randomInt(20_000, 30_000));
      u = await startAutomationApp(new TestClock(CLOCK_START), {
        DATABASE_URL: cluster.url,
        DATABASE_POOL_MAX: '10',
      });
      uDriver = scriptDriver(u);
    });

    afterAll(async () => {
      if (cluster) {
        uDriver?.restore();
        await u?.close();
        await cluster.stop();
      }
    });

    it('should order once when it reads an order’s end after the subscriber’s later suspension, leaving that change to its own event', async () => {
      const isp = await createTenantWithToken(u, ['admin']);
      const url = cluster?.url ?? process.env.DATABASE_URL!;
      // The activation's end reaches the automation only once the suspension is written, and the suspension's own
      // event later still (a race CI met): the order's end must not order what the status change will.
      const beforeActivation = await holdHorizon(url);
      let beforeSuspension: Awaited<ReturnType<typeof holdHorizon>> | undefined;
      try {
        const { subscriber, service } = await activeCustomer(u, isp.token);
        uDriver.script(
          service.radius_username,
          ...Array.from({ length: 10 }, () => fail('BRAS unreachable')),
        );
        beforeSuspension = await holdHorizon(url);
        await moveSubscriber(u, isp.token, subscriber.id, 'suspended', 'manual');
        await beforeActivation.release();
        await settle(1000);
        await beforeSuspension.release();

        const failed = await eventually(
          'the suspend order failed',
          async () => (await ordersOf(u, isp.token, service.id)).find((row) => row.status === 'failed'),
          (order) => order !== undefined,
        );
        expect((await orderCreatedEvent(u, isp.token, failed!.id)).actor).toEqual(
          automationActor('service_follows_subscriber'),
        );
        await eventually(
          'a ticket for the failed order',
          () => ticketsOf(u, isp.token, subscriber.id),
          (tickets) => tickets.length > 0,
        );
        await settle(1500);
        expect(
          (await ordersOf(u, isp.token, service.id)).map((order) => `${order.action} ${order.status}`),
        ).toEqual(['activate completed', 'suspend failed']);
        expect((await ticketsOf(u, isp.token, subscriber.id)).map((row) => row.subject)).toEqual([
          `Provisioning failed: suspend of service ${service.id}`,
        ]);
      } finally {
        await beforeSuspension?.release();
        await beforeActivation.release();
      }
    });
  });
});
