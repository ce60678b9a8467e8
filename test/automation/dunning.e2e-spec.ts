import {
  activeCustomer,
  activeService,
  addDays,
  automationActor,
  automationSuite,
  eventually,
  invoiceDue,
  invoicesOf,
  moveSubscriber,
  nextMonth,
  orderCreatedEvent,
  ordersOf,
  overdueEvents,
  overdueSweepRan,
  paidUpRan,
  pay,
  runBilling,
  serviceBecomes,
  setDay,
  settle,
  statusEvents,
  subscriberBecomes,
  TestClock,
  uniquePppoeUsername,
  quietAndServed,
  suspendedForNonPayment,
} from '../support/automation-factory';
import {
  allocate,
  createInvoice,
  createPayment,
  createTransaction,
  eventsOf,
  getInvoice,
  getTransaction,
  voidInvoice,
} from '../support/billing-factory';
import { expectSuccess } from '../support/envelope';
import {
  createPlan,
  createService,
  DEFAULT_PPPOE_PASSWORD,
  getService,
  type Order,
  postAction,
  waitForOrder,
  expectedRows,
  fail,
  gate,
  rowsOf,
  type ScriptedDriver,
} from '../support/provisioning-factory';
import { createBillingProfile, createSubscriber, getSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, type TestApp } from '../support/test-app';
import { oneInvoiceRun } from '../support/billing-run-factory';

