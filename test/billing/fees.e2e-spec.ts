import request from 'supertest';
import {
  addDays,
  automationActor,
  automationSuite,
  eventually,
  invoicesOf,
  moveSubscriber,
  nextMonth,
  overdueEvents,
  paidUpRan,
  pay,
  setDay,
  setRule,
  settle,
  statusEvents,
  subscriberBecomes,
  TestClock,
} from '../support/automation-factory';
import { createInvoice, createPayment, eventsOf, getInvoice, listAll } from '../support/billing-factory';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  type BillingProfile,
  billingProfileBody,
  createBillingProfile,
  createSubscriber,
  getSubscriber,
  postBillingProfile,
} from '../support/subscriber-factory';
import { createTenantWithToken, type TenantWithToken, type TestApp } from '../support/test-app';

type Body = Record<string, unknown>;

interface Charge {
  id: string;
  subscriber_id: string;
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  currency: string;
  status: 'pending' | 'invoiced';
  source: string;
  source_id: string | null;
  invoice_id: string | null;
}

interface Line {
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  charge_id?: string;
}

/**
 * Issue 28 item 9: fees per billing profile, charged by automation rules switchable per tenant. A late fee (fixed, or
 * a percentage of what is really overdue) once per invoice past due_date + after_days, issued at once on an invoice of
 * its own; a reconnection fee when a non-payment suspension is lifted; and fees_before_restoration, which keeps the
 * suspension until the fees are paid too. Everything on a TestClock.
 */
