import request from 'supertest';
import { createInvoice } from '../support/billing-factory';
import { bearer } from '../support/factories';
import { NOTIFICATION_ENV, settledNotification } from '../support/notification-factory';
import { SmtpReceiver } from '../support/smtp-receiver';
import { createSubscriber, uniqueEmail } from '../support/subscriber-factory';
import { createTenantWithToken, ensure, startTestApp, type TestApp } from '../support/test-app';

/**
 * Issue #32 item 5: a test tenant's notifications are recorded, and never sent through the instance's SMTP_URL; a
 * live tenant's, on the same instance, are.
 */
describe('Test clocks: notifications of a test tenant (e2e)', () => {
  let smtp: SmtpReceiver;
  let t: TestApp;

  beforeAll(async () => {
    smtp = await SmtpReceiver.start();
    t = await startTestApp({ ...smtp.env, ...NOTIFICATION_ENV, MAIL_ALLOW_PRIVATE: 'true' });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('should skip a test tenant mail without its own server, and send a live tenant mail through SMTP_URL', async () => {
    const owner = await createTenantWithToken(t);
    const res = await request(t.http)
      .post('/api/v1/test-clocks')
      .set(bearer(owner.token))
      .send({ name: 'Mail', frozen_time: '2031-01-01T00:00:00.000Z' });
    const { token } = ensure(res, 201, 'create test clock').body.data as { token: string };

    const testEmail = uniqueEmail();
    const testSubscriber = await createSubscriber(t, token, { email: testEmail, status: 'active' });
    await createInvoice(t, token, testSubscriber.id, 1000);
    const liveEmail = uniqueEmail();
    const liveSubscriber = await createSubscriber(t, owner.token, { email: liveEmail, status: 'active' });
    await createInvoice(t, owner.token, liveSubscriber.id, 1000);

    expect(
      await settledNotification(t, token, { subscriber_id: testSubscriber.id, kind: 'invoice_issued' }),
    ).toMatchObject({ status: 'skipped', reason: 'test_tenant_without_mail_server', attempts: 0 });
    expect(
      await settledNotification(t, owner.token, { subscriber_id: liveSubscriber.id, kind: 'invoice_issued' }),
    ).toMatchObject({ status: 'sent' });
    expect(await smtp.waitFor(liveEmail)).toHaveLength(1);
    expect(smtp.to(testEmail)).toHaveLength(0);
  });
});
