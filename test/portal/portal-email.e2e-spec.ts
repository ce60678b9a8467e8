import { Writable } from 'node:stream';
import request from 'supertest';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer, randomClientIp } from '../support/factories';
import {
  changeTenantSettings,
  getNotification,
  listNotifications,
  NOTIFICATION_ENV,
  settledNotification,
} from '../support/notification-factory';
import { SmtpReceiver } from '../support/smtp-receiver';
import { createSubscriber, listEvents, uniqueEmail } from '../support/subscriber-factory';
import { TestClock } from '../support/test-clock';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

/** Every log line the app writes, to look for codes in. */
class LogCapture extends Writable {
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.raw.push(chunk.toString('utf8'));
    done();
  }
}

const PORTAL_URL = 'https://portal.acme.example/';
const SCOPES = ['subscribers:*', 'events:read', 'notifications:*', 'billing:*'];

/** The code of a sign-in code mail: six digits alone on their line of the text part. */
function signInCodeOf(text: string | undefined): string {
  const code = /^(\d{6})$/m.exec(text ?? '')?.[1];
  if (!code) {
    throw new Error(`no sign-in code in ${text}`);
  }
  return code;
}

/** Another six digits than `code`. */
function wrong(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0');
}

describe('Portal by email: invites mailed and one-time sign-in codes (docs/portal.md)', () => {
  let smtp: SmtpReceiver;
  let t: TestApp;
  let op: TenantWithToken;
  const clock = new TestClock();
  const logs = new LogCapture();
  const secrets: string[] = [];

  function requestCode(body: object, ip = randomClientIp()) {
    return request(t.http).post('/api/v1/portal/sign-in-codes').set('X-Forwarded-For', ip).send(body);
  }

  function signIn(body: object, ip = randomClientIp()) {
    return request(t.http).post('/api/v1/portal/sessions').set('X-Forwarded-For', ip).send(body);
  }

  function invite(subscriberId: string, body?: object) {
    return request(t.http)
      .post(`/api/v1/subscribers/${subscriberId}/portal-invites`)
      .set(bearer(op.token))
      .send(body);
  }

  /** A subscriber with a fresh email, and a sign-in code mailed to it (the n-th mail to that address). */
  async function mailedCode(email: string, nth = 1): Promise<string> {
    expectSuccess(await requestCode({ tenant: op.slug, email }), 202);
    const mails = await smtp.waitFor(email, nth);
    const code = signInCodeOf(mails[nth - 1].parsed.text);
    secrets.push(code);
    return code;
  }

  beforeAll(async () => {
    smtp = await SmtpReceiver.start();
    t = await startTestApp(
      { ...smtp.env, ...NOTIFICATION_ENV, TRUST_PROXY: '1', LOG_LEVEL: 'info', PORTAL_URL },
      { clock, logDestination: logs },
    );
    op = await createTenantWithToken(t, SCOPES);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('should mail an invite with delivery email, answer without its code, and sign in once with the mailed code', async () => {
    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, op.token, { email, full_name: 'Ada Lovelace' });
    const made = await invite(subscriber.id, { delivery: 'email' });
    expectSuccess(made, 201);
    expect(Object.keys(made.body.data).sort()).toEqual(
      ['created_at', 'delivery', 'expires_at', 'id', 'subscriber_id'].sort(),
    );
    expect(made.body.data).toMatchObject({ subscriber_id: subscriber.id, delivery: 'email' });

    const [mail] = await smtp.waitFor(email);
    const code = /Your invite code: (ipi_[A-Za-z0-9_-]+)/.exec(mail.parsed.text ?? '')?.[1] as string;
    expect(code).toBeDefined();
    secrets.push(code);
    expect(mail.parsed.text).toContain(`${PORTAL_URL}?invite=${code}`);
    expect(mail.parsed.subject).not.toContain(code);

    const first = await signIn({ invite_code: code });
    expectSuccess(first, 201);
    expect(first.body.data).toMatchObject({ subscriber_id: subscriber.id, method: 'invite' });
    secrets.push(first.body.data.token);
    expectError(await signIn({ invite_code: code }), 401, 'invalid_invite', 'invite_code');

    const notification = await settledNotification(t, op.token, {
      kind: 'portal_invite',
      subscriber_id: subscriber.id,
    });
    expect(notification).toMatchObject({ status: 'sent', recipient: email, message_id: mail.messageId });
  });

  it('should keep delivery link the default, and refuse email for a subscriber without one, naming delivery', async () => {
    const bare = await createSubscriber(t, op.token);
    const linked = await invite(bare.id);
    expectSuccess(linked, 201);
    expect(linked.body.data).toMatchObject({
      delivery: 'link',
      url: expect.stringContaining('?invite=ipi_'),
    });
    secrets.push(linked.body.data.code);
    expectError(await invite(bare.id, { delivery: 'email' }), 422, 'validation_failed', 'delivery');
    expectError(await invite(bare.id, { delivery: 'sms' }), 422, 'validation_failed', 'delivery');
  });

  it('should sign in with tenant, email and a mailed six-digit code, once, as method code and a portal.signed_in event', async () => {
    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, op.token, { email });
    const asked = await requestCode({ tenant: op.slug, email: `  ${email.toUpperCase()} ` });
    expectSuccess(asked, 202);
    expect(asked.body.data).toEqual({ email, expires_in_s: 600 });
    const [mail] = await smtp.waitFor(email);
    const code = signInCodeOf(mail.parsed.text);
    secrets.push(code);
    expect(mail.parsed.text).toContain('within 10 minutes');

    const session = await signIn({ tenant: op.slug, email: email.toUpperCase(), code });
    expectSuccess(session, 201);
    expect(session.body.data).toMatchObject({
      subscriber_id: subscriber.id,
      method: 'code',
      scope: 'portal',
    });
    secrets.push(session.body.data.token);
    const me = await request(t.http).get('/api/v1/portal/session').set(bearer(session.body.data.token));
    expectSuccess(me);
    expectError(await signIn({ tenant: op.slug, email, code }), 401, 'invalid_code', 'code');

    const signedIn = await listEvents(t, op.token, { type: 'portal.signed_in' });
    expect(signedIn.find((event) => event.data.object.id === session.body.data.id)?.data.object.method).toBe(
      'code',
    );
    const requested = await listEvents(t, op.token, { type: 'portal.sign_in_code_requested' });
    const object = requested.find((event) => event.subject_id === subscriber.id)?.data.object;
    expect(Object.keys(object ?? {}).sort()).toEqual(['created_at', 'expires_at', 'id', 'subscriber_id']);
  });

  it('should answer an unknown email, or an unknown tenant, exactly as a known one, and send nothing', async () => {
    const known = uniqueEmail();
    await createSubscriber(t, op.token, { email: known });
    const unknown = uniqueEmail();
    const before = (await listEvents(t, op.token, { type: 'portal.sign_in_code_requested' })).length;
    const forUnknown = await requestCode({ tenant: op.slug, email: unknown });
    const forNoTenant = await requestCode({ tenant: 'no-such-tenant-here', email: unknown });
    const forKnown = await requestCode({ tenant: op.slug, email: known });
    for (const res of [forUnknown, forNoTenant, forKnown]) {
      expectSuccess(res, 202);
      expect(Object.keys(res.body.data)).toEqual(['email', 'expires_in_s']);
      expect(res.body.data.expires_in_s).toBe(600);
    }
    expect(forUnknown.body.data.email).toBe(unknown);
    await smtp.waitFor(known);
    expect(smtp.attemptsFor(unknown)).toBe(0);
    expect((await listEvents(t, op.token, { type: 'portal.sign_in_code_requested' })).length).toBe(
      before + 1,
    );
  });

  it('should answer 429 with Retry-After past PORTAL_CODE_MAX_PER_EMAIL requests for one email, known or not', async () => {
    const unknown = uniqueEmail();
    for (let i = 0; i < 5; i += 1) {
      expectSuccess(await requestCode({ tenant: op.slug, email: unknown }), 202);
    }
    // Counted on the normalised string, from any address.
    const limited = await requestCode({ tenant: op.slug, email: unknown.toUpperCase() });
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expectSuccess(await requestCode({ tenant: op.slug, email: uniqueEmail() }), 202);
  });

  it('should kill a code after 5 wrong tries, and refuse an expired one (PORTAL_CODE_TTL_S)', async () => {
    const email = uniqueEmail();
    await createSubscriber(t, op.token, { email });
    const code = await mailedCode(email);
    for (let i = 0; i < 5; i += 1) {
      expectError(await signIn({ tenant: op.slug, email, code: wrong(code) }), 401, 'invalid_code', 'code');
    }
    expectError(await signIn({ tenant: op.slug, email, code }), 401, 'invalid_code', 'code');

    const late = await mailedCode(email, 2);
    clock.advance(601_000);
    try {
      expectError(await signIn({ tenant: op.slug, email, code: late }), 401, 'invalid_code', 'code');
    } finally {
      clock.set(new Date());
    }
  });

  it('should let a new request supersede the older code, and exactly one of two racing sign-ins win', async () => {
    const email = uniqueEmail();
    await createSubscriber(t, op.token, { email });
    const older = await mailedCode(email);
    const newer = await mailedCode(email, 2);
    expectError(await signIn({ tenant: op.slug, email, code: older }), 401, 'invalid_code', 'code');
    const answers = await Promise.all([
      signIn({ tenant: op.slug, email, code: newer }),
      signIn({ tenant: op.slug, email, code: newer }),
    ]);
    expect(answers.map((res) => res.status).sort()).toEqual([201, 401]);
    secrets.push(...answers.filter((res) => res.status === 201).map((res) => res.body.data.token as string));
  });

  it('should take exactly one way in: mixing is 422 and half of tenant+email+code is 400, naming the field', async () => {
    expectError(await signIn({ invite_code: 'ipi_x', code: '123456' }), 422, 'validation_failed', 'code');
    expectError(await signIn({ tenant: op.slug, email: 'a@example.com' }), 400, 'missing_field', 'code');
    expectError(await signIn({ email: 'a@example.com', code: '123456' }), 400, 'missing_field', 'tenant');
    expectError(await signIn({}), 400, 'missing_field', 'invite_code');
    expectError(
      await requestCode({ tenant: op.slug, email: 'not-an-email' }),
      422,
      'validation_failed',
      'email',
    );
    expectError(
      await requestCode({ tenant: 'Bad Slug', email: 'a@example.com' }),
      422,
      'validation_failed',
      'tenant',
    );
  });

  it('should refuse the code or link in a template subject, and preview with a placeholder that mints nothing', async () => {
    const put = (subject: string) =>
      request(t.http)
        .put('/api/v1/notification-templates/portal_sign_in_code')
        .set(bearer(op.token))
        .send({ subject, text: '{{portal.code}}', html: '<p>{{portal.code}}</p>' });
    expectError(await put('Your code {{portal.code}}'), 422, 'validation_failed', 'subject');
    expectError(await put('{{#portal}}{{link}}{{/portal}}'), 422, 'validation_failed', 'subject');

    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, op.token, { email });
    const code = await mailedCode(email);
    const preview = await request(t.http)
      .post('/api/v1/notification-templates/portal_sign_in_code/preview')
      .set(bearer(op.token))
      .send({ record_id: subscriber.id });
    expectSuccess(preview);
    expect(preview.body.data.text).toContain('[one-time code, minted when sent]');
    expect(JSON.stringify(preview.body.data)).not.toContain(code);
    // The preview minted nothing: the mailed code still signs in.
    const session = await signIn({ tenant: op.slug, email, code });
    expectSuccess(session, 201);
    secrets.push(session.body.data.token);
  });

  it('should refuse delivery email once the tenant switched portal_invite off, and not let a subscriber decline it', async () => {
    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, op.token, { email });
    expectError(
      await request(t.http)
        .patch(`/api/v1/subscribers/${subscriber.id}/notification-preferences`)
        .set(bearer(op.token))
        .send({ portal_sign_in_code: false }),
      422,
      'validation_failed',
      'portal_sign_in_code',
    );
    await changeTenantSettings(t, op.token, { notifications: { portal_invite: false } });
    try {
      expectError(await invite(subscriber.id, { delivery: 'email' }), 422, 'validation_failed', 'delivery');
    } finally {
      await changeTenantSettings(t, op.token, { notifications: { portal_invite: true } });
    }
  });

  it('should never hold a code in an answer, the notifications, their stored subject, an event or a log line', async () => {
    expect(secrets.length).toBeGreaterThan(8);
    const notifications = await listNotifications(t, op.token, {});
    const portalMail = notifications.filter((each) => each.kind.startsWith('portal_'));
    expect(portalMail.length).toBeGreaterThan(5);
    const one = await getNotification(t, op.token, portalMail[0].id);
    const events = [
      ...(await listEvents(t, op.token, { type: 'portal.sign_in_code_requested' })),
      ...(await listEvents(t, op.token, { type: 'portal.invite_created' })),
      ...(await listEvents(t, op.token, { type: 'notification.sent' })),
      ...(await listEvents(t, op.token, { type: 'portal.signed_in' })),
    ];
    const stored = [
      ...(await t.dataSource.query('SELECT subject, reason FROM notifications')),
      ...(await t.dataSource.query('SELECT response FROM notification_attempts')),
      ...(await t.dataSource.query('SELECT * FROM portal_sign_in_codes')),
      ...(await t.dataSource.query('SELECT * FROM portal_invites')),
      ...(await t.dataSource.query('SELECT data FROM events')),
    ];
    const everything = JSON.stringify([notifications, one, events, stored]) + logs.raw.join('');
    expect(logs.raw.join('')).toContain('"msg":"request"');
    for (const secret of secrets) {
      // A six-digit code can occur by chance in an id or a hash: look for it as a word of its own.
      const pattern = new RegExp(`(^|[^A-Za-z0-9_-])${secret.replace(/[+]/g, '\\+')}($|[^A-Za-z0-9_-])`);
      expect([secret, pattern.test(everything)]).toEqual([secret, false]);
    }
  });
});

describe('Portal by email: a wrong code is a failed authentication', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1', ABUSE_AUTH_FAILURES_MAX: '3' });
  });
  afterAll(() => t.close());

  it('should block an address after ABUSE_AUTH_FAILURES_MAX wrong codes', async () => {
    const ip = randomClientIp();
    const attempt = () =>
      request(t.http)
        .post('/api/v1/portal/sessions')
        .set('X-Forwarded-For', ip)
        .send({ tenant: 'no-such-tenant-here', email: 'a@example.com', code: '123456' });
    for (let i = 0; i < 3; i += 1) {
      expectError(await attempt(), 401, 'invalid_code', 'code');
    }
    expectError(await attempt(), 429, 'abuse_blocked');
  });
});