describe('Billing: late and reconnection fees', () => {
  let t: TestApp;
  let clock: TestClock;
  /** A tenant whose only use is to show that the late fee sweep has run (its rule is never turned off). */
  let witness: TenantWithToken;
  let witnessProfile: BillingProfile;

  automationSuite(async (suite) => {
    ({ t, clock } = suite);
    witness = await createTenantWithToken(t, ['admin']);
    witnessProfile = await createBillingProfile(t, witness.token, {
      late_fee: { type: 'fixed', amount: 1 },
    });
  });

  async function chargesOf(
    token: string,
    subscriberId: string,
    status: 'pending' | 'invoiced',
  ): Promise<Charge[]> {
    return listAll<Charge>(t, token, `/api/v1/subscribers/${subscriberId}/charges`, { status });
  }

  /** Every charge of the subscriber from `source`, pending or invoiced. */
  async function feesOf(token: string, subscriberId: string, source: string): Promise<Charge[]> {
    const all = [
      ...(await chargesOf(token, subscriberId, 'pending')),
      ...(await chargesOf(token, subscriberId, 'invoiced')),
    ];
    return all.filter((charge) => charge.source === source);
  }

  /**
   * Shows that the late fee sweep has run on the clock's current day, after this call began: a fresh subscriber of the
   * witness tenant gets an invoice due yesterday, and the test waits for its late fee. Then a few more rounds go by.
   */
  async function lateFeeSweepRan(): Promise<void> {
    const subscriber = await createSubscriber(t, witness.token, {
      status: 'active',
      billing_profile_id: witnessProfile.id,
    });
    await createInvoice(t, witness.token, subscriber.id, 100, {
      due_date: addDays(clock.today(), -1),
      currency: 'USD',
    });
    await eventually(
      'the witness late fee',
      () => feesOf(witness.token, subscriber.id, 'late_fee'),
      (fees) => fees.length === 1,
    );
    await settle(300);
  }

  /** An active subscriber on a fresh USD profile (billing day 1, 14 days to pay, never suspended unless `profile` says). */
  async function customer(token: string, profile: Body) {
    const created = await createBillingProfile(t, token, {
      billing_day: 1,
      payment_terms_days: 14,
      ...profile,
    });
    const subscriber = await createSubscriber(t, token, { status: 'active', billing_profile_id: created.id });
    return { profile: created, subscriber };
  }

  /** An open USD invoice of one line of `total`, due on `dueDate`. */
  const invoiceDue = (token: string, subscriberId: string, total: number, dueDate: string) =>
    createInvoice(t, token, subscriberId, total, { due_date: dueDate, currency: 'USD' });

  /** Waits for the subscriber's late fee for `invoiceId` and answers it. */
  async function lateFeeFor(token: string, subscriberId: string, invoiceId: string): Promise<Charge> {
    const [fee] = await eventually(
      `late fee for ${invoiceId}`,
      async () =>
        (await feesOf(token, subscriberId, 'late_fee')).filter((each) => each.source_id === invoiceId),
      (fees) => fees.length > 0,
    );
    return fee;
  }

  describe('billing profile fields', () => {
    it('should default to no fees, take both late fee forms and a reconnection fee, and answer them in one shape', async () => {
      const isp = await createTenantWithToken(t);
      const none = await createBillingProfile(t, isp.token);
      expect(none).toMatchObject({ late_fee: null, reconnection_fee: null, fees_before_restoration: false });

      const fixed = await createBillingProfile(t, isp.token, {
        late_fee: { type: 'fixed', amount: 500 },
        reconnection_fee: 1500,
        fees_before_restoration: true,
      });
      expect(fixed).toMatchObject({
        late_fee: { type: 'fixed', amount: 500, after_days: 0 },
        reconnection_fee: 1500,
        fees_before_restoration: true,
      });

      const percentage = await createBillingProfile(t, isp.token, {
        late_fee: { type: 'percentage', percentage: '5.5', min_amount: 200, after_days: 5 },
      });
      expect(percentage.late_fee).toEqual({
        type: 'percentage',
        percentage: '5.50',
        min_amount: 200,
        max_amount: null,
        after_days: 5,
      });
      const read = await request(t.http)
        .get(`/api/v1/billing-profiles/${percentage.id}`)
        .set(bearer(isp.token));
      expectSuccess(read);
      expect(read.body.data.late_fee).toEqual(percentage.late_fee);
    });

    it('should replace the whole late fee on PATCH, remove fees with null, and name late_fee once in changed_fields', async () => {
      const isp = await createTenantWithToken(t);
      const profile = await createBillingProfile(t, isp.token, {
        late_fee: { type: 'percentage', percentage: '5', min_amount: 200, max_amount: 900, after_days: 3 },
        reconnection_fee: 1500,
      });
      const patch = (body: Body) =>
        request(t.http).patch(`/api/v1/billing-profiles/${profile.id}`).set(bearer(isp.token)).send(body);

      const fixed = await patch({ late_fee: { type: 'fixed', amount: 700 } });
      expectSuccess(fixed);
      expect(fixed.body.data.late_fee).toEqual({ type: 'fixed', amount: 700, after_days: 0 });
      const same = await patch({ late_fee: { type: 'fixed', amount: 700 }, fees_before_restoration: false });
      expectSuccess(same);
      const cleared = await patch({ late_fee: null, reconnection_fee: null, fees_before_restoration: true });
      expectSuccess(cleared);
      expect(cleared.body.data).toMatchObject({
        late_fee: null,
        reconnection_fee: null,
        fees_before_restoration: true,
      });

      const updates = await eventsOf(t, isp.token, profile.id, 'billing_profile.updated');
      expect(updates.map((event) => event.data.changed_fields)).toEqual([
        ['late_fee'],
        ['late_fee', 'reconnection_fee', 'fees_before_restoration'],
      ]);
    });

    it.each<[string, Body, number, string, string]>([
      [
        'a fixed fee without amount',
        { late_fee: { type: 'fixed' } },
        400,
        'missing_field',
        'late_fee.amount',
      ],
      ['a late fee without type', { late_fee: { amount: 500 } }, 400, 'missing_field', 'late_fee.type'],
      [
        'an unknown type',
        { late_fee: { type: 'flat', amount: 500 } },
        422,
        'validation_failed',
        'late_fee.type',
      ],
      [
        'a percentage on a fixed fee',
        { late_fee: { type: 'fixed', amount: 500, percentage: '5' } },
        400,
        'unknown_field',
        'late_fee.percentage',
      ],
      [
        'an amount on a percentage fee',
        { late_fee: { type: 'percentage', percentage: '5', amount: 500 } },
        400,
        'unknown_field',
        'late_fee.amount',
      ],
      [
        'a fixed amount of 0',
        { late_fee: { type: 'fixed', amount: 0 } },
        422,
        'validation_failed',
        'late_fee.amount',
      ],
      [
        'a percentage of 0',
        { late_fee: { type: 'percentage', percentage: '0.00' } },
        422,
        'validation_failed',
        'late_fee.percentage',
      ],
      [
        'a percentage above 100',
        { late_fee: { type: 'percentage', percentage: '100.01' } },
        422,
        'validation_failed',
        'late_fee.percentage',
      ],
      [
        'three decimals',
        { late_fee: { type: 'percentage', percentage: '5.125' } },
        422,
        'validation_failed',
        'late_fee.percentage',
      ],
      [
        'a numeric percentage',
        { late_fee: { type: 'percentage', percentage: 5 } },
        422,
        'validation_failed',
        'late_fee.percentage',
      ],
      [
        'a ceiling below the floor',
        { late_fee: { type: 'percentage', percentage: '5', min_amount: 500, max_amount: 400 } },
        422,
        'validation_failed',
        'late_fee.max_amount',
      ],
      [
        'negative after_days',
        { late_fee: { type: 'fixed', amount: 500, after_days: -1 } },
        422,
        'validation_failed',
        'late_fee.after_days',
      ],
      ['a late fee that is not an object', { late_fee: 'fixed' }, 422, 'validation_failed', 'late_fee'],
      ['a reconnection fee of 0', { reconnection_fee: 0 }, 422, 'validation_failed', 'reconnection_fee'],
      [
        'a fractional reconnection fee',
        { reconnection_fee: 10.5 },
        422,
        'validation_failed',
        'reconnection_fee',
      ],
      [
        'a non-boolean fees_before_restoration',
        { fees_before_restoration: 'yes' },
        422,
        'validation_failed',
        'fees_before_restoration',
      ],
    ])('should refuse %s', async (_what, body, status, code, field) => {
      const isp = await createTenantWithToken(t);
      const res = await postBillingProfile(t, isp.token, billingProfileBody(body));
      expectError(res, status, code, field);
    });

    // A hostile-input finding: an array where the late_fee object belongs answered 500 when it held null.
    it.each<[string, unknown]>([
      ['[null]', [null]],
      ['[]', []],
      ['an array holding a valid fee', [{ type: 'fixed', amount: 500 }]],
    ])(
      'should refuse a late fee that is an array, %s, on create and on PATCH, changing nothing',
      async (_what, lateFee) => {
        const isp = await createTenantWithToken(t);
        expectError(
          await postBillingProfile(t, isp.token, billingProfileBody({ late_fee: lateFee })),
          422,
          'validation_failed',
          'late_fee',
        );
        const profile = await createBillingProfile(t, isp.token, {
          late_fee: { type: 'fixed', amount: 700 },
        });
        const patched = await request(t.http)
          .patch(`/api/v1/billing-profiles/${profile.id}`)
          .set(bearer(isp.token))
          .send({ payment_terms_days: 30, late_fee: lateFee });
        expectError(patched, 422, 'validation_failed', 'late_fee');
        const read = await request(t.http)
          .get(`/api/v1/billing-profiles/${profile.id}`)
          .set(bearer(isp.token));
        expectSuccess(read);
        expect(read.body.data).toEqual(profile);
      },
    );
  });

  describe('late_fee', () => {
    it('should charge a fixed late fee once per invoice, on an invoice of its own that can become overdue, however many sweeps', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const { subscriber } = await customer(isp.token, { late_fee: { type: 'fixed', amount: 500 } });
      const dueDate = addDays(day0, 3);
      const invoice = await invoiceDue(isp.token, subscriber.id, 3100, dueDate);

      // On the due date: not late yet.
      setDay(clock, dueDate);
      await lateFeeSweepRan();
      expect(await feesOf(isp.token, subscriber.id, 'late_fee')).toEqual([]);

      // The day after: one late fee, by the late_fee rule, issued at once on an invoice due after the payment terms.
      const lateDay = addDays(dueDate, 1);
      setDay(clock, lateDay);
      const fee = await lateFeeFor(isp.token, subscriber.id, invoice.id);
      expect(fee).toMatchObject({
        description: `Late fee for invoice ${invoice.number}`,
        quantity: 1,
        unit_amount: 500,
        amount: 500,
        currency: 'USD',
        status: 'invoiced',
        source: 'late_fee',
        source_id: invoice.id,
      });
      const feeInvoice = await getInvoice(t, isp.token, fee.invoice_id!);
      expect(feeInvoice).toMatchObject({
        status: 'open',
        currency: 'USD',
        total: 500,
        amount_due: 500,
        due_date: addDays(lateDay, 14),
      });
      expect(feeInvoice.lines as Line[]).toEqual([
        expect.objectContaining({
          description: `Late fee for invoice ${invoice.number}`,
          amount: 500,
          charge_id: fee.id,
        }),
      ]);
      const [created] = await eventsOf(t, isp.token, fee.id, 'charge.created');
      expect(created.actor).toEqual(automationActor('late_fee'));
      expect((await eventsOf(t, isp.token, feeInvoice.id, 'invoice.created'))[0].actor).toEqual(
        automationActor('late_fee'),
      );

      // More sweeps, more days: still one fee and two invoices.
      for (const day of [addDays(lateDay, 1), addDays(lateDay, 6)]) {
        setDay(clock, day);
        await lateFeeSweepRan();
        expect(await feesOf(isp.token, subscriber.id, 'late_fee')).toHaveLength(1);
        expect(await invoicesOf(t, isp.token, subscriber.id)).toHaveLength(2);
      }

      // Past its own due date the fee invoice is overdue (invoice.overdue), but a late fee earns no late fee.
      setDay(clock, addDays(feeInvoice.due_date, 1));
      await eventually(
        'the fee invoice overdue',
        () => overdueEvents(t, isp.token, feeInvoice.id),
        (events) => events.length === 1,
      );
      await lateFeeSweepRan();
      expect((await feesOf(isp.token, subscriber.id, 'late_fee')).map((each) => each.source_id)).toEqual([
        invoice.id,
      ]);
      expect(await invoicesOf(t, isp.token, subscriber.id)).toHaveLength(2);
    });

    it('should not charge an invoice paid in time, nor one whose overdue amount the money received covers', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const paid = await customer(isp.token, { late_fee: { type: 'fixed', amount: 500 } });
      const covered = await customer(isp.token, { late_fee: { type: 'fixed', amount: 500 } });
      const dueDate = addDays(day0, 2);
      const first = await invoiceDue(isp.token, paid.subscriber.id, 3100, dueDate);
      await pay(t, isp.token, paid.subscriber.id, first.id, 3100);
      await invoiceDue(isp.token, covered.subscriber.id, 3100, dueDate);
      // Received, not allocated: it counts as paid for dunning, and so for late fees.
      await createPayment(t, isp.token, covered.subscriber.id, 3100, { currency: 'USD', auto_apply: false });

      setDay(clock, addDays(dueDate, 3));
      await lateFeeSweepRan();
      expect(await feesOf(isp.token, paid.subscriber.id, 'late_fee')).toEqual([]);
      expect(await feesOf(isp.token, covered.subscriber.id, 'late_fee')).toEqual([]);
    });

    it('should charge a percentage of what is really overdue, rounded half up, within its floor and ceiling', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const dueDate = addDays(day0, 2);
      const plain = { late_fee: { type: 'percentage', percentage: '5' } };
      const capped = {
        late_fee: { type: 'percentage', percentage: '5.00', min_amount: 200, max_amount: 300 },
      };
      const cases: { profile: Body; total: number; paid: number; unapplied: number; fee: number }[] = [
        { profile: plain, total: 3110, paid: 0, unapplied: 0, fee: 156 }, // 155.5 → 156
        { profile: plain, total: 3109, paid: 0, unapplied: 0, fee: 155 }, // 155.45 → 155
        { profile: plain, total: 5000, paid: 2890, unapplied: 0, fee: 106 }, // 5% of 2110 = 105.5 → 106
        { profile: plain, total: 5000, paid: 0, unapplied: 2891, fee: 105 }, // 5% of 2109 = 105.45 → 105
        { profile: capped, total: 1000, paid: 0, unapplied: 0, fee: 200 }, // 50 → the floor
        { profile: capped, total: 100_000, paid: 0, unapplied: 0, fee: 300 }, // 5000 → the ceiling
        { profile: capped, total: 5000, paid: 0, unapplied: 0, fee: 250 }, // between
      ];
      const made: { subscriber: { id: string }; invoice: { id: string; total: number }; fee: number }[] = [];
      for (const each of cases) {
        const { subscriber } = await customer(isp.token, each.profile);
        const invoice = await invoiceDue(isp.token, subscriber.id, each.total, dueDate);
        if (each.paid > 0) {
          await pay(t, isp.token, subscriber.id, invoice.id, each.paid);
        }
        if (each.unapplied > 0) {
          await createPayment(t, isp.token, subscriber.id, each.unapplied, {
            currency: 'USD',
            auto_apply: false,
          });
        }
        made.push({ subscriber, invoice, fee: each.fee });
      }

      setDay(clock, addDays(dueDate, 1));
      for (const { subscriber, invoice, fee } of made) {
        const charge = await lateFeeFor(isp.token, subscriber.id, invoice.id);
        expect({ total: invoice.total, fee: charge.amount }).toEqual({ total: invoice.total, fee });
      }
    });

    it('should wait after_days past the due date', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const { subscriber } = await customer(isp.token, {
        late_fee: { type: 'fixed', amount: 300, after_days: 5 },
      });
      const dueDate = addDays(day0, 1);
      const invoice = await invoiceDue(isp.token, subscriber.id, 3100, dueDate);

      for (const day of [addDays(dueDate, 1), addDays(dueDate, 5)]) {
        setDay(clock, day);
        await lateFeeSweepRan();
        expect(await feesOf(isp.token, subscriber.id, 'late_fee')).toEqual([]);
      }
      setDay(clock, addDays(dueDate, 6));
      expect((await lateFeeFor(isp.token, subscriber.id, invoice.id)).amount).toBe(300);
    });

    it('should charge nothing while the tenant has the rule off, and charge what is still late once it is on again', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      await setRule(t, isp.token, 'late_fee', false);
      const { subscriber } = await customer(isp.token, { late_fee: { type: 'fixed', amount: 500 } });
      const dueDate = addDays(day0, 1);
      const invoice = await invoiceDue(isp.token, subscriber.id, 3100, dueDate);

      for (const day of [addDays(dueDate, 1), addDays(dueDate, 4)]) {
        setDay(clock, day);
        await lateFeeSweepRan();
        expect(await feesOf(isp.token, subscriber.id, 'late_fee')).toEqual([]);
        expect(await invoicesOf(t, isp.token, subscriber.id)).toHaveLength(1);
      }

      await setRule(t, isp.token, 'late_fee', true);
      expect((await lateFeeFor(isp.token, subscriber.id, invoice.id)).amount).toBe(500);
    });
  });

  describe('reconnection_fee', () => {
    /** The subscriber's moves into suspended, oldest first. */
    async function suspensions(token: string, subscriberId: string) {
      return (await statusEvents(t, token, subscriberId)).filter((event) => event.data.to === 'suspended');
    }

    it('should charge the reconnection fee once when paid_up lifts a non-payment suspension, as a pending charge the next invoice carries', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const { subscriber } = await customer(isp.token, {
        auto_suspend_after_days: 3,
        reconnection_fee: 1500,
      });
      const dueDate = addDays(day0, 1);
      const invoice = await invoiceDue(isp.token, subscriber.id, 3100, dueDate);

      setDay(clock, addDays(dueDate, 4));
      await subscriberBecomes(t, isp.token, subscriber.id, 'suspended');
      expect(await feesOf(isp.token, subscriber.id, 'reconnection_fee')).toEqual([]);

      await pay(t, isp.token, subscriber.id, invoice.id, 3100);
      await subscriberBecomes(t, isp.token, subscriber.id, 'active');
      const [suspension] = await suspensions(isp.token, subscriber.id);
      const [fee] = await eventually(
        'the reconnection fee',
        () => feesOf(isp.token, subscriber.id, 'reconnection_fee'),
        (fees) => fees.length > 0,
      );
      expect(fee).toMatchObject({
        description: 'Reconnection fee',
        amount: 1500,
        currency: 'USD',
        status: 'pending',
        source_id: suspension.id,
        invoice_id: null,
      });
      expect((await eventsOf(t, isp.token, fee.id, 'charge.created'))[0].actor).toEqual(
        automationActor('reconnection_fee'),
      );

      // Once: more events and passes charge nothing more.
      await paidUpRan(t, isp.token, clock);
      expect(await feesOf(isp.token, subscriber.id, 'reconnection_fee')).toHaveLength(1);

      // The next invoice issued carries it.
      const next = await invoiceDue(isp.token, subscriber.id, 100, addDays(clock.today(), 14));
      expect(next.total).toBe(1600);
      expect((next.lines as Line[]).find((line) => line.charge_id === fee.id)).toMatchObject({
        description: 'Reconnection fee',
        amount: 1500,
      });
    });

    it('should charge it when a person lifts a non-payment suspension, once per suspension, and never for another reason', async () => {
      const isp = await createTenantWithToken(t);
      nextMonth(clock);
      const { subscriber } = await customer(isp.token, { reconnection_fee: 1000 });
      const other = await customer(isp.token, { reconnection_fee: 1000 });

      await moveSubscriber(t, isp.token, subscriber.id, 'suspended', 'non_payment');
      await moveSubscriber(t, isp.token, subscriber.id, 'active');
      await moveSubscriber(t, isp.token, other.subscriber.id, 'suspended', 'manual');
      await moveSubscriber(t, isp.token, other.subscriber.id, 'active');
      await eventually(
        'the first reconnection fee',
        () => feesOf(isp.token, subscriber.id, 'reconnection_fee'),
        (fees) => fees.length === 1,
      );

      await moveSubscriber(t, isp.token, subscriber.id, 'suspended', 'non_payment');
      await moveSubscriber(t, isp.token, subscriber.id, 'active');
      const fees = await eventually(
        'the second reconnection fee',
        () => feesOf(isp.token, subscriber.id, 'reconnection_fee'),
        (each) => each.length === 2,
      );
      expect(fees.map((fee) => fee.source_id).sort()).toEqual(
        (await suspensions(isp.token, subscriber.id)).map((event) => event.id).sort(),
      );

      await paidUpRan(t, isp.token, clock);
      expect(await feesOf(isp.token, subscriber.id, 'reconnection_fee')).toHaveLength(2);
      expect(await feesOf(isp.token, other.subscriber.id, 'reconnection_fee')).toEqual([]);
    });

    it('should charge nothing while the tenant has the rule off', async () => {
      const isp = await createTenantWithToken(t);
      nextMonth(clock);
      await setRule(t, isp.token, 'reconnection_fee', false);
      const { subscriber } = await customer(isp.token, { reconnection_fee: 1000 });
      await moveSubscriber(t, isp.token, subscriber.id, 'suspended', 'non_payment');
      await moveSubscriber(t, isp.token, subscriber.id, 'active');
      await paidUpRan(t, isp.token, clock);
      expect(await feesOf(isp.token, subscriber.id, 'reconnection_fee')).toEqual([]);
    });
  });

  describe('fees_before_restoration', () => {
    it('should keep a non-payment suspension until the late fee invoice is paid too (and lift it without, when off)', async () => {
      const isp = await createTenantWithToken(t);
      const day0 = nextMonth(clock);
      const fees = {
        late_fee: { type: 'fixed', amount: 500 },
        auto_suspend_after_days: 3,
        reconnection_fee: 1000,
      };
      const strict = await customer(isp.token, { ...fees, fees_before_restoration: true });
      const lenient = await customer(isp.token, fees);
      const dueDate = addDays(day0, 1);
      const invoices = {
        strict: await invoiceDue(isp.token, strict.subscriber.id, 3100, dueDate),
        lenient: await invoiceDue(isp.token, lenient.subscriber.id, 3100, dueDate),
      };

      // Late: a late fee each; past the grace: both suspended for non-payment.
      setDay(clock, addDays(dueDate, 4));
      const strictFee = await lateFeeFor(isp.token, strict.subscriber.id, invoices.strict.id);
      await lateFeeFor(isp.token, lenient.subscriber.id, invoices.lenient.id);
      await subscriberBecomes(t, isp.token, strict.subscriber.id, 'suspended');
      await subscriberBecomes(t, isp.token, lenient.subscriber.id, 'suspended');

      // The invoices paid, the fees not (their invoices are not even due yet).
      await pay(t, isp.token, strict.subscriber.id, invoices.strict.id, 3100);
      await pay(t, isp.token, lenient.subscriber.id, invoices.lenient.id, 3100);
      await subscriberBecomes(t, isp.token, lenient.subscriber.id, 'active');
      await paidUpRan(t, isp.token, clock);
      expect(await getSubscriber(t, isp.token, strict.subscriber.id)).toMatchObject({
        status: 'suspended',
        suspension_reason: 'non_payment',
      });

      // The fee invoice paid: restored, and the reconnection fee charged.
      await pay(t, isp.token, strict.subscriber.id, strictFee.invoice_id!, 500);
      await subscriberBecomes(t, isp.token, strict.subscriber.id, 'active');
      const moves = (await statusEvents(t, isp.token, strict.subscriber.id)).map((event) => ({
        to: event.data.to,
        actor: event.actor,
      }));
      expect(moves).toEqual([
        { to: 'suspended', actor: automationActor('overdue_invoices') },
        { to: 'active', actor: automationActor('paid_up') },
      ]);
      await eventually(
        'the reconnection fee',
        () => feesOf(isp.token, strict.subscriber.id, 'reconnection_fee'),
        (each) => each.length === 1,
      );
    });

    it('should keep it while a pending fee charge is not covered by the money received', async () => {
      const isp = await createTenantWithToken(t);
      nextMonth(clock);
      const { subscriber } = await customer(isp.token, {
        reconnection_fee: 1000,
        fees_before_restoration: true,
      });

      // A first suspension lifted by hand leaves a pending reconnection fee of 1000.
      await moveSubscriber(t, isp.token, subscriber.id, 'suspended', 'non_payment');
      await moveSubscriber(t, isp.token, subscriber.id, 'active');
      await eventually(
        'the reconnection fee',
        () => feesOf(isp.token, subscriber.id, 'reconnection_fee'),
        (each) => each.length === 1,
      );

      // Suspended again for non-payment: 400 received does not cover the pending fee; 600 more does.
      await moveSubscriber(t, isp.token, subscriber.id, 'suspended', 'non_payment');
      await createPayment(t, isp.token, subscriber.id, 400, { currency: 'USD' });
      await paidUpRan(t, isp.token, clock);
      expect((await getSubscriber(t, isp.token, subscriber.id)).status).toBe('suspended');
      await createPayment(t, isp.token, subscriber.id, 600, { currency: 'USD' });
      await subscriberBecomes(t, isp.token, subscriber.id, 'active');
    });
  });
});
