import { randomBytes } from 'node:crypto';
import net from 'node:net';
import request from 'supertest';
import { fakeConnectDns } from '../support/fake-dns';
import { createInvoice, createPayment } from '../support/billing-factory';
import { expectError, expectNotFound, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  allEvents,
  changeTenantSettings,
  eventsAbout,
  getNotification,
  getNotificationRequest,
  INSTANCE_FROM,
  listNotifications,
  listNotificationsRequest,
  mailboxes,
  NOTIFICATION_ENV,
  type NotificationBody,
  settledNotification,
} from '../support/notification-factory';
import { SmtpReceiver } from '../support/smtp-receiver';
import { createSubscriber, uniqueEmail } from '../support/subscriber-factory';
import { createTenantWithToken, type TestApp, startTestApp } from '../support/test-app';
import { letTimePass, waitUntil } from '../support/wait-for';
import { fakeRegistrationDns } from '../support/webhook-receiver';

/** An active subscriber with a fresh email, and that email. */
async function customer(t: TestApp, token: string) {
  const email = uniqueEmail();
  const subscriber = await createSubscriber(t, token, { email, full_name: 'Ada Lovelace', status: 'active' });
  return { id: subscriber.id, email };
}

/** The subscriber's notification of `kind`, once it left the queue. */
function settled(t: TestApp, token: string, subscriberId: string, kind: string): Promise<NotificationBody> {
  return settledNotification(t, token, { subscriber_id: subscriberId, kind });
}

