import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { createInvoice } from '../support/billing-factory';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  eventsAbout,
  headerNames,
  htmlOf,
  mailboxes,
  NOTIFICATION_ENV,
  rawHeaders,
  settledNotification,
} from '../support/notification-factory';
import { type ReceivedMail, SmtpReceiver } from '../support/smtp-receiver';
import {
  createSubscriber,
  getSubscriber,
  postSubscriber,
  subscriberBody,
  uniqueEmail,
} from '../support/subscriber-factory';
import { createTicket, postComment } from '../support/ticket-factory';
import { createTenantWithToken, type TenantWithToken, type TestApp, startTestApp } from '../support/test-app';

const INJECTED = 'stolen@evil.example';

/** The message carries no header but the ones it is built with, and goes to `email` alone: nothing was injected. */
function expectNoInjectedHeader(mail: ReceivedMail, email: string): void {
  expect(mail.envelopeTo).toEqual([email]);
  expect(headerNames(mail)).not.toContain('bcc');
  expect(headerNames(mail)).not.toContain('cc');
  // The injected text may only be found inside the To or the Subject it was put in, as their text.
  const carriers = rawHeaders(mail.raw)
    .filter((line) => line.toLowerCase().includes(INJECTED))
    .map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
  expect(carriers.filter((name) => name !== 'to' && name !== 'subject')).toEqual([]);
  expect(mail.parsed.bcc).toBeUndefined();
  expect(mail.parsed.cc).toBeUndefined();
  expect(mailboxes(mail.parsed.to).map((box) => box.address)).toEqual([email]);
}

/** Issue 31: what subscribers and operators type goes into mail as text, never as markup or as a header. */
describe('Notifications: hostile values', () => {
  let smtp: SmtpReceiver;
  let t: TestApp;
  let tenant: TenantWithToken;

  beforeAll(async () => {
    smtp = await SmtpReceiver.start();
    t = await startTestApp({ ...smtp.env, ...NOTIFICATION_ENV });
    tenant = await createTenantWithToken(t);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('should escape a subscriber name that is markup in the HTML part, and never write the tag', async () => {
    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, tenant.token, {
      email,
      full_name: '<script>alert(1)</script>',
    });
    await createInvoice(t, tenant.token, subscriber.id, 1000);

    const [mail] = await smtp.waitFor(email);
    const html = htmlOf(mail);
    expect(html).toContain('<p>Dear &lt;script&gt;alert(1)&lt;&#x2F;script&gt;,</p>');
    expect(html.toLowerCase()).not.toContain('<script');
    // The text part is text: the name as it is.
    expect(mail.parsed.text).toContain('Dear <script>alert(1)</script>,');
    expect(mailboxes(mail.parsed.to)).toEqual([{ name: '<script>alert(1)</script>', address: email }]);
  });

  it('should escape markup in a public ticket reply in the HTML part', async () => {
    const desk = await createTenantWithToken(t);
    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, desk.token, { email });
    const ticket = await createTicket(t, desk.token, { subscriber_id: subscriber.id });
    const body = 'Click <a href="https://evil.example">here</a> <img src=x onerror=alert(1)>';
    expectSuccess(await postComment(t, desk.token, ticket.id, { body, public: true }), 201);

    const [mail] = await smtp.waitFor(email);
    const html = htmlOf(mail).toLowerCase();
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<a href');
    expect(html).toContain('&lt;img src&#x3d;x onerror&#x3d;alert(1)&gt;');
    expect(mail.parsed.text).toContain(body);
  });

  it('should write a full_name with CR/LF as one line of the To header, adding no header', async () => {
    const email = uniqueEmail();
    const fullName = `Eve\r\nBcc: ${INJECTED}\r\nX-Injected: yes`;
    const created = await createSubscriber(t, tenant.token, { email, full_name: fullName });
    expect((await getSubscriber(t, tenant.token, created.id)).full_name).toBe(fullName);
    await createInvoice(t, tenant.token, created.id, 1000);

    const [mail] = await smtp.waitFor(email);
    expectNoInjectedHeader(mail, email);
    expect(headerNames(mail)).not.toContain('x-injected');
    expect(mailboxes(mail.parsed.to)).toEqual([
      { name: `Eve Bcc: ${INJECTED} X-Injected: yes`, address: email },
    ]);
    expect(smtp.attemptsFor(INJECTED)).toBe(0);
  });

  it('should write a ticket subject with CR/LF as one line of the Subject header, adding no header', async () => {
    const desk = await createTenantWithToken(t);
    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, desk.token, { email });
    const subject = `Outage\r\nBcc: ${INJECTED}`;
    const ticket = await createTicket(t, desk.token, { subject, subscriber_id: subscriber.id });
    expectSuccess(await postComment(t, desk.token, ticket.id, { body: 'On it.', public: true }), 201);

    const [mail] = await smtp.waitFor(email);
    expectNoInjectedHeader(mail, email);
    expect(mail.parsed.subject).toBe(`Re: [Ticket #${ticket.number}] Outage Bcc: ${INJECTED}`);
    expect(smtp.attemptsFor(INJECTED)).toBe(0);
  });

  it('should refuse an email with a line break at subscriber create and update, so no message can carry it', async () => {
    const injected = `ada.${randomBytes(4).toString('hex')}@example.net\r\nBcc: ${INJECTED}`;
    expectError(
      await postSubscriber(t, tenant.token, subscriberBody({ email: injected })),
      422,
      'validation_failed',
      'email',
    );
    const subscriber = await createSubscriber(t, tenant.token, { email: uniqueEmail() });
    for (const email of [injected, `ada\n@example.net`, `ada@exa\nmple.net`]) {
      const res = await request(t.http)
        .patch(`/api/v1/subscribers/${subscriber.id}`)
        .set(bearer(tenant.token))
        .send({ email });
      expectError(res, 422, 'validation_failed', 'email');
    }
  });

  it('should fail, refused and never offered to the server, a message to an address the mail module does not take', async () => {
    // A quoted local part: a valid address for the subscribers API, but not one plain mailbox for a header.
    const email = `"ada.${randomBytes(4).toString('hex')}"@example.net`;
    const subscriber = await createSubscriber(t, tenant.token, { email });
    await createInvoice(t, tenant.token, subscriber.id, 1000);

    const failed = await settledNotification(t, tenant.token, {
      subscriber_id: subscriber.id,
      kind: 'invoice_issued',
    });
    expect(failed).toMatchObject({ status: 'failed', recipient: email, attempts: 1, sent_at: null });
    expect(failed.reason).toMatch(/^refused \(to\): /);
    expect(failed.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'refused', smtp_code: null, next_attempt_at: null }),
    ]);
    expect(smtp.attemptsFor(email)).toBe(0);
    const failedEvents = await eventsAbout(t, tenant.token, failed.id, 'notification.failed');
    expect(failedEvents.map((event) => event.data.object.reason)).toEqual([failed.reason]);
  });
});
