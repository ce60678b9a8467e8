import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { bearer } from '../support/factories';
import { NOTIFICATION_ENV } from '../support/notification-factory';
import { SmtpReceiver } from '../support/smtp-receiver';
import { createSubscriber, uniqueEmail } from '../support/subscriber-factory';
import {
  createTenantWithToken,
  ensure,
  startTestApp,
  type TenantWithToken,
  type TestApp,
} from '../support/test-app';
import {
  DESKTOP,
  freePort,
  launchChromium,
  PHONE,
  screenshot,
  seriousViolations,
  watchProblems,
} from './support/browser';

/** The line of a mail's text that is its six-digit code, or the portal link in it. */
const codeIn = (text: string | undefined) => /^(\d{6})$/m.exec(text ?? '')?.[1];
const linkIn = (text: string | undefined) => /^(http\S+\?invite=ipi_\S+)$/m.exec(text ?? '')?.[1];

/**
 * The portal's two ways in by email (docs/portal.md), in Debian's Chromium with a real SMTP server: an invite mailed
 * by the operator, whose link signs in; and the email form, which asks for a code, reads it from the mail as the
 * subscriber would, and signs in with it. A wrong code is refused on the page, in words, without signing in.
 */
describe('Portal sign-in by email in a browser (issue 34)', () => {
  let t: TestApp;
  let smtp: SmtpReceiver;
  let base: string;
  let op: TenantWithToken;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    smtp = await SmtpReceiver.start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ ...smtp.env, ...NOTIFICATION_ENV, PUBLIC_BASE_URL: base });
    await new Promise<void>((resolve) => t.http.listen(port, '127.0.0.1', resolve));
    op = await createTenantWithToken(t, ['admin']);
    browser = await launchChromium();
  });

  beforeEach(async () => {
    page = await (await browser.newContext({ viewport: DESKTOP })).newPage();
    problems = watchProblems(page);
  });

  afterEach(async () => {
    await page.context().close();
    expect(problems.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  async function signedIn(): Promise<void> {
    await page.getByRole('heading', { level: 1, name: 'Your balance' }).waitFor();
    expect(await page.evaluate<string>('sessionStorage.getItem("portal.token")')).toMatch(/^ipt_/);
  }

  it('should sign in from the link of an invite the operator had mailed', async () => {
    const email = uniqueEmail();
    const subscriber = await createSubscriber(t, op.token, { email });
    const invite = await request(t.http)
      .post(`/api/v1/subscribers/${subscriber.id}/portal-invites`)
      .set(bearer(op.token))
      .send({ delivery: 'email' });
    expect(ensure(invite, 201, 'invite').body.data).not.toHaveProperty('code');
    const [mail] = await smtp.waitFor(email);
    const link = linkIn(mail.parsed.text);
    expect(link).toMatch(new RegExp(`^${base}/portal/\\?invite=ipi_`));

    await page.goto(link as string);
    await signedIn();
    expect(page.url()).not.toContain('invite');
  });

  it('should send a code to the address typed in, refuse a wrong one on the page, and sign in with the mailed one', async () => {
    const email = uniqueEmail();
    await createSubscriber(t, op.token, { email });
    await page.goto(`${base}/portal/?tenant=${op.slug}`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    // The provider comes from the link: the form asks for the address alone.
    expect(await page.getByLabel('Provider', { exact: false }).count()).toBe(0);
    const form = page.getByRole('form', { name: 'With your email address' });
    await form.getByRole('textbox', { name: 'Email address' }).fill(email);
    await form.getByRole('button', { name: 'Send me a code' }).click();
    await page.getByText('a 6-digit code is on its way').waitFor();
    const code = form.getByRole('textbox', { name: 'Sign-in code' });
    await code.waitFor();
    expect(await page.evaluate<string>('document.activeElement?.getAttribute("name")')).toBe('code');
    for (const [name, size] of [
      ['sign-in-code-desktop', DESKTOP],
      ['sign-in-code-phone', PHONE],
    ] as const) {
      await page.setViewportSize(size);
      expect(await seriousViolations(page, name)).toEqual([]);
      await screenshot(page, name);
    }
    await page.setViewportSize(DESKTOP);

    const [mail] = await smtp.waitFor(email);
    const mailed = codeIn(mail.parsed.text);
    expect(mailed).toMatch(/^\d{6}$/);
    const wrong = mailed === '000000' ? '111111' : '000000';
    await code.fill(wrong);
    await form.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('This code is wrong or has expired.').waitFor();
    expect(await page.evaluate<string | null>('sessionStorage.getItem("portal.token")')).toBeNull();
    // The refused sign-in is the one 401 the browser reports; nothing else went wrong.
    expect(problems.splice(0)).toEqual([
      'console error: Failed to load resource: the server responded with a status of 401 (Unauthorized)',
    ]);

    await code.fill(mailed as string);
    await form.getByRole('button', { name: 'Sign in' }).click();
    await signedIn();
  });
});