/** Issue 31: what becomes of a notification: skipped with a reason, sent (at once or after retries), failed. */
describe('Notifications: delivery', () => {
  describe('with no mail server at all', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ ...NOTIFICATION_ENV, SMTP_URL: '', MAIL_FROM: '' });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('should record a notification skipped no_mail_server when neither SMTP_URL nor the tenant names a server', async () => {
      const tenant = await createTenantWithToken(t);
      const { id } = await customer(t, tenant.token);
      await createInvoice(t, tenant.token, id, 1000);
      expect(await settled(t, tenant.token, id, 'invoice_issued')).toMatchObject({
        status: 'skipped',
        reason: 'no_mail_server',
        subscriber_id: id,
        attempts: 0,
        attempt_log: [],
        message_id: null,
        sent_at: null,
      });
    });
  });

  describe("with the instance's mail server", () => {
    const LOGIN = { user: 'acme-mailer', password: `smtp-${randomBytes(9).toString('hex')}` };
    let smtp: SmtpReceiver;
    /** The tenants' own mail server, which requires LOGIN. */
    let own: SmtpReceiver;
    let t: TestApp;

    beforeAll(async () => {
      smtp = await SmtpReceiver.start();
      own = await SmtpReceiver.start(LOGIN);
      t = await startTestApp({
        ...smtp.env,
        ...NOTIFICATION_ENV,
        MAIL_ALLOW_PRIVATE: 'true',
        NOTIFICATION_RETRY_DELAYS_S: '0.2,0.2',
      });
    });
    afterAll(async () => {
      await t?.close();
      await smtp?.close();
      await own?.close();
    });

    /** The tenant's own server: `own`, with its login, a From and a Reply-To of its own. */
    const ownMail = () => ({
      host: '127.0.0.1',
      port: own.port,
      tls: 'none',
      user: LOGIN.user,
      password: LOGIN.password,
      from: 'Acme Fiber <billing@acme-fiber.example>',
      reply_to: 'support@acme-fiber.example',
    });

    /** The notification events about one notification, oldest first. */
    const notificationEvents = (token: string, id: string) =>
      Promise.all([
        eventsAbout(t, token, id, 'notification.sent'),
        eventsAbout(t, token, id, 'notification.failed'),
      ]);

    it('should record a kind the tenant switched off skipped kind_disabled_by_tenant, and still send the others', async () => {
      const tenant = await createTenantWithToken(t);
      await changeTenantSettings(t, tenant.token, { notifications: { payment_received: false } });
      const { id, email } = await customer(t, tenant.token);
      await createPayment(t, tenant.token, id, 2500, { auto_apply: false });
      await createInvoice(t, tenant.token, id, 1000);

      const [witness] = await smtp.waitFor(email);
      expect(witness.parsed.subject).toMatch(/^Invoice /);
      expect(await settled(t, tenant.token, id, 'payment_received')).toMatchObject({
        status: 'skipped',
        reason: 'kind_disabled_by_tenant',
        attempts: 0,
        attempt_log: [],
      });
      expect(smtp.attemptsFor(email)).toBe(1);
    });

    it("should send through the tenant's own mail server, with its login, From and Reply-To, and back through the instance's once it is removed", async () => {
      const tenant = await createTenantWithToken(t);
      await changeTenantSettings(t, tenant.token, { mail: ownMail() });
      const { id, email } = await customer(t, tenant.token);
      await createInvoice(t, tenant.token, id, 1000);

      const [mail] = await own.waitFor(email);
      expect(mailboxes(mail.parsed.from)).toEqual([
        { name: 'Acme Fiber', address: 'billing@acme-fiber.example' },
      ]);
      expect(mailboxes(mail.parsed.replyTo)).toEqual([{ name: '', address: 'support@acme-fiber.example' }]);
      expect(mail.messageId).toMatch(/^<ntf_[0-9A-Z]{26}@acme-fiber\.example>$/);
      expect(own.logins).toContainEqual({ username: LOGIN.user, password: LOGIN.password, granted: true });
      expect(own.logins.filter((login) => !login.granted)).toEqual([]);
      expect(smtp.attemptsFor(email)).toBe(0);
      expect(await settled(t, tenant.token, id, 'invoice_issued')).toMatchObject({
        status: 'sent',
        message_id: mail.messageId,
      });

      await changeTenantSettings(t, tenant.token, { mail: null });
      await createPayment(t, tenant.token, id, 1000);
      const [back] = await smtp.waitFor(email);
      expect(back.parsed.subject).toMatch(/^Payment received/);
      expect(mailboxes(back.parsed.from)).toEqual([INSTANCE_FROM]);
      expect(back.parsed.replyTo).toBeUndefined();
      expect(own.to(email)).toHaveLength(1);
    });

    it('should try a message the server answered 451 again, and record it sent on the second attempt with notification.sent', async () => {
      const tenant = await createTenantWithToken(t);
      const { id, email } = await customer(t, tenant.token);
      smtp.answer = (to, attempt) =>
        to.includes(email) && attempt === 1 ? { code: 451, text: '4.3.0 Try again later' } : 'accept';
      await createInvoice(t, tenant.token, id, 1000);

      const [mail] = await smtp.waitFor(email);
      const sent = await settled(t, tenant.token, id, 'invoice_issued');
      expect(sent).toMatchObject({ status: 'sent', attempts: 2, reason: null, message_id: mail.messageId });
      expect(sent.attempt_log).toEqual([
        expect.objectContaining({ attempt: 1, outcome: 'temporary', smtp_code: 451 }),
        expect.objectContaining({ attempt: 2, outcome: 'sent', smtp_code: 250, next_attempt_at: null }),
      ]);
      expect(sent.attempt_log[0].response).toContain('451 4.3.0 Try again later');
      expect(sent.attempt_log[0].next_attempt_at).not.toBeNull();
      expect(smtp.attemptsFor(email)).toBe(2);

      const [sentEvents, failedEvents] = await notificationEvents(tenant.token, sent.id);
      expect(failedEvents).toEqual([]);
      expect(sentEvents).toHaveLength(1);
      expect(sentEvents[0].data.object).toMatchObject({
        id: sent.id,
        status: 'sent',
        attempts: 2,
        message_id: mail.messageId,
      });
    });

    it("should fail a message the server answered 550 at once, with the server's answer, no retry and notification.failed", async () => {
      const tenant = await createTenantWithToken(t);
      const { id, email } = await customer(t, tenant.token);
      smtp.answer = (to) => (to.includes(email) ? { code: 550, text: '5.1.1 No such user here' } : 'accept');
      await createInvoice(t, tenant.token, id, 1000);

      const failed = await settled(t, tenant.token, id, 'invoice_issued');
      expect(failed).toMatchObject({ status: 'failed', attempts: 1, sent_at: null, next_attempt_at: null });
      expect(failed.reason).toContain('550 5.1.1 No such user here');
      expect(failed.attempt_log).toEqual([
        expect.objectContaining({ attempt: 1, outcome: 'permanent', smtp_code: 550, next_attempt_at: null }),
      ]);
      const [sentEvents, failedEvents] = await notificationEvents(tenant.token, failed.id);
      expect(sentEvents).toEqual([]);
      expect(failedEvents).toHaveLength(1);
      expect(failedEvents[0].data.object).toMatchObject({
        id: failed.id,
        status: 'failed',
        reason: failed.reason,
      });

      // Well past the retry delays (0.2 s), the server was never asked again.
      await letTimePass(1000);
      expect(smtp.attemptsFor(email)).toBe(1);
      expect((await getNotification(t, tenant.token, failed.id)).attempts).toBe(1);
    });

    it('should fail a message once every retry met a 451, after 1 + NOTIFICATION_RETRY_DELAYS_S attempts', async () => {
      const tenant = await createTenantWithToken(t);
      const { id, email } = await customer(t, tenant.token);
      smtp.answer = (to) => (to.includes(email) ? { code: 451, text: '4.7.1 Greylisted' } : 'accept');
      await createInvoice(t, tenant.token, id, 1000);

      const failed = await settled(t, tenant.token, id, 'invoice_issued');
      expect(failed).toMatchObject({ status: 'failed', attempts: 3, next_attempt_at: null });
      expect(failed.reason).toMatch(/^every retry failed; the last: 451 4\.7\.1 Greylisted/);
      expect(failed.attempt_log.map((each) => [each.attempt, each.outcome, each.smtp_code])).toEqual([
        [1, 'temporary', 451],
        [2, 'temporary', 451],
        [3, 'temporary', 451],
      ]);
      expect(failed.attempt_log.map((each) => each.next_attempt_at !== null)).toEqual([true, true, false]);
      expect(smtp.attemptsFor(email)).toBe(3);
      const [, failedEvents] = await notificationEvents(tenant.token, failed.id);
      expect(failedEvents.map((event) => event.data.object.id)).toEqual([failed.id]);
    });

    it('should list notifications filtered by kind, status and subscriber, and answer one by id, 404 for an unknown or another tenant’s', async () => {
      const tenant = await createTenantWithToken(t);
      const a = await customer(t, tenant.token);
      const b = await createSubscriber(t, tenant.token, { status: 'active' });
      await createInvoice(t, tenant.token, a.id, 1000);
      await createPayment(t, tenant.token, a.id, 500, { auto_apply: false });
      await createInvoice(t, tenant.token, b.id, 1000);
      const all = await waitUntil(
        () => listNotifications(t, tenant.token),
        (rows) => rows.length === 3 && rows.every((row) => row.status !== 'queued'),
        { what: 'three settled notifications' },
      );
      const find = (subscriberId: string, kind: string) =>
        all.find((row) => row.subscriber_id === subscriberId && row.kind === kind)!.id;
      const aInvoice = find(a.id, 'invoice_issued');
      const aPayment = find(a.id, 'payment_received');
      const bInvoice = find(b.id, 'invoice_issued');
      expect(all.find((row) => row.id === bInvoice)).toMatchObject({ status: 'skipped', reason: 'no_email' });

      const ids = async (query: Record<string, string>) =>
        (await listNotifications(t, tenant.token, query)).map((row) => row.id).sort();
      expect(await ids({ kind: 'invoice_issued' })).toEqual([aInvoice, bInvoice].sort());
      expect(await ids({ kind: 'payment_received' })).toEqual([aPayment]);
      expect(await ids({ kind: 'ticket_reply' })).toEqual([]);
      expect(await ids({ status: 'sent' })).toEqual([aInvoice, aPayment].sort());
      expect(await ids({ status: 'skipped' })).toEqual([bInvoice]);
      expect(await ids({ subscriber_id: a.id })).toEqual([aInvoice, aPayment].sort());
      expect(await ids({ subscriber_id: b.id })).toEqual([bInvoice]);
      expect(await ids({ kind: 'invoice_issued', status: 'sent', subscriber_id: a.id })).toEqual([aInvoice]);
      expectError(
        await listNotificationsRequest(t, tenant.token, { kind: 'fax' }),
        400,
        'invalid_query',
        'kind',
      );
      expectError(
        await listNotificationsRequest(t, tenant.token, { status: 'lost' }),
        400,
        'invalid_query',
        'status',
      );

      for (const row of all) {
        expect(await getNotification(t, tenant.token, row.id)).toEqual(row);
      }
      expectNotFound(await getNotificationRequest(t, tenant.token, 'ntf_01JD3Z6W3R4T5Y6U7I8O9P0QAB'));
      const stranger = await createTenantWithToken(t);
      expectNotFound(await getNotificationRequest(t, stranger.token, aInvoice));
      expect(await listNotifications(t, stranger.token, { subscriber_id: a.id })).toEqual([]);
    });

    it('should never show the SMTP password of the tenant settings in a notification or an event, even when the server echoes it', async () => {
      const tenant = await createTenantWithToken(t);
      await changeTenantSettings(t, tenant.token, { mail: ownMail() });
      const sent = await customer(t, tenant.token);
      const refused = await customer(t, tenant.token);
      own.answer = (to) =>
        to.includes(refused.email)
          ? { code: 550, text: `5.7.1 Relay denied for ${LOGIN.password}` }
          : 'accept';
      await createInvoice(t, tenant.token, sent.id, 1000);
      await createInvoice(t, tenant.token, refused.id, 1000);
      await own.waitFor(sent.email);
      const failed = await settled(t, tenant.token, refused.id, 'invoice_issued');
      expect(failed).toMatchObject({ status: 'failed' });
      expect(failed.reason).toContain('5.7.1 Relay denied for');
      expect(await settled(t, tenant.token, sent.id, 'invoice_issued')).toMatchObject({ status: 'sent' });

      const secrets = [
        LOGIN.password,
        Buffer.from(LOGIN.password).toString('base64'),
        Buffer.from(`\u0000${LOGIN.user}\u0000${LOGIN.password}`).toString('base64'),
      ];
      const answers: string[] = [(await listNotificationsRequest(t, tenant.token)).text];
      for (const row of await listNotifications(t, tenant.token)) {
        answers.push((await getNotificationRequest(t, tenant.token, row.id)).text);
      }
      const events = await allEvents(t, tenant.token);
      expect(events.map((event) => event.type)).toEqual(
        expect.arrayContaining(['notification.sent', 'notification.failed', 'tenant_settings.updated']),
      );
      answers.push(JSON.stringify(events));
      const settings = await request(t.http).get('/api/v1/tenant/settings').set(bearer(tenant.token));
      expectSuccess(settings);
      answers.push(settings.text);
      for (const secret of secrets) {
        expect(answers.filter((answer) => answer.includes(secret))).toEqual([]);
      }
    });
  });

  describe("with a tenant's own mail server that must be public (no MAIL_ALLOW_PRIVATE)", () => {
    const PUBLIC_ADDRESS = '93.184.216.34';
    const HOST = 'mail.rebind.example';
    let smtp: SmtpReceiver;
    /** Where the tenant's name is re-pointed: a real server on 127.0.0.1 that would take the message. */
    let own: SmtpReceiver;
    let t: TestApp;

    beforeAll(async () => {
      smtp = await SmtpReceiver.start();
      own = await SmtpReceiver.start();
      t = await startTestApp({ ...smtp.env, ...NOTIFICATION_ENV, NOTIFICATION_RETRY_DELAYS_S: '0.2,0.2' });
    });
    afterEach(() => {
      jest.restoreAllMocks();
    });
    afterAll(async () => {
      await t?.close();
      await smtp?.close();
      await own?.close();
    });

    it('should not connect to a name re-pointed at 127.0.0.1 after the settings accepted it (DNS rebinding), and fail it after its retries', async () => {
      const tenant = await createTenantWithToken(t);
      const registration = fakeRegistrationDns({ [HOST]: [PUBLIC_ADDRESS] });
      await changeTenantSettings(t, tenant.token, {
        mail: { host: HOST, port: own.port, tls: 'none', from: 'Rebind <billing@rebind.example>' },
      });
      expect(registration).toHaveBeenCalledWith(HOST, expect.objectContaining({ all: true }));
      registration.mockRestore();

      const connectLookup = fakeConnectDns({ [HOST]: ['127.0.0.1'] });
      const connects = jest.spyOn(net, 'connect');
      const { id, email } = await customer(t, tenant.token);
      await createInvoice(t, tenant.token, id, 1000);

      const failed = await settled(t, tenant.token, id, 'invoice_issued');
      expect(failed).toMatchObject({
        status: 'failed',
        attempts: 3,
        sent_at: null,
        message_id: expect.stringMatching(/@rebind\.example>$/),
        next_attempt_at: null,
      });
      expect(failed.reason).toMatch(/^every retry failed; the last: /);
      expect(failed.attempt_log.map((each) => [each.attempt, each.outcome, each.smtp_code])).toEqual([
        [1, 'temporary', null],
        [2, 'temporary', null],
        [3, 'temporary', null],
      ]);
      expect(failed.attempt_log.map((each) => each.next_attempt_at !== null)).toEqual([true, true, false]);
      for (const attempt of failed.attempt_log) {
        expect(attempt.response).toContain(`${HOST} resolves to 127.0.0.1`);
        expect(attempt.response).toMatch(/private/);
      }
      const [failedEvent] = await eventsAbout(t, tenant.token, failed.id, 'notification.failed');
      expect(failedEvent.data.object).toMatchObject({
        id: failed.id,
        status: 'failed',
        reason: failed.reason,
      });

      // Each attempt resolved the name as it connected, and went nowhere: no TCP connection to the port, no DATA.
      expect(connectLookup).toHaveBeenCalledWith(
        HOST,
        expect.objectContaining({ all: true }),
        expect.any(Function),
      );
      expect(connectLookup.mock.calls.filter(([host]) => host === HOST)).toHaveLength(3);
      expect(own.attempts).toEqual([]);
      expect(own.received).toEqual([]);
      // Nor did it fall back to the instance's server.
      expect(smtp.attemptsFor(email)).toBe(0);

      // A witness: another tenant's message goes out through the instance's server, and the spy saw that connection.
      const other = await createTenantWithToken(t);
      const witness = await customer(t, other.token);
      await createInvoice(t, other.token, witness.id, 1000);
      await smtp.waitFor(witness.email);
      // net.connect(options) or net.connect(port, host): the port either way.
      const ports = connects.mock.calls.map((args: unknown[]) => {
        const [first] = args;
        return Number(
          typeof first === 'object' && first !== null ? (first as { port?: unknown }).port : first,
        );
      });
      expect(ports).toContain(smtp.port);
      expect(ports).not.toContain(own.port);
      expect(own.attempts).toEqual([]);
    });
  });

  describe('with a send rate of 2 per tenant and minute', () => {
    let smtp: SmtpReceiver;
    let t: TestApp;

    beforeAll(async () => {
      smtp = await SmtpReceiver.start();
      t = await startTestApp({ ...smtp.env, ...NOTIFICATION_ENV, NOTIFICATION_RATE_PER_MINUTE: '2' });
    });
    afterAll(async () => {
      await t?.close();
      await smtp?.close();
    });

    /** Once two of the subscriber's three notifications are sent, that the third is held about a minute, unattempted. */
    async function twoSentOneHeld(token: string, subscriberId: string): Promise<void> {
      // Compact rows, so that a timeout shows all three.
      const rows = await waitUntil(
        async () =>
          (await listNotifications(t, token, { subscriber_id: subscriberId })).map((row) => ({
            status: row.status,
            attempts: row.attempts,
            tries: row.attempt_log.length,
            sent_at: row.sent_at,
            reason: row.reason,
            next_attempt_at: row.next_attempt_at,
          })),
        (found) =>
          found.length === 3 &&
          found.filter((row) => row.status === 'sent').length === 2 &&
          found.some(
            (row) =>
              row.status === 'queued' &&
              row.next_attempt_at !== null &&
              Date.parse(row.next_attempt_at) > Date.now() + 30_000,
          ),
        { what: 'two sent and the third postponed by about a minute' },
      );
      const held = rows.filter((row) => row.status === 'queued');
      expect(held).toHaveLength(1);
      expect(held[0]).toMatchObject({ attempts: 0, tries: 0, sent_at: null, reason: null });
    }

    it("should send a tenant's first two messages of the minute and hold the third in the queue, while another tenant's go out", async () => {
      const tenant = await createTenantWithToken(t);
      const { id, email } = await customer(t, tenant.token);
      await createInvoice(t, tenant.token, id, 1000);
      await smtp.waitFor(email, 1);
      await createInvoice(t, tenant.token, id, 2000);
      await smtp.waitFor(email, 2);
      await createInvoice(t, tenant.token, id, 3000);
      await twoSentOneHeld(tenant.token, id);

      // Another tenant's rate is its own: its message goes out while the first tenant's third waits.
      const other = await createTenantWithToken(t);
      const witness = await customer(t, other.token);
      await createInvoice(t, other.token, witness.id, 1000);
      await smtp.waitFor(witness.email);
      await letTimePass(500);
      expect(smtp.attemptsFor(email)).toBe(2);
      expect(await listNotifications(t, tenant.token, { subscriber_id: id, status: 'queued' })).toHaveLength(
        1,
      );
    });

    it('should hold the third as well when the three are taken up in one pass (the worker was busy with a slow server)', async () => {
      const tenant = await createTenantWithToken(t);
      const { id, email } = await customer(t, tenant.token);
      // A message of another tenant whose server takes its time: the worker's pass waits for it.
      const slow = await createTenantWithToken(t);
      const held = await customer(t, slow.token);
      const server = smtp.hold();
      await createInvoice(t, slow.token, held.id, 1000);
      await waitUntil(
        () => smtp.attemptsFor(held.email),
        (count) => count === 1,
        { what: 'the slow message at the server' },
      );
      // Meanwhile three notifications of the tenant are queued: the next pass claims them together.
      for (const total of [1000, 2000, 3000]) {
        await createInvoice(t, tenant.token, id, total);
      }
      server.release();
      await smtp.waitFor(held.email);
      await twoSentOneHeld(tenant.token, id);
      expect(smtp.attemptsFor(email)).toBe(2);
    });
  });
});
