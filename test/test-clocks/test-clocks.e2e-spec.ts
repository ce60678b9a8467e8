import request from 'supertest';
import { AUTOMATION_ENV } from '../support/automation-factory';
import { createPayment, type InvoiceRecord } from '../support/billing-factory';
import { bearer } from '../support/factories';
import { createPlan, createService, getService } from '../support/provisioning-factory';
import { createBillingProfile, createSubscriber, getSubscriber } from '../support/subscriber-factory';
import {
  createTenantWithToken,
  ensure,
  startTestApp,
  type TenantWithToken,
  type TestApp,
} from '../support/test-app';
import { waitFor } from '../support/wait-for';

type Body = Record<string, unknown>;

interface TestClock {
  id: string;
  name: string;
  frozen_time: string;
  status: 'ready' | 'advancing' | 'internal_failure';
  advance_to: string | null;
  tenant_id: string;
}

/**
 * Issue #32 item 5: test clocks. A clock and its test tenant made through the API; a subscriber of that tenant billed,
 * dunned, suspended and restored by advancing the clock alone; the clock's rules (forward only, one advance at a time,
 * its owner alone); and live tenants untouched.
 */
describe('Test clocks (e2e)', () => {
  let t: TestApp;
  let owner: TenantWithToken;
  let other: TenantWithToken;

  beforeAll(async () => {
    // BILLING_RUN_HOUR_UTC is 2 by default: an advance bills each day at 02:00 of the clock.
    t = await startTestApp(AUTOMATION_ENV);
    owner = await createTenantWithToken(t);
    other = await createTenantWithToken(t);
  });

  afterAll(async () => {
    await t.close();
  });

  const api = (token: string) => ({
    get: (path: string) => request(t.http).get(`/api/v1${path}`).set(bearer(token)),
    post: (path: string, body: Body = {}) =>
      request(t.http).post(`/api/v1${path}`).set(bearer(token)).send(body),
  });

  async function createClock(frozenTime: string, name = 'Rehearsal'): Promise<TestClock & { token: string }> {
    const res = await api(owner.token).post('/test-clocks', { name, frozen_time: frozenTime });
    return ensure(res, 201, 'create test clock').body.data as TestClock & { token: string };
  }

  /** Advances the clock and waits for test_clock.ready. */
  async function advance(clock: TestClock, to: string): Promise<TestClock> {
    const res = await api(owner.token).post(`/test-clocks/${clock.id}/advance`, { to });
    ensure(res, 202, 'advance');
    expect(res.body.data.status).toBe('advancing');
    return waitFor(
      async () => {
        const now = (await api(owner.token).get(`/test-clocks/${clock.id}`)).body.data as TestClock;
        return now.status === 'ready' ? now : undefined;
      },
      { timeout: 90_000, what: `test clock ${clock.id} ready at ${to}` },
    );
  }

  async function invoicesOf(token: string, subscriberId: string): Promise<InvoiceRecord[]> {
    const res = await api(token).get(`/invoices?subscriber_id=${subscriberId}&limit=100`);
    return ensure(res, 200, 'list invoices').body.data as InvoiceRecord[];
  }

  async function balanceOf(token: string, subscriberId: string): Promise<number> {
    const res = await api(token).get(`/subscribers/${subscriberId}/balance`);
    const { balances } = ensure(res, 200, 'balance').body.data as { balances: { balance: number }[] };
    return balances[0]?.balance ?? 0;
  }

  async function eventsOf(token: string, type: string): Promise<{ created_at: string; data: Body }[]> {
    const res = await api(token).get(`/events?type=${type}&limit=100`);
    return ensure(res, 200, 'list events').body.data as { created_at: string; data: Body }[];
  }

  it('should require authentication', async () => {
    const res = await request(t.http)
      .post('/api/v1/test-clocks')
      .send({ name: 'x', frozen_time: '2031-01-01T00:00:00Z' });
    expect(res.status).toBe(401);
  });

  it('should create a clock with a test tenant and its admin token, dated by the frozen time', async () => {
    const clock = await createClock('2031-01-01T00:00:00.000Z', 'Creation');
    expect(clock).toMatchObject({
      name: 'Creation',
      frozen_time: '2031-01-01T00:00:00.000Z',
      status: 'ready',
    });
    expect(clock.token).toMatch(/^isk_/);
    const me = await api(clock.token).get('/me');
    expect(me.status).toBe(200);
    const subscriber = await createSubscriber(t, clock.token);
    expect(subscriber.created_at).toBe('2031-01-01T00:00:00.000Z');
    // The owner's own records keep the real time.
    const live = await createSubscriber(t, owner.token);
    expect(new Date(live.created_at).getUTCFullYear()).toBeLessThan(2031);
    const created = await eventsOf(owner.token, 'test_clock.created');
    expect(created.map((event) => (event.data.object as Body).id)).toContain(clock.id);
  });

  it('should bill, dun, suspend and restore a subscriber of the test tenant as the clock advances', async () => {
    const clock = await createClock('2031-01-01T00:00:00.000Z', 'Dunning');
    const token = clock.token;
    const profile = await createBillingProfile(t, token, {
      name: 'Residential',
      currency: 'EUR',
      billing_day: 1,
      payment_terms_days: 14,
      auto_suspend_after_days: 7,
      reminder_offsets: [3],
      late_fee: { type: 'fixed', amount: 500, after_days: 5 },
    });
    const plan = await createPlan(t, token, { price: 2999, currency: 'EUR', billing_period: 'monthly' });
    const subscriber = await createSubscriber(t, token, { billing_profile_id: profile.id });
    const { service } = await createService(t, token, subscriber.id, { plan_id: plan.id });
    await waitFor(async () => (await getService(t, token, service.id)).status === 'active', {
      what: 'service active',
    });

    // 1 January, 02:00: the day's bill run bills January in advance, dated on the frozen day.
    await advance(clock, '2031-01-01T12:00:00.000Z');
    const [january] = await invoicesOf(token, subscriber.id);
    expect(january).toMatchObject({ total: 2999, status: 'open', amount_due: 2999, due_date: '2031-01-15' });
    expect(january.finalized_at?.slice(0, 10)).toBe('2031-01-01');

    // 25 January: overdue on the 16th, reminded on the 18th, a late fee after the 20th, suspended after the 22nd.
    const at25 = await advance(clock, '2031-01-25T12:00:00.000Z');
    expect(at25.frozen_time).toBe('2031-01-25T12:00:00.000Z');
    const overdue = await eventsOf(token, 'invoice.overdue');
    expect(overdue.map((event) => event.created_at.slice(0, 10))).toEqual(['2031-01-16']);
    const reminders = await eventsOf(token, 'invoice.reminder');
    expect(reminders.map((event) => event.created_at.slice(0, 10))).toEqual(['2031-01-18']);
    const fees = (await api(token).get(`/subscribers/${subscriber.id}/charges`)).body.data as Body[];
    const invoicesNow = await invoicesOf(token, subscriber.id);
    const feeBilled = invoicesNow.flatMap((invoice) => invoice.lines).some((line) => line.amount === 500);
    expect(fees.some((charge) => charge.amount === 500) || feeBilled).toBe(true);
    const suspended = await getSubscriber(t, token, subscriber.id);
    expect(suspended.status).toBe('suspended');
    const changes = await eventsOf(token, 'subscriber.status_changed');
    expect(changes.find((event) => event.data.to === 'suspended')?.created_at.slice(0, 10)).toBe(
      '2031-01-23',
    );

    // Paying what is owed restores the subscriber (paid_up), at the clock's time.
    const owed = await balanceOf(token, subscriber.id);
    expect(owed).toBe(2999 + 500);
    await createPayment(t, token, subscriber.id, owed, { currency: 'EUR' });
    await waitFor(async () => (await getSubscriber(t, token, subscriber.id)).status === 'active', {
      what: `restored after payment (balance now ${await balanceOf(token, subscriber.id)})`,
    });
    const restored = await eventsOf(token, 'subscriber.status_changed');
    expect(
      restored.find((event) => event.data.to === 'active' && event.data.from === 'suspended')?.created_at,
    ).toBe('2031-01-25T12:00:00.000Z');

    // The end of each advance is marked by test_clock.ready, in the owner's log.
    const ready = await eventsOf(owner.token, 'test_clock.ready');
    expect(ready.filter((event) => (event.data.object as Body).id === clock.id)).toHaveLength(2);
  }, 240_000);

  it('should never move a clock back, nor more than two years at once', async () => {
    const clock = await createClock('2031-06-01T00:00:00.000Z');
    for (const to of ['2031-05-31T00:00:00.000Z', '2031-06-01T00:00:00.000Z', '2033-06-03T00:00:00.000Z']) {
      const res = await api(owner.token).post(`/test-clocks/${clock.id}/advance`, { to });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', field: 'to' });
    }
    const res = await api(owner.token).post(`/test-clocks/${clock.id}/advance`, { to: 'tomorrow' });
    expect(res.status).toBe(422);
  });

  it('should take one advance at a time (409 test_clock_advancing)', async () => {
    const clock = await createClock('2031-06-01T00:00:00.000Z');
    const [first, second] = await Promise.all([
      api(owner.token).post(`/test-clocks/${clock.id}/advance`, { to: '2031-06-20T00:00:00.000Z' }),
      api(owner.token).post(`/test-clocks/${clock.id}/advance`, { to: '2031-06-21T00:00:00.000Z' }),
    ]);
    expect([first.status, second.status].sort()).toEqual([202, 409]);
    expect([first, second].find((res) => res.status === 409)?.body.error.code).toBe('test_clock_advancing');
    await waitFor(
      async () =>
        ((await api(owner.token).get(`/test-clocks/${clock.id}`)).body.data as TestClock).status === 'ready',
      { timeout: 90_000, what: 'advance done' },
    );
  });

  it('should leave live tenants on the real time while a test tenant advances', async () => {
    const clock = await createClock('2032-01-01T00:00:00.000Z');
    await advance(clock, '2032-03-01T00:00:00.000Z');
    const live = await createSubscriber(t, other.token);
    expect(Math.abs(new Date(live.created_at).getTime() - Date.now())).toBeLessThan(60_000);
    const test = await createSubscriber(t, clock.token);
    expect(test.created_at).toBe('2032-03-01T00:00:00.000Z');
  });

  it('should keep a clock to its owner: another tenant neither sees nor advances it, a test tenant makes none', async () => {
    const clock = await createClock('2031-06-01T00:00:00.000Z');
    expect((await api(other.token).get(`/test-clocks/${clock.id}`)).status).toBe(404);
    const advanced = await api(other.token).post(`/test-clocks/${clock.id}/advance`, {
      to: '2031-07-01T00:00:00Z',
    });
    expect(advanced.status).toBe(404);
    const listed = (await api(other.token).get('/test-clocks')).body.data as TestClock[];
    expect(listed.map((item) => item.id)).not.toContain(clock.id);
    const mine = (await api(owner.token).get('/test-clocks?limit=100')).body.data as TestClock[];
    expect(mine.map((item) => item.id)).toContain(clock.id);
    const nested = await api(clock.token).post('/test-clocks', {
      name: 'nested',
      frozen_time: '2031-06-01T00:00:00Z',
    });
    expect(nested.status).toBe(403);
    expect(nested.body.error.code).toBe('test_tenant_forbidden');
    // The test tenant's own token reads its clock's tenant, not the owner's clocks.
    expect((await api(clock.token).get(`/test-clocks/${clock.id}`)).status).toBe(404);
  });
});
