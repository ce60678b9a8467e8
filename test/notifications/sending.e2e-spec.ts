import request from 'supertest';
import { expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import { createInvoice } from '../support/billing-factory';
import { SmtpReceiver } from '../support/smtp-receiver';
import { createSubscriber, uniqueEmail } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait-for';

const SCOPES = ['subscribers:*', 'billing:*', 'notifications:read', 'events:read'];

interface NotificationBody {
  id: string;
  kind: string;
  status: string;
  reason: string | null;
  recipient: string | null;
  message_id: string | null;
  attempts: number;
  attempt_log: { attempt: number; outcome: string; smtp_code: number | null; response: string | null }[];
}

async function notificationsOf(t: TestApp, token: string, subscriberId: string): Promise<NotificationBody[]> {
  const res = await request(t.http)
    .get(`/api/v1/notifications?subscriber_id=${subscriberId}`)
    .set(bearer(token));
  expectList(res);
  return res.body.data as NotificationBody[];
}

/** Waits until the subscriber's notification of `kind` leaves `queued`. */
function settled(t: TestApp, token: string, subscriberId: string, kind: string): Promise<NotificationBody> {
  return waitUntil(
    async () => (await notificationsOf(t, token, subscriberId)).find((each) => each.kind === kind),
    (found) => found !== undefined && found.status !== 'queued',
    { what: `a settled ${kind} notification of ${subscriberId}` },
  ) as Promise<NotificationBody>;
}

describe('Notifications: sending', () => {
  let smtp: SmtpReceiver;
  let t: TestApp;
  let tenant: TenantWithToken;

  beforeAll(async () => {
    smtp = await SmtpReceiver.start();
    t = await startTestApp({ ...smtp.env, NOTIFICATION_POLL_MS: '50' });
    tenant = await createTenantWithToken(t, SCOPES);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('should mail an issued invoice with its PDF attached, and record it sent', async () => {
    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, tenant.token, { email, full_name: 'Ada Lovelace' });
    const invoice = await createInvoice(t, tenant.token, subscriber.id, 4999);

    const [mail] = await smtp.waitFor(email);
    expect(mail.parsed.subject).toContain(String(invoice.number));
    expect(mail.parsed.text).toContain('49.99');
    const [pdf] = mail.parsed.attachments;
    expect(pdf.contentType).toBe('application/pdf');
    expect(pdf.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');

    const notification = await settled(t, tenant.token, subscriber.id, 'invoice_issued');
    expect(notification).toMatchObject({ status: 'sent', recipient: email, attempts: 1, reason: null });
    expect(notification.message_id).toBe(mail.messageId);
    expect(notification.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'sent', smtp_code: 250 }),
    ]);
  });

  it('should record a notification skipped, with the reason, when the subscriber has no email', async () => {
    const subscriber = await createSubscriber(t, tenant.token);
    await createInvoice(t, tenant.token, subscriber.id, 1000);
    const notification = await settled(t, tenant.token, subscriber.id, 'invoice_issued');
    expect(notification).toMatchObject({ status: 'skipped', reason: 'no_email', attempts: 0 });
  });
});
