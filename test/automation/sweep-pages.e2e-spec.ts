import {
  addDays,
  automationActor,
  CLOCK_START,
  eventually,
  nextMonth,
  overdueEvents,
  overdueSweepRan,
  setDay,
  startAutomationApp,
  statusEvents,
  subscriberBecomes,
  TestClock,
} from '../support/automation-factory';
import {
  createInvoice,
  createPayment,
  eventsOf,
  getInvoice,
  getTransaction,
  listAll,
} from '../support/billing-factory';
import { createBillingProfile, createSubscriber, getSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, type TestApp } from '../support/test-app';

/** The payable invoices a sweep reads per page here; a pass reads 5 pages (SWEEP_PAGES) at most, 15 invoices. */
const PAGE_SIZE = 3;

/**
 * Issue 28, "Dunning sweeps at 1M subscribers" (docs/performance.md): each sweep (overdue, suspension, reminders, late
 * fees) reads the payable invoices past due a page at a time in (due_date, id) order, a few pages per pass, and the next
 * pass reads on from where it stopped. Invoices covered by money received and not yet applied stay payable and past due
 * at the head of that order for as long as nobody allocates the money: here more of them than a whole pass reads, and a
 * really owed invoice after them must still get every sweep's effect.
 */
describe('Automation: sweeps read the invoices past due a page at a time', () => {
  let t: TestApp;
  let clock: TestClock;

  beforeAll(async () => {
    clock = new TestClock(CLOCK_START);
    t = await startAutomationApp(clock, { AUTOMATION_SWEEP_PAGE_SIZE: String(PAGE_SIZE) });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('should announce, remind, charge a late fee and suspend for an owed invoice behind more covered invoices than a pass reads, and never for the covered ones', async () => {
    const isp = await createTenantWithToken(t, ['admin']);
    const day0 = nextMonth(clock);
    // Money received is kept for the operator to allocate (auto_apply false), so the covered invoices stay open.
    const profile = await createBillingProfile(t, isp.token, {
      auto_apply: false,
      auto_suspend_after_days: 2,
      reminder_offsets: [1],
      late_fee: { type: 'fixed', amount: 500, after_days: 1 },
    });
    const payer = await createSubscriber(t, isp.token, { status: 'active', billing_profile_id: profile.id });
    const debtor = await createSubscriber(t, isp.token, { status: 'active', billing_profile_id: profile.id });

    // 20 covered invoices (more than the 15 a pass reads) due before the owed one, in the sweeps' order.
    const covered = [];
    for (let n = 0; n < 20; n += 1) {
      covered.push(
        await createInvoice(t, isp.token, payer.id, 100, { due_date: addDays(day0, 1), currency: 'USD' }),
      );
    }
    const payment = await createPayment(t, isp.token, payer.id, 2000, {
      currency: 'USD',
      auto_apply: false,
    });
    expect(payment).toMatchObject({ unallocated_amount: 2000, allocations: [] });
    const owed = await createInvoice(t, isp.token, debtor.id, 3000, {
      due_date: addDays(day0, 2),
      currency: 'USD',
    });

    // Past every invoice's due date, grace (2 days), reminder offset (1) and late fee days (1).
    setDay(clock, addDays(day0, 6));
    const [overdue] = await eventually(
      'the owed invoice overdue',
      () => overdueEvents(t, isp.token, owed.id),
      (events) => events.length > 0,
    );
    expect(overdue.actor).toEqual(automationActor('overdue_invoices'));
    expect(overdue.data.days_overdue).toBe(4);
    const [reminder] = await eventually(
      'the owed invoice reminded',
      () => eventsOf(t, isp.token, owed.id, 'invoice.reminder'),
      (events) => events.length > 0,
    );
    expect(reminder.data).toMatchObject({ offset_days: 1, amount_due: 3000 });
    const [fee] = await eventually(
      'the late fee of the owed invoice',
      async () =>
        (
          await listAll<{ source: string; source_id: string; amount: number }>(
            t,
            isp.token,
            `/api/v1/subscribers/${debtor.id}/charges`,
            { status: 'invoiced' },
          )
        ).filter((charge) => charge.source === 'late_fee'),
      (fees) => fees.length > 0,
    );
    expect(fee).toMatchObject({ source_id: owed.id, amount: 500 });
    const suspended = await subscriberBecomes(t, isp.token, debtor.id, 'suspended');
    expect(suspended.suspension_reason).toBe('non_payment');

    // The sweeps have gone round the whole order since (the witness is due after everything above).
    await overdueSweepRan(t, isp.token, clock);
    await overdueSweepRan(t, isp.token, clock);
    for (const invoice of covered) {
      expect(await eventsOf(t, isp.token, invoice.id)).toEqual(
        expect.not.arrayContaining([
          expect.objectContaining({ type: 'invoice.overdue' }),
          expect.objectContaining({ type: 'invoice.reminder' }),
        ]),
      );
      expect((await getInvoice(t, isp.token, invoice.id)).status).toBe('open');
    }
    expect(
      await listAll(t, isp.token, `/api/v1/subscribers/${payer.id}/charges`, { status: 'invoiced' }),
    ).toEqual([]);
    expect(await getSubscriber(t, isp.token, payer.id)).toMatchObject({ status: 'active' });
    expect(await statusEvents(t, isp.token, payer.id)).toEqual([]);
    expect((await getTransaction(t, isp.token, payment.id)).unallocated_amount).toBe(2000);
  });
});