/** Issue #16: dunning, end to end: invoice → overdue → suspended for non-payment → paid → active again. */
describe('Automation: dunning', () => {
  let t: TestApp;
  let clock: TestClock;
  let driver: ScriptedDriver;
  automationSuite((suite) => ({ t, clock, driver } = suite));

  /** The subscriber.status_changed events of a subscriber, as {from, to, reason, actor}. */
  async function moves(token: string, subscriberId: string) {
    return (await statusEvents(t, token, subscriberId)).map((event) => ({
      from: event.data.from,
      to: event.data.to,
      reason: event.data.reason,
      actor: event.actor,
    }));
  }

  /** The service's orders as `action status`, oldest first. */
  async function orderLog(token: string, serviceId: string): Promise<string[]> {
    return (await ordersOf(t, token, serviceId)).map((order) => `${order.action} ${order.status}`);
  }

  /** The order of `action` the service got (the only one), once it ended. */
  async function onlyOrder(token: string, serviceId: string, action: string): Promise<Order> {
    const orders = (await ordersOf(t, token, serviceId)).filter((order) => order.action === action);
    expect(orders).toHaveLength(1);
    return waitForOrder(t, token, orders[0].id, ['completed', 'failed', 'cancelled']);
  }

  it('should carry a bill-run invoice through overdue, suspension for non-payment, payment and back to active, with the RADIUS rows following', async () => {
    const isp = await createTenantWithToken(t);
    const day0 = nextMonth(clock);
    const customer = await activeCustomer(t, isp.token, {
      profile: { billing_day: 1, payment_terms_days: 14, auto_suspend_after_days: 7 },
    });
    const { subscriber, service, plan } = customer;
    expect(service).toMatchObject({ status: 'active', activated_at: `${day0}T10:00:00.000Z` });
    expect(await rowsOf(t, service.radius_username)).toEqual(
      expectedRows('active', DEFAULT_PPPOE_PASSWORD, plan),
    );

    // The bill run on the profile's billing day bills the month in advance, due 14 days later.
    const run = await runBilling(t, isp.token, day0);
    expect(run).toMatchObject(oneInvoiceRun([{ currency: 'USD', amount: 3100 }], { as_of: day0 }));
    const [invoice] = await invoicesOf(t, isp.token, subscriber.id);
    const dueDate = addDays(day0, 14);
    expect(invoice).toMatchObject({ status: 'open', currency: 'USD', total: 3100, due_date: dueDate });

    // On the due date itself it is not overdue yet.
    setDay(clock, dueDate);
    await overdueSweepRan(t, isp.token, clock);
    expect(await overdueEvents(t, isp.token, invoice.id)).toEqual([]);

    // The day after: one invoice.overdue, by the overdue_invoices rule; the subscriber stays active.
    setDay(clock, addDays(dueDate, 1));
    const [overdue] = await eventually(
      'invoice.overdue',
      () => overdueEvents(t, isp.token, invoice.id),
      (events) => events.length > 0,
    );
    expect(overdue.actor).toEqual(automationActor('overdue_invoices'));
    expect(overdue.subject_id).toBe(invoice.id);
    expect(overdue.data.object).toMatchObject({ id: invoice.id, status: 'open', due_date: dueDate });

    // due_date + auto_suspend_after_days is not yet past: still active, and still one overdue event.
    setDay(clock, addDays(dueDate, 7));
    await overdueSweepRan(t, isp.token, clock);
    expect(await getSubscriber(t, isp.token, subscriber.id)).toMatchObject({
      status: 'active',
      suspension_reason: null,
    });
    expect(await overdueEvents(t, isp.token, invoice.id)).toHaveLength(1);

    // Past it: suspended for non-payment by overdue_invoices...
    setDay(clock, addDays(dueDate, 8));
    const suspended = await subscriberBecomes(t, isp.token, subscriber.id, 'suspended');
    expect(suspended.suspension_reason).toBe('non_payment');
    expect(await moves(isp.token, subscriber.id)).toEqual([
      { from: 'active', to: 'suspended', reason: 'non_payment', actor: automationActor('overdue_invoices') },
    ]);

    // ...then its service by a suspend order of service_follows_subscriber, and RADIUS puts it in the suspended group.
    await serviceBecomes(t, isp.token, service.id, 'suspended');
    const suspend = await onlyOrder(isp.token, service.id, 'suspend');
    expect(suspend.status).toBe('completed');
    expect((await orderCreatedEvent(t, isp.token, suspend.id)).actor).toEqual(
      automationActor('service_follows_subscriber'),
    );
    expect(await rowsOf(t, service.radius_username)).toEqual(
      expectedRows('suspended', DEFAULT_PPPOE_PASSWORD, plan, null, service.radius_username),
    );

    // More sweeps, more days: still one overdue event, one suspension.
    setDay(clock, addDays(dueDate, 9));
    await overdueSweepRan(t, isp.token, clock);
    expect(await overdueEvents(t, isp.token, invoice.id)).toHaveLength(1);
    expect(await statusEvents(t, isp.token, subscriber.id)).toHaveLength(1);

    // Paid in full: paid_up makes the subscriber active, and the service is resumed.
    await pay(t, isp.token, subscriber.id, invoice.id, 3100);
    expect((await getInvoice(t, isp.token, invoice.id)).status).toBe('paid');
    const active = await subscriberBecomes(t, isp.token, subscriber.id, 'active');
    expect(active.suspension_reason).toBeNull();
    expect(await moves(isp.token, subscriber.id)).toEqual([
      { from: 'active', to: 'suspended', reason: 'non_payment', actor: automationActor('overdue_invoices') },
      expect.objectContaining({ from: 'suspended', to: 'active', actor: automationActor('paid_up') }),
    ]);
    await serviceBecomes(t, isp.token, service.id, 'active');
    const resume = await onlyOrder(isp.token, service.id, 'resume');
    expect(resume.status).toBe('completed');
    expect((await orderCreatedEvent(t, isp.token, resume.id)).actor).toEqual(
      automationActor('service_follows_subscriber'),
    );
    expect(await rowsOf(t, service.radius_username)).toEqual(
      expectedRows('active', DEFAULT_PPPOE_PASSWORD, plan),
    );

    // Nothing more happens: the paid invoice is not overdue again and the subscriber is not suspended again.
    setDay(clock, addDays(dueDate, 12));
    await overdueSweepRan(t, isp.token, clock);
    expect(await overdueEvents(t, isp.token, invoice.id)).toHaveLength(1);
    expect((await getSubscriber(t, isp.token, subscriber.id)).status).toBe('active');
    expect(await orderLog(isp.token, service.id)).toEqual([
      'activate completed',
      'suspend completed',
      'resume completed',
    ]);
  });

  it('should mark an invoice made by POST /api/v1/invoices overdue exactly once and suspend once, whatever the sweeps, days and part payments', async () => {
    const isp = await createTenantWithToken(t);
    const day0 = nextMonth(clock);
    const { subscriber, service, plan } = await activeCustomer(t, isp.token, {
      profile: { auto_suspend_after_days: 2 },
    });
    const dueDate = addDays(day0, 3);
    const invoice = await invoiceDue(t, isp.token, subscriber.id, dueDate, 4500);

    setDay(clock, addDays(dueDate, 1));
    await eventually(
      'invoice.overdue',
      () => overdueEvents(t, isp.token, invoice.id),
      (events) => events.length > 0,
    );
    await overdueSweepRan(t, isp.token, clock);
    const events = await overdueEvents(t, isp.token, invoice.id);
    expect(events).toHaveLength(1);
    expect(events[0].actor).toEqual(automationActor('overdue_invoices'));
    expect((await getSubscriber(t, isp.token, subscriber.id)).status).toBe('active');

    // A part paid after the event leaves it owed (partially_paid): no second event, and the grace still runs out.
    await pay(t, isp.token, subscriber.id, invoice.id, 1000);
    expect((await getInvoice(t, isp.token, invoice.id)).status).toBe('partially_paid');
    setDay(clock, addDays(dueDate, 2));
    await overdueSweepRan(t, isp.token, clock);
    expect((await getSubscriber(t, isp.token, subscriber.id)).status).toBe('active');
    expect(await overdueEvents(t, isp.token, invoice.id)).toHaveLength(1);

    setDay(clock, addDays(dueDate, 3));
    await subscriberBecomes(t, isp.token, subscriber.id, 'suspended');
    await serviceBecomes(t, isp.token, service.id, 'suspended');
    expect(await rowsOf(t, service.radius_username)).toEqual(
      expectedRows('suspended', DEFAULT_PPPOE_PASSWORD, plan, null, service.radius_username),
    );

    for (const later of [4, 5, 10]) {
      setDay(clock, addDays(dueDate, later));
      await overdueSweepRan(t, isp.token, clock);
    }
    expect(await overdueEvents(t, isp.token, invoice.id)).toHaveLength(1);
    expect(await moves(isp.token, subscriber.id)).toEqual([
      { from: 'active', to: 'suspended', reason: 'non_payment', actor: automationActor('overdue_invoices') },
    ]);
    expect(await orderLog(isp.token, service.id)).toEqual(['activate completed', 'suspend completed']);
  });

  it('should suspend through the tenant default profile a subscriber that has no billing profile', async () => {
    const isp = await createTenantWithToken(t);
    const day0 = nextMonth(clock);
    await createBillingProfile(t, isp.token, {
      name: 'Default',
      is_default: true,
      payment_terms_days: 5,
      auto_suspend_after_days: 3,
    });
    const { subscriber, service } = await activeCustomer(t, isp.token, { profile: null });
    expect(subscriber.billing_profile_id).toBeNull();
    const dueDate = addDays(day0, 2);
    const invoice = await invoiceDue(t, isp.token, subscriber.id, dueDate);

    setDay(clock, addDays(dueDate, 3));
    await eventually(
      'invoice.overdue',
      () => overdueEvents(t, isp.token, invoice.id),
      (events) => events.length > 0,
    );
    await settle();
    expect((await getSubscriber(t, isp.token, subscriber.id)).status).toBe('active');

    setDay(clock, addDays(dueDate, 4));
    const suspended = await subscriberBecomes(t, isp.token, subscriber.id, 'suspended');
    expect(suspended.suspension_reason).toBe('non_payment');
    expect((await moves(isp.token, subscriber.id))[0].actor).toEqual(automationActor('overdue_invoices'));
    await serviceBecomes(t, isp.token, service.id, 'suspended');
  });

  it('should never suspend a subscriber whose profile has auto_suspend_after_days null, however long the invoice stays overdue', async () => {
    const isp = await createTenantWithToken(t);
    const day0 = nextMonth(clock);
    const { subscriber, service, plan } = await activeCustomer(t, isp.token, {
      profile: { auto_suspend_after_days: null },
    });
    const invoice = await invoiceDue(t, isp.token, subscriber.id, addDays(day0, 1));

    setDay(clock, addDays(day0, 2));
    await eventually(
      'invoice.overdue',
      () => overdueEvents(t, isp.token, invoice.id),
      (events) => events.length > 0,
    );
    for (const later of [10, 40, 120]) {
      setDay(clock, addDays(day0, later));
      await overdueSweepRan(t, isp.token, clock);
    }
    expect(await getSubscriber(t, isp.token, subscriber.id)).toMatchObject({
      status: 'active',
      suspension_reason: null,
    });
    expect(await statusEvents(t, isp.token, subscriber.id)).toEqual([]);
    expect(await overdueEvents(t, isp.token, invoice.id)).toHaveLength(1);
    expect((await getService(t, isp.token, service.id)).status).toBe('active');
    expect(await orderLog(isp.token, service.id)).toEqual(['activate completed']);
    expect(await rowsOf(t, service.radius_username)).toEqual(
      expectedRows('active', DEFAULT_PPPOE_PASSWORD, plan),
    );
  });

  it.each(['manual', 'fraud'])(
    'should leave a %s suspension alone when the overdue invoice is paid: still suspended, no resume order',
    async (reason) => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const { subscriber, service, plan } = await activeCustomer(t, isp.token, {
        profile: { auto_suspend_after_days: null },
      });
      const invoice = await invoiceDue(t, isp.token, subscriber.id, addDays(day0, -5), 2000);

      // The operator's suspension still takes the service down (service_follows_subscriber).
      await moveSubscriber(t, isp.token, subscriber.id, 'suspended', reason);
      await serviceBecomes(t, isp.token, service.id, 'suspended');
      const suspend = await onlyOrder(isp.token, service.id, 'suspend');
      expect((await orderCreatedEvent(t, isp.token, suspend.id)).actor).toEqual(
        automationActor('service_follows_subscriber'),
      );

      await pay(t, isp.token, subscriber.id, invoice.id, 2000);
      expect((await getInvoice(t, isp.token, invoice.id)).status).toBe('paid');
      await paidUpRan(t, isp.token, clock);

      expect(await getSubscriber(t, isp.token, subscriber.id)).toMatchObject({
        status: 'suspended',
        suspension_reason: reason,
      });
      expect((await moves(isp.token, subscriber.id)).map((move) => move.to)).toEqual(['suspended']);
      expect((await getService(t, isp.token, service.id)).status).toBe('suspended');
      expect(await orderLog(isp.token, service.id)).toEqual(['activate completed', 'suspend completed']);
      expect(await rowsOf(t, service.radius_username)).toEqual(
        expectedRows('suspended', DEFAULT_PPPOE_PASSWORD, plan, null, service.radius_username),
      );
    },
  );

  it('should keep a non_payment suspension while an overdue invoice is left open by a partial payment, and lift it once all is paid', async () => {
    const isp = await createTenantWithToken(t);
    const day0 = nextMonth(clock);
    const { subscriber, service, plan } = await activeCustomer(t, isp.token, {
      profile: { auto_suspend_after_days: 2 },
    });
    const first = await invoiceDue(t, isp.token, subscriber.id, addDays(day0, 1), 1000);
    const second = await invoiceDue(t, isp.token, subscriber.id, addDays(day0, 1), 2000);

    setDay(clock, addDays(day0, 4));
    await subscriberBecomes(t, isp.token, subscriber.id, 'suspended');
    await serviceBecomes(t, isp.token, service.id, 'suspended');

    // One invoice paid in full, the other only in part: an invoice stays open past its due date.
    await pay(t, isp.token, subscriber.id, first.id, 1000);
    await pay(t, isp.token, subscriber.id, second.id, 500);
    expect((await getInvoice(t, isp.token, first.id)).status).toBe('paid');
    expect(await getInvoice(t, isp.token, second.id)).toMatchObject({
      status: 'partially_paid',
      amount_due: 1500,
    });
    await paidUpRan(t, isp.token, clock);
    expect(await getSubscriber(t, isp.token, subscriber.id)).toMatchObject({
      status: 'suspended',
      suspension_reason: 'non_payment',
    });
    expect(await orderLog(isp.token, service.id)).toEqual(['activate completed', 'suspend completed']);
    expect(await rowsOf(t, service.radius_username)).toEqual(
      expectedRows('suspended', DEFAULT_PPPOE_PASSWORD, plan, null, service.radius_username),
    );

    // The rest: active again, resumed.
    await pay(t, isp.token, subscriber.id, second.id, 1500);
    await subscriberBecomes(t, isp.token, subscriber.id, 'active');
    expect((await moves(isp.token, subscriber.id)).at(-1)).toMatchObject({
      from: 'suspended',
      to: 'active',
      actor: automationActor('paid_up'),
    });
    await serviceBecomes(t, isp.token, service.id, 'active');
    expect(await rowsOf(t, service.radius_username)).toEqual(
      expectedRows('active', DEFAULT_PPPOE_PASSWORD, plan),
    );
  });

  it('should lift a non_payment suspension once no invoice is open past its due date, though one not yet due is open', async () => {
    const isp = await createTenantWithToken(t);
    const { subscriber, service, overdue, day0 } = await suspendedForNonPayment(t, isp.token, clock, 1000);

    const notYetDue = await invoiceDue(t, isp.token, subscriber.id, addDays(day0, 20), 3100);
    await pay(t, isp.token, subscriber.id, overdue.id, 1000);
    await subscriberBecomes(t, isp.token, subscriber.id, 'active');
    await serviceBecomes(t, isp.token, service.id, 'active');
    expect((await getInvoice(t, isp.token, notYetDue.id)).status).toBe('open');
  });

  it('should lift a non_payment suspension when the overdue invoice is voided, or settled by a credit', async () => {
    const isp = await createTenantWithToken(t);
    const day0 = nextMonth(clock);
    const voided = await activeCustomer(t, isp.token, { profile: { auto_suspend_after_days: 1 } });
    const credited = await activeCustomer(t, isp.token, { profile: { auto_suspend_after_days: 1 } });
    const toVoid = await invoiceDue(t, isp.token, voided.subscriber.id, addDays(day0, 1), 1200);
    const toCredit = await invoiceDue(t, isp.token, credited.subscriber.id, addDays(day0, 1), 800);

    setDay(clock, addDays(day0, 3));
    for (const customer of [voided, credited]) {
      await subscriberBecomes(t, isp.token, customer.subscriber.id, 'suspended');
      await serviceBecomes(t, isp.token, customer.service.id, 'suspended');
    }

    expectSuccess(await voidInvoice(t, isp.token, toVoid.id));
    // Left for the allocation by hand below (auto_apply false), as an operator settling this invoice would.
    const credit = await createTransaction(t, isp.token, credited.subscriber.id, {
      kind: 'credit',
      amount: 800,
      currency: 'USD',
      auto_apply: false,
    });
    expectSuccess(
      await allocate(t, isp.token, credit.id, { allocations: [{ invoice_id: toCredit.id, amount: 800 }] }),
    );

    for (const customer of [voided, credited]) {
      await subscriberBecomes(t, isp.token, customer.subscriber.id, 'active');
      expect((await moves(isp.token, customer.subscriber.id)).at(-1)?.actor).toEqual(
        automationActor('paid_up'),
      );
      await serviceBecomes(t, isp.token, customer.service.id, 'active');
    }
  });

  it('should resume the services of a subscriber an operator makes active again after a manual suspension', async () => {
    const isp = await createTenantWithToken(t);
    nextMonth(clock);
    const { subscriber, service, plan } = await activeCustomer(t, isp.token);
    await moveSubscriber(t, isp.token, subscriber.id, 'suspended', 'manual');
    await serviceBecomes(t, isp.token, service.id, 'suspended');
    await moveSubscriber(t, isp.token, subscriber.id, 'active');
    await serviceBecomes(t, isp.token, service.id, 'active');
    const resume = await onlyOrder(isp.token, service.id, 'resume');
    expect((await orderCreatedEvent(t, isp.token, resume.id)).actor).toEqual(
      automationActor('service_follows_subscriber'),
    );
    expect(await rowsOf(t, service.radius_username)).toEqual(
      expectedRows('active', DEFAULT_PPPOE_PASSWORD, plan),
    );
  });

  it('should not suspend a subscriber that is not active (pending), though its invoice is overdue', async () => {
    const isp = await createTenantWithToken(t);
    const day0 = nextMonth(clock);
    const profile = await createBillingProfile(t, isp.token, { auto_suspend_after_days: 1 });
    const subscriber = await createSubscriber(t, isp.token, {
      status: 'pending',
      billing_profile_id: profile.id,
    });
    const invoice = await invoiceDue(t, isp.token, subscriber.id, addDays(day0, 1));
    setDay(clock, addDays(day0, 5));
    await eventually(
      'invoice.overdue',
      () => overdueEvents(t, isp.token, invoice.id),
      (events) => events.length > 0,
    );
    await overdueSweepRan(t, isp.token, clock);
    expect((await getSubscriber(t, isp.token, subscriber.id)).status).toBe('pending');
    expect(await statusEvents(t, isp.token, subscriber.id)).toEqual([]);
  });

  it('should terminate every service of a cancelled subscriber through orders (active, suspended and pending ones)', async () => {
    const isp = await createTenantWithToken(t);
    const day0 = nextMonth(clock);
    const { subscriber, service: first, plan } = await activeCustomer(t, isp.token);
    const second = await activeService(t, isp.token, subscriber.id, plan);
    const res = await postAction(t, isp.token, second.id, { action: 'suspend' });
    expectSuccess(res, 202);
    await waitForOrder(t, isp.token, res.body.data.id, ['completed']);
    // A third whose activation failed for good: pending.
    const pppoe = uniquePppoeUsername();
    driver.script(`${isp.slug}/${pppoe}`, fail('NAS unknown'));
    const { service: third, order } = await createService(t, isp.token, subscriber.id, {
      plan_id: plan.id,
      pppoe_username: pppoe,
    });
    await waitForOrder(t, isp.token, order.id, ['failed']);
    expect((await getService(t, isp.token, third.id)).status).toBe('pending');

    setDay(clock, addDays(day0, 9));
    await moveSubscriber(t, isp.token, subscriber.id, 'cancelled');

    for (const service of [first, second, third]) {
      const terminated = await serviceBecomes(t, isp.token, service.id, 'terminated');
      expect(terminated.terminated_at).toBe(`${addDays(day0, 9)}T10:00:00.000Z`);
      const terminate = await onlyOrder(isp.token, service.id, 'terminate');
      expect(terminate.status).toBe('completed');
      expect((await orderCreatedEvent(t, isp.token, terminate.id)).actor).toEqual(
        automationActor('service_follows_subscriber'),
      );
      expect(await rowsOf(t, service.radius_username)).toEqual(
        expectedRows('terminated', DEFAULT_PPPOE_PASSWORD, plan),
      );
    }
    await settle();
    expect(await orderLog(isp.token, first.id)).toEqual(['activate completed', 'terminate completed']);
    expect(await orderLog(isp.token, second.id)).toEqual([
      'activate completed',
      'suspend completed',
      'terminate completed',
    ]);
    expect(await orderLog(isp.token, third.id)).toEqual(['activate failed', 'terminate completed']);
  });

  it('should suspend a service whose activation was still running when its subscriber was suspended, once that order ends', async () => {
    const isp = await createTenantWithToken(t);
    nextMonth(clock);
    const subscriber = await createSubscriber(t, isp.token, { status: 'active' });
    const plan = await createPlan(t, isp.token, { price: 3100, currency: 'USD' });
    const pppoe = uniquePppoeUsername();
    const hold = gate();
    driver.script(`${isp.slug}/${pppoe}`, hold.step);
    let released = false;
    try {
      const { service, order } = await createService(t, isp.token, subscriber.id, {
        plan_id: plan.id,
        pppoe_username: pppoe,
      });
      await waitForOrder(t, isp.token, order.id, ['in_progress']);
      await moveSubscriber(t, isp.token, subscriber.id, 'suspended', 'manual');
      await settle(300);
      hold.release();
      released = true;
      await waitForOrder(t, isp.token, order.id, ['completed']);
      await serviceBecomes(t, isp.token, service.id, 'suspended');
      const suspend = await onlyOrder(isp.token, service.id, 'suspend');
      expect((await orderCreatedEvent(t, isp.token, suspend.id)).actor).toEqual(
        automationActor('service_follows_subscriber'),
      );
      expect(await rowsOf(t, service.radius_username)).toEqual(
        expectedRows('suspended', DEFAULT_PPPOE_PASSWORD, plan, null, service.radius_username),
      );
    } finally {
      if (!released) {
        hold.release();
      }
    }
  });

  it('should never mark overdue an invoice that is paid, voided or still a draft, nor one due today; a partially paid one past due is', async () => {
    const isp = await createTenantWithToken(t);
    const day0 = nextMonth(clock);
    const subscriberId = (await createSubscriber(t, isp.token, { status: 'active' })).id;
    const paid = await invoiceDue(t, isp.token, subscriberId, addDays(day0, 1), 500);
    await pay(t, isp.token, subscriberId, paid.id, 500);
    const voided = await invoiceDue(t, isp.token, subscriberId, addDays(day0, 1), 500);
    expectSuccess(await voidInvoice(t, isp.token, voided.id));
    const draft = await createInvoice(t, isp.token, subscriberId, 500, {
      due_date: addDays(day0, 1),
      draft: true,
    });
    const dueToday = await invoiceDue(t, isp.token, subscriberId, addDays(day0, 5), 500);
    const partial = await invoiceDue(t, isp.token, subscriberId, addDays(day0, 1), 500);
    await pay(t, isp.token, subscriberId, partial.id, 200);

    setDay(clock, addDays(day0, 5));
    await overdueSweepRan(t, isp.token, clock);
    for (const invoice of [paid, voided, draft, dueToday]) {
      expect(await overdueEvents(t, isp.token, invoice.id)).toEqual([]);
    }
    // A partially paid invoice is still owed: overdue once past its due date.
    const [partialOverdue] = await overdueEvents(t, isp.token, partial.id);
    expect(partialOverdue.actor).toEqual(automationActor('overdue_invoices'));
    setDay(clock, addDays(day0, 6));
    await eventually(
      'the invoice due yesterday overdue',
      () => overdueEvents(t, isp.token, dueToday.id),
      (events) => events.length > 0,
    );
    for (const invoice of [paid, voided, draft]) {
      expect(await overdueEvents(t, isp.token, invoice.id)).toEqual([]);
    }
  });
  describe('judged on what is really owed (issue 28, item 3)', () => {
    it('should neither flag overdue nor suspend for invoices covered by money received and not yet applied, oldest due first', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const covered = await activeCustomer(t, isp.token, { profile: { auto_suspend_after_days: 2 } });
      const short = await activeCustomer(t, isp.token, { profile: { auto_suspend_after_days: 2 } });
      // Paid in full, but nobody allocated the payment (auto_apply false).
      const paidFor = await invoiceDue(t, isp.token, covered.subscriber.id, addDays(day0, 1), 3000);
      const payment = await createPayment(t, isp.token, covered.subscriber.id, 3000, {
        currency: 'USD',
        auto_apply: false,
      });
      expect(payment).toMatchObject({ unallocated_amount: 3000, allocations: [] });
      // 1000 received for 3000 owed: it covers the older invoice; the newer one is still owed.
      const older = await invoiceDue(t, isp.token, short.subscriber.id, addDays(day0, 1), 1000);
      const newer = await invoiceDue(t, isp.token, short.subscriber.id, addDays(day0, 2), 2000);
      await createPayment(t, isp.token, short.subscriber.id, 1000, { currency: 'USD', auto_apply: false });

      setDay(clock, addDays(day0, 6));
      const suspended = await subscriberBecomes(t, isp.token, short.subscriber.id, 'suspended');
      expect(suspended.suspension_reason).toBe('non_payment');
      const [overdue] = await eventually(
        'the newer invoice overdue',
        () => overdueEvents(t, isp.token, newer.id),
        (events) => events.length > 0,
      );
      expect(overdue.actor).toEqual(automationActor('overdue_invoices'));
      await overdueSweepRan(t, isp.token, clock);

      expect(await overdueEvents(t, isp.token, older.id)).toEqual([]);
      expect(await overdueEvents(t, isp.token, paidFor.id)).toEqual([]);
      expect(await getSubscriber(t, isp.token, covered.subscriber.id)).toMatchObject({
        status: 'active',
        suspension_reason: null,
      });
      expect(await statusEvents(t, isp.token, covered.subscriber.id)).toEqual([]);
      expect((await getService(t, isp.token, covered.service.id)).status).toBe('active');
      // Nothing was allocated for it: the invoice is open, the money waits for the operator.
      expect((await getInvoice(t, isp.token, paidFor.id)).status).toBe('open');
      expect((await getTransaction(t, isp.token, payment.id)).unallocated_amount).toBe(3000);
    });

    it('should restore a subscriber suspended for non-payment once the money received covers what is past due, without an allocation', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const held = await activeCustomer(t, isp.token, { profile: { auto_suspend_after_days: 1 } });
      const auto = await activeCustomer(t, isp.token, { profile: { auto_suspend_after_days: 1 } });
      const heldInvoice = await invoiceDue(t, isp.token, held.subscriber.id, addDays(day0, 1), 2500);
      const autoInvoice = await invoiceDue(t, isp.token, auto.subscriber.id, addDays(day0, 1), 2500);
      setDay(clock, addDays(day0, 3));
      for (const customer of [held, auto]) {
        await subscriberBecomes(t, isp.token, customer.subscriber.id, 'suspended');
        await serviceBecomes(t, isp.token, customer.service.id, 'suspended');
      }

      // Part of it, unallocated: still owed past due, still suspended.
      await createPayment(t, isp.token, held.subscriber.id, 1000, { currency: 'USD', auto_apply: false });
      await paidUpRan(t, isp.token, clock);
      expect(await getSubscriber(t, isp.token, held.subscriber.id)).toMatchObject({
        status: 'suspended',
        suspension_reason: 'non_payment',
      });
      // The rest, unallocated too: paid up, so paid_up restores it though nobody allocated anything.
      const rest = await createPayment(t, isp.token, held.subscriber.id, 1500, {
        currency: 'USD',
        auto_apply: false,
      });
      await subscriberBecomes(t, isp.token, held.subscriber.id, 'active');
      expect((await moves(isp.token, held.subscriber.id)).at(-1)).toMatchObject({
        from: 'suspended',
        to: 'active',
        actor: automationActor('paid_up'),
      });
      await serviceBecomes(t, isp.token, held.service.id, 'active');
      expect((await getInvoice(t, isp.token, heldInvoice.id)).status).toBe('open');
      expect((await getTransaction(t, isp.token, rest.id)).unallocated_amount).toBe(1500);

      // With auto-apply (the default) the payment pays the invoice on receipt, and paid_up restores as well.
      const applied = await createPayment(t, isp.token, auto.subscriber.id, 2500, { currency: 'USD' });
      expect(applied.allocations?.map((each) => [each.invoice_id, each.amount])).toEqual([
        [autoInvoice.id, 2500],
      ]);
      expect((await getInvoice(t, isp.token, autoInvoice.id)).status).toBe('paid');
      await subscriberBecomes(t, isp.token, auto.subscriber.id, 'active');
      await serviceBecomes(t, isp.token, auto.service.id, 'active');
    });
  });

  describe('invoice_reminders (issue 28, item 10)', () => {
    /** The invoice.reminder events of an invoice, oldest first, as {offset_days, amount_due}. */
    async function reminders(token: string, invoiceId: string) {
      return (await eventsOf(t, token, invoiceId, 'invoice.reminder')).map((event) => ({
        offset_days: event.data.offset_days,
        amount_due: event.data.amount_due,
      }));
    }

    it('should send invoice.reminder once per offset of [-3, 1, 7] while the invoice is owed, the latest only for an invoice first seen late, none for one covered', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const profile = await createBillingProfile(t, isp.token, {
        reminder_offsets: [-3, 1, 7],
        auto_suspend_after_days: null,
      });
      const subscriber = await createSubscriber(t, isp.token, {
        status: 'active',
        billing_profile_id: profile.id,
      });
      const dueDate = addDays(day0, 10);
      const invoice = await invoiceDue(t, isp.token, subscriber.id, dueDate, 5000);
      // Issued late: due 8 days ago, so the days of offsets 1 and 7 have both passed; one reminder, for 7.
      const late = await invoiceDue(t, isp.token, subscriber.id, addDays(day0, -8), 1200);
      // Another subscriber on the profile paid without an allocation: nothing owed, no reminder.
      const payer = await createSubscriber(t, isp.token, {
        status: 'active',
        billing_profile_id: profile.id,
      });
      const covered = await invoiceDue(t, isp.token, payer.id, dueDate, 700);
      await createPayment(t, isp.token, payer.id, 700, { currency: 'USD', auto_apply: false });

      const [first] = await eventually(
        'the late invoice reminded',
        () => eventsOf(t, isp.token, late.id, 'invoice.reminder'),
        (events) => events.length > 0,
      );
      expect(first.actor).toEqual(automationActor('invoice_reminders'));
      expect(first.subject_id).toBe(late.id);
      expect(first.data.object).toMatchObject({ id: late.id, status: 'open' });
      expect(await reminders(isp.token, late.id)).toEqual([{ offset_days: 7, amount_due: 1200 }]);

      setDay(clock, addDays(dueDate, -4));
      await overdueSweepRan(t, isp.token, clock);
      expect(await reminders(isp.token, invoice.id)).toEqual([]);

      setDay(clock, addDays(dueDate, -3));
      await eventually(
        'the reminder 3 days before',
        () => reminders(isp.token, invoice.id),
        (sent) => sent.length === 1,
      );
      setDay(clock, addDays(dueDate, -2));
      await overdueSweepRan(t, isp.token, clock);
      expect(await reminders(isp.token, invoice.id)).toEqual([{ offset_days: -3, amount_due: 5000 }]);

      // A part paid: the next reminders ask for what is left.
      await pay(t, isp.token, subscriber.id, invoice.id, 2000);
      setDay(clock, addDays(dueDate, 1));
      await eventually(
        'the reminder a day after',
        () => reminders(isp.token, invoice.id),
        (sent) => sent.length === 2,
      );
      setDay(clock, addDays(dueDate, 5));
      await overdueSweepRan(t, isp.token, clock);
      setDay(clock, addDays(dueDate, 7));
      await eventually(
        'the reminder a week after',
        () => reminders(isp.token, invoice.id),
        (sent) => sent.length === 3,
      );
      for (const later of [8, 30]) {
        setDay(clock, addDays(dueDate, later));
        await overdueSweepRan(t, isp.token, clock);
      }
      expect(await reminders(isp.token, invoice.id)).toEqual([
        { offset_days: -3, amount_due: 5000 },
        { offset_days: 1, amount_due: 3000 },
        { offset_days: 7, amount_due: 3000 },
      ]);
      expect(await reminders(isp.token, late.id)).toEqual([{ offset_days: 7, amount_due: 1200 }]);
      expect(await reminders(isp.token, covered.id)).toEqual([]);
    });

    it('should send no reminder for a tenant that switched invoice_reminders off', async () => {
      const { quiet, served: loud } = await quietAndServed(t, 'invoice_reminders');
      const day0 = nextMonth(clock);
      const invoices = [];
      for (const isp of [quiet, loud]) {
        const profile = await createBillingProfile(t, isp.token, { reminder_offsets: [1] });
        const subscriber = await createSubscriber(t, isp.token, { billing_profile_id: profile.id });
        invoices.push(await invoiceDue(t, isp.token, subscriber.id, addDays(day0, -2), 900));
      }
      const [quietInvoice, loudInvoice] = invoices;
      await eventually(
        'the other tenant reminded',
        () => reminders(loud.token, loudInvoice.id),
        (sent) => sent.length > 0,
      );
      await overdueSweepRan(t, quiet.token, clock);
      expect(await reminders(quiet.token, quietInvoice.id)).toEqual([]);
      expect(await reminders(loud.token, loudInvoice.id)).toEqual([{ offset_days: 1, amount_due: 900 }]);
    });
  });
});
