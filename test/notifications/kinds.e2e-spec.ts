import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { AUTOMATION_ENV, moveSubscriber } from '../support/automation-factory';
import { createInvoice, createPayment, createTransaction, eventsOf } from '../support/billing-factory';
import { expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  dayFromToday,
  htmlOf,
  INSTANCE_FROM,
  listNotifications,
  mailboxes,
  NOTIFICATION_ENV,
  notificationOfEvent,
  type NotificationBody,
  settledNotification,
} from '../support/notification-factory';
import { binary, missingFrom, pdfOf, pdfPages } from '../support/pdf-text';
import { createPlan, createService, waitForOrder } from '../support/provisioning-factory';
import { type ReceivedMail, SmtpReceiver } from '../support/smtp-receiver';
import { createBillingProfile, createSubscriber, uniqueEmail } from '../support/subscriber-factory';
import { createTicket, postComment } from '../support/ticket-factory';
import { createTenantWithToken, type TenantWithToken, type TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const NAME = 'Ada Lovelace';

/** A calendar date as the default templates write it for a tenant in en-US and UTC: "March 2, 2026". */
function longDate(day: string): string {
  return new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' }).format(
    new Date(`${day}T00:00:00.000Z`),
  );
}

/** Issue 31, item 2: every kind of notification is mailed from its real cause, and reads as it should. */
describe('Notifications: each kind from its cause', () => {
  let smtp: SmtpReceiver;
  let t: TestApp;
  let tenant: TenantWithToken;
  let tenantName: string;

  beforeAll(async () => {
    smtp = await SmtpReceiver.start();
    t = await startTestApp({ ...AUTOMATION_ENV, ...NOTIFICATION_ENV, ...smtp.env });
    tenant = await createTenantWithToken(t);
    tenantName = `Tenant ${tenant.slug}`;
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  /** An active subscriber with a fresh email, and that email. */
  async function customer(token = tenant.token, overrides: Record<string, unknown> = {}) {
    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, token, {
      email,
      full_name: NAME,
      status: 'active',
      ...overrides,
    });
    return { id: subscriber.id, email };
  }

  /** The one message to `email` whose subject starts with `subject`, once it arrived. */
  async function mailTo(email: string, subject: string): Promise<ReceivedMail> {
    const found = await waitFor(
      () => {
        const matching = smtp.to(email).filter((mail) => (mail.parsed.subject ?? '').startsWith(subject));
        return matching.length > 0 ? matching : null;
      },
      { what: `a message "${subject}…" to ${email}` },
    );
    expect(found).toHaveLength(1);
    return found[0];
  }

  /** The message is to the subscriber alone, from the instance's sender, with a text and an HTML part greeting them, signed by the tenant. */
  function expectAddressed(mail: ReceivedMail, email: string, signedBy = tenantName, name = NAME): void {
    expect(mail.envelopeTo).toEqual([email]);
    expect(mailboxes(mail.parsed.to)).toEqual([{ name, address: email }]);
    expect(mailboxes(mail.parsed.from)).toEqual([INSTANCE_FROM]);
    expect(mail.parsed.text).toContain(`Dear ${name},`);
    expect(mail.parsed.text).toContain(`Kind regards,\n${signedBy}\n`);
    expect(htmlOf(mail)).toContain(`<p>Dear ${name},</p>`);
    expect(mail.messageId).toMatch(/^<ntf_[0-9A-Z]{26}@isp\.example>$/);
  }

  /** The notification of the message: sent once, to that address, with its subject and Message-ID. */
  function expectRecorded(
    notification: NotificationBody,
    mail: ReceivedMail,
    kind: string,
    eventType: string,
  ) {
    expect(notification).toMatchObject({
      kind,
      event_type: eventType,
      status: 'sent',
      reason: null,
      recipient: mail.envelopeTo[0],
      subject: mail.parsed.subject,
      message_id: mail.messageId,
      attempts: 1,
    });
    expect(notification.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'sent', smtp_code: 250 }),
    ]);
  }

  async function pdfAt(path: string): Promise<Buffer> {
    return pdfOf(await binary(request(t.http).get(path).set(bearer(tenant.token))));
  }

  it('invoice_issued: should mail an issued invoice with its figures and its own PDF attached', async () => {
    const { id, email } = await customer();
    const invoice = await createInvoice(t, tenant.token, id, 4999, { due_date: '2099-12-31' });
    const number = String(invoice.number);

    const mail = await mailTo(email, 'Invoice ');
    expect(mail.parsed.subject).toBe(`Invoice ${number} from ${tenantName}`);
    expectAddressed(mail, email);
    expect(mail.parsed.text).toContain(`Your invoice ${number} of $49.99 was issued on`);
    expect(mail.parsed.text).toContain('Amount due: $49.99');
    expect(mail.parsed.text).toContain(`Due date: ${longDate('2099-12-31')}`);
    expect(htmlOf(mail)).toContain(`<strong>${number}</strong>`);
    expect(mail.parsed.attachments).toHaveLength(1);
    const [pdf] = mail.parsed.attachments;
    expect({ type: pdf.contentType, name: pdf.filename }).toEqual({
      type: 'application/pdf',
      name: `${number}.pdf`,
    });
    expect(pdf.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.content.equals(await pdfAt(`/api/v1/invoices/${invoice.id}/pdf`))).toBe(true);
    // The attachment reads as the invoice it is: its number, the subscriber, its total.
    expect(missingFrom(pdfPages(pdf.content).join('\n'), ['Invoice', number, NAME, 'Total $49.99'])).toEqual(
      [],
    );

    const [finalized] = await eventsOf(t, tenant.token, invoice.id, 'invoice.finalized');
    expectRecorded(
      await notificationOfEvent(t, tenant.token, 'invoice_issued', finalized.id),
      mail,
      'invoice_issued',
      'invoice.finalized',
    );
  });

  it('payment_received: should mail a receipt for a payment, and nothing for a credit', async () => {
    const { id, email } = await customer();
    const credit = await createTransaction(t, tenant.token, id, {
      kind: 'credit',
      source: 'adjustment',
      amount: 300,
    });
    const payment = await createPayment(t, tenant.token, id, 2500, {
      method: 'card',
      reference: 'BANK-REF-42',
      auto_apply: false,
    });

    const mail = await mailTo(email, 'Payment received');
    expect(mail.parsed.subject).toBe('Payment received: $25.00');
    expectAddressed(mail, email);
    expect(mail.parsed.text).toContain('we received your payment of $25.00 on');
    expect(mail.parsed.text).toContain('Method: card');
    expect(mail.parsed.text).toContain('Reference: BANK-REF-42');
    expect(htmlOf(mail)).toContain('<strong>$25.00</strong>');
    expect(mail.parsed.attachments).toEqual([]);

    const notification = await settledNotification(t, tenant.token, { subscriber_id: id });
    expectRecorded(notification, mail, 'payment_received', 'transaction.created');
    const [created] = await eventsOf(t, tenant.token, payment.id, 'transaction.created');
    expect(notification.event_id).toBe(created.id);
    // The credit's transaction.created (written before the payment's) caused no notification at all.
    const all = await listNotifications(t, tenant.token, { subscriber_id: id });
    expect(all.map((each) => each.event_id)).toEqual([created.id]);
    expect(credit.kind).toBe('credit');
  });

  it('credit_note_issued: should mail a credit note with the invoice it credits and its own PDF attached', async () => {
    const { id, email } = await customer();
    const invoice = await createInvoice(t, tenant.token, id, 5000);
    const res = await request(t.http)
      .post(`/api/v1/invoices/${invoice.id}/credit-notes`)
      .set(bearer(tenant.token))
      .send({ reason: 'Outage 3-5 December', amount: 2000 });
    expectSuccess(res, 201);
    const note = res.body.data as { id: string; number: string };

    const mail = await mailTo(email, 'Credit note');
    expect(mail.parsed.subject).toBe(`Credit note ${note.number} from ${tenantName}`);
    expectAddressed(mail, email);
    expect(mail.parsed.text).toContain(`We issued credit note ${note.number} of $20.00 on`);
    expect(mail.parsed.text).toContain(`against invoice ${String(invoice.number)}.`);
    expect(mail.parsed.text).toContain('Reason: Outage 3-5 December');
    const [pdf] = mail.parsed.attachments;
    expect(mail.parsed.attachments).toHaveLength(1);
    expect({ type: pdf.contentType, name: pdf.filename }).toEqual({
      type: 'application/pdf',
      name: `${note.number}.pdf`,
    });
    expect(pdf.content.equals(await pdfAt(`/api/v1/credit-notes/${note.id}/pdf`))).toBe(true);
    // The attachment reads as the credit note it is: its number, the invoice it corrects, the subscriber, its total.
    expect(
      missingFrom(pdfPages(pdf.content).join('\n'), [
        'Credit note',
        note.number,
        `Original invoice ${String(invoice.number)}`,
        NAME,
        'Total $20.00',
      ]),
    ).toEqual([]);

    const notification = await settledNotification(t, tenant.token, {
      subscriber_id: id,
      kind: 'credit_note_issued',
    });
    expectRecorded(notification, mail, 'credit_note_issued', 'credit_note.created');
    // The credit the note applies is no payment: no receipt.
    expect(await listNotifications(t, tenant.token, { subscriber_id: id, kind: 'payment_received' })).toEqual(
      [],
    );
  });

  it('invoice_reminder: should mail the reminder the invoice_reminders rule sends for an invoice past due', async () => {
    const profile = await createBillingProfile(t, tenant.token, {
      reminder_offsets: [1],
      auto_suspend_after_days: null,
    });
    const { id, email } = await customer(tenant.token, { billing_profile_id: profile.id });
    const dueDate = dayFromToday(-2);
    const invoice = await createInvoice(t, tenant.token, id, 1200, { due_date: dueDate });
    const number = String(invoice.number);

    const mail = await mailTo(email, 'Payment reminder');
    expect(mail.parsed.subject).toBe(`Payment reminder: invoice ${number}`);
    expectAddressed(mail, email);
    expect(mail.parsed.text).toContain(
      `Invoice ${number} was due on ${longDate(dueDate)} and has not been paid in full yet.`,
    );
    expect(mail.parsed.text).toContain('Amount still owed: $12.00 (invoice total: $12.00)');
    expect(mail.parsed.text).not.toContain('is due today');
    expect(mail.parsed.attachments).toEqual([]);

    const [reminder] = await eventsOf(t, tenant.token, invoice.id, 'invoice.reminder');
    expect(reminder.data).toMatchObject({ offset_days: 1, amount_due: 1200 });
    expectRecorded(
      await notificationOfEvent(t, tenant.token, 'invoice_reminder', reminder.id),
      mail,
      'invoice_reminder',
      'invoice.reminder',
    );
  });

  it('suspended_for_non_payment and service_restored: should mail the suspension with what is owed, then the restoration', async () => {
    const { id, email } = await customer();
    await createInvoice(t, tenant.token, id, 4999);
    await createInvoice(t, tenant.token, id, 1001);
    await moveSubscriber(t, tenant.token, id, 'suspended', 'non_payment');

    const suspended = await mailTo(email, 'Your service has been suspended');
    expectAddressed(suspended, email);
    expect(suspended.parsed.text).toContain('because of unpaid invoices');
    expect(suspended.parsed.text).toContain('Amount owed: $60.00');
    expect(htmlOf(suspended)).toContain('<strong>$60.00</strong>');
    expectRecorded(
      await settledNotification(t, tenant.token, { subscriber_id: id, kind: 'suspended_for_non_payment' }),
      suspended,
      'suspended_for_non_payment',
      'subscriber.status_changed',
    );

    await moveSubscriber(t, tenant.token, id, 'active');
    const restored = await mailTo(email, 'Your service has been restored');
    expectAddressed(restored, email);
    expect(restored.parsed.text).toContain('Your internet service was restored on');
    expectRecorded(
      await settledNotification(t, tenant.token, { subscriber_id: id, kind: 'service_restored' }),
      restored,
      'service_restored',
      'subscriber.status_changed',
    );
  });

  it('service_restored: should record the end of a suspension for another reason skipped, and mail nothing of it', async () => {
    const { id, email } = await customer();
    await moveSubscriber(t, tenant.token, id, 'suspended', 'manual');
    await moveSubscriber(t, tenant.token, id, 'active');

    const restored = await settledNotification(t, tenant.token, {
      subscriber_id: id,
      kind: 'service_restored',
    });
    expect(restored).toMatchObject({
      status: 'skipped',
      reason: 'suspension_not_for_non_payment',
      attempts: 0,
      attempt_log: [],
      message_id: null,
    });
    // A manual suspension is no suspended_for_non_payment: the restoration is the subscriber's only notification.
    expect((await listNotifications(t, tenant.token, { subscriber_id: id })).map((each) => each.id)).toEqual([
      restored.id,
    ]);
    expect(smtp.attemptsFor(email)).toBe(0);
  });

  it('service_activated: should mail the PPPoE username of a service whose activation completed, never its password', async () => {
    const { id, email } = await customer();
    const plan = await createPlan(t, tenant.token);
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const { service, order } = await createService(t, tenant.token, id, {
      plan_id: plan.id,
      pppoe_password: password,
      installation_address: '12 Fibre Lane, Springfield',
    });
    expect((await waitForOrder(t, tenant.token, order.id, ['completed', 'failed'])).status).toBe('completed');

    const mail = await mailTo(email, `Your ${plan.name} service is active`);
    expectAddressed(mail, email);
    expect(service.radius_username).toBe(`${tenant.slug}/${service.pppoe_username}`);
    expect(mail.parsed.text).toContain(
      `Configure your router with this PPPoE username:\n${service.radius_username}\n`,
    );
    expect(mail.parsed.text).toContain('Installation address: 12 Fibre Lane, Springfield');
    expect(htmlOf(mail)).toContain(`<strong>${service.radius_username.replace('/', '&#x2F;')}</strong>`);
    expect(mail.raw).not.toContain(password);
    expect(mail.raw).not.toContain(Buffer.from(password).toString('base64'));

    const notification = await settledNotification(t, tenant.token, {
      subscriber_id: id,
      kind: 'service_activated',
    });
    expectRecorded(notification, mail, 'service_activated', 'service.activated');
    expect(JSON.stringify(notification)).not.toContain(password);
  });

  describe('ticket_reply', () => {
    it('should mail a public agent reply, and nothing for an internal comment or the subscriber’s own', async () => {
      const desk = await createTenantWithToken(t);
      const { id, email } = await customer(desk.token);
      const ticket = await createTicket(t, desk.token, {
        subject: 'No internet since this morning',
        subscriber_id: id,
      });
      const internal = `internal note ${randomBytes(6).toString('hex')}`;
      const own = `subscriber words ${randomBytes(6).toString('hex')}`;
      for (const body of [
        { body: internal, public: false, author: 'noc.jane' },
        { body: own, public: true, author_type: 'subscriber' },
        { body: 'A technician will visit between 14:00 and 16:00 today.', public: true, author: 'noc.jane' },
      ]) {
        expectSuccess(await postComment(t, desk.token, ticket.id, body), 201);
      }

      const mail = await mailTo(email, 'Re: [Ticket');
      expect(mail.parsed.subject).toBe(`Re: [Ticket #${ticket.number}] No internet since this morning`);
      expectAddressed(mail, email, `Tenant ${desk.slug}`);
      expect(mail.parsed.text).toContain(
        `There is a new reply to your ticket #${ticket.number} "No internet since this morning" from noc.jane, on`,
      );
      expect(mail.parsed.text).toContain('A technician will visit between 14:00 and 16:00 today.');

      // Each comment's event was written with its request, and only the public agent reply's queued a notification.
      const comments = await eventsOf(t, desk.token, ticket.id, 'ticket.comment_added');
      const replies = await listNotifications(t, desk.token, { kind: 'ticket_reply' });
      expect(replies).toHaveLength(1);
      const agentReply = comments.filter(
        (event) => event.data.object.author_type === 'agent' && event.data.object.public,
      );
      expect(comments).toHaveLength(3);
      expect(agentReply).toHaveLength(1);
      expect(replies[0].event_id).toBe(agentReply[0].id);
      expectRecorded(
        await settledNotification(t, desk.token, { kind: 'ticket_reply' }),
        mail,
        'ticket_reply',
        'ticket.comment_added',
      );
      expect(smtp.to(email)).toHaveLength(1);
      expect(mail.raw).not.toContain(internal);
      expect(mail.raw).not.toContain(own);
    });

    it('should record a reply on a ticket without a subscriber skipped no_subscriber', async () => {
      const desk = await createTenantWithToken(t);
      const ticket = await createTicket(t, desk.token, { subject: 'Fibre cut on Main Street' });
      expectSuccess(
        await postComment(t, desk.token, ticket.id, { body: 'Crew dispatched.', public: true }),
        201,
      );

      const skipped = await settledNotification(t, desk.token, { kind: 'ticket_reply' });
      expect(skipped).toMatchObject({
        status: 'skipped',
        reason: 'no_subscriber',
        subscriber_id: null,
        recipient: null,
        attempts: 0,
        attempt_log: [],
      });
    });
  });
});
