import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { createInvoice } from '../support/billing-factory';
import { bearer } from '../support/factories';
import { addDays, insertRadacct } from '../support/network-factory';
import { createPlan, createService, DEFAULT_PPPOE_PASSWORD } from '../support/provisioning-factory';
import { createSubscriber, uniqueEmail } from '../support/subscriber-factory';
import { waitUntil } from '../support/wait-for';
import {
  createTenantWithToken,
  ensure,
  startTestApp,
  type TenantWithToken,
  type TestApp,
} from '../support/test-app';
import {
  canvasPixelsOf,
  DESKTOP,
  freePort,
  launchChromium,
  nextFrames,
  overflow,
  PHONE,
  screenshot,
  seriousViolations,
  watchProblems,
} from './support/browser';

const LOCALE = 'de-DE';
const INSTRUCTIONS = 'Bitte überweisen Sie auf IBAN DE02 1203 0000 0000 2020 51 (BIC BYLADEM1001).';
const DOWNLOAD_BLUE: [number, number, number] = [0x0b, 0x57, 0xd0];
const GB = 1_000_000_000;

const deDay = (ymd: string) =>
  new Intl.DateTimeFormat(LOCALE, { dateStyle: 'medium', timeZone: 'UTC' }).format(
    new Date(`${ymd}T00:00:00Z`),
  );

/**
 * The customer portal (/portal/, docs/portal.md) in Debian's Chromium: an invite link signs in, every page in the
 * tenant's language, the invoice PDF, the usage chart, a ticket with the operator's public reply (never the internal
 * one), a preference changed, sign-out; axe-core on every page at desktop and phone width.
 */
describe('Portal in a browser (issue 34, items 2 and 3)', () => {
  let t: TestApp;
  let base: string;
  let op: TenantWithToken;
  let subscriberId: string;
  let invoiceNumber: string;
  let inviteUrl: string;
  let username: string;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  const violations: string[] = [];

  const asOperator = {
    get: (path: string) => request(t.http).get(path).set(bearer(op.token)),
    post: (path: string, body: object) => request(t.http).post(path).set(bearer(op.token)).send(body),
  };

  /** The page's heading, once the route has drawn it. */
  async function heading(name: string | RegExp): Promise<void> {
    await page.getByRole('heading', { level: 1, name }).waitFor();
    await page.waitForFunction('!document.querySelector("#main[aria-busy=true]")');
  }

  /** axe-core and a screenshot at desktop width, then the same at phone width with no horizontal scroll. */
  async function checkPage(name: string): Promise<void> {
    violations.push(...(await seriousViolations(page, name)));
    await screenshot(page, `${name}-desktop`);
    await page.setViewportSize(PHONE);
    await nextFrames(page); // a resize redraws the chart on a later frame
    expect({ name, overflow: await overflow(page) }).toEqual({ name, overflow: 0 });
    violations.push(...(await seriousViolations(page, `${name} (375 px)`)));
    await screenshot(page, `${name}-phone`);
    await page.setViewportSize(DESKTOP);
  }

  async function go(route: string, title: string | RegExp): Promise<void> {
    await page.goto(`${base}/portal/#/${route}`);
    await heading(title);
  }

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // PORTAL_URL unset: an invite's link is this server's own portal under PUBLIC_BASE_URL.
    t = await startTestApp({ PUBLIC_BASE_URL: base });
    await new Promise<void>((resolve) => t.http.listen(port, '127.0.0.1', resolve));
    op = await createTenantWithToken(t, ['admin']);
    const settings = await request(t.http)
      .patch('/api/v1/tenant/settings')
      .set(bearer(op.token))
      .send({ legal_name: 'Acme Glasfaser GmbH', locale: LOCALE, payment_instructions: INSTRUCTIONS });
    ensure(settings, 200, 'tenant settings');
    subscriberId = (
      await createSubscriber(t, op.token, { full_name: 'Erika Mustermann', email: uniqueEmail() })
    ).id;
    const plan = await createPlan(t, op.token, {
      name: 'Glasfaser 500',
      currency: 'EUR',
      price: 4999,
      download_kbps: 500_000,
      upload_kbps: 100_000,
    });
    const { service } = await createService(t, op.token, subscriberId, { plan_id: plan.id });
    username = service.pppoe_username;
    await seedUsage(service.id, service.radius_username);
    const today = new Date().toISOString().slice(0, 10);
    const invoice = await createInvoice(t, op.token, subscriberId, 4999, {
      currency: 'EUR',
      due_date: addDays(today, 14),
      lines: [{ description: 'Glasfaser 500', quantity: 1, unit_amount: 4999 }],
    });
    expect(invoice.status).toBe('open'); // created finalized: numbered and sent
    invoiceNumber = invoice.number as string;
    const invite = await asOperator.post(`/api/v1/subscribers/${subscriberId}/portal-invites`, {});
    inviteUrl = ensure(invite, 201, 'invite').body.data.url;
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: DESKTOP, acceptDownloads: true })).newPage();
    problems = watchProblems(page);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  afterEach(() => {
    expect(problems.splice(0)).toEqual([]);
  });

  /** A session a day over the last 30 days but two, on a service backdated so its window holds them all. */
  async function seedUsage(serviceId: string, radiusUsername: string): Promise<void> {
    await t.dataSource.query(`UPDATE services SET created_at = now() - interval '40 days' WHERE id = $1`, [
      serviceId,
    ]);
    const today = new Date().toISOString().slice(0, 10);
    for (let i = 0; i < 30; i += 1) {
      if (i === 9 || i === 10) {
        continue;
      }
      const day = addDays(today, -i);
      const download = Math.round((1.2 + (i % 7) * 0.45) * GB);
      await insertRadacct(t, {
        acctsessionid: `S${String(i).padStart(7, '0')}`,
        username: radiusUsername,
        nasipaddress: '192.0.2.10',
        acctstarttime: `${day}T00:10:00Z`,
        acctstoptime: `${day}T00:50:00Z`,
        acctinputoctets: Math.round(download / 8),
        acctoutputoctets: download,
      });
    }
  }

  it('should sign in from the invite link alone, in the tenant language, the code gone from the address bar', async () => {
    const answer = await page.goto(inviteUrl);
    expect(inviteUrl).toMatch(new RegExp(`^${base}/portal/\\?invite=ipi_`));
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
    await heading('Ihr Kontostand');
    expect(page.url()).not.toContain('invite');
    expect(await page.evaluate<string>('document.documentElement.lang')).toBe(LOCALE);
    expect(await page.evaluate<string>('sessionStorage.getItem("portal.token")')).toMatch(/^ipt_/);
    expect(await page.title()).toBe('Ihr Kontostand – Acme Glasfaser GmbH');
    const text = await page.locator('main').innerText();
    const due = deDay(addDays(new Date().toISOString().slice(0, 10), 14));
    const amount = new Intl.NumberFormat(LOCALE, { style: 'currency', currency: 'EUR' }).format(49.99); // 49,99 €
    expect(text).toContain(`${amount}\n`);
    expect(text).toContain(`${amount} fällig bis ${due}`);
    expect(text).toContain(INSTRUCTIONS);
    // Keyboard: the first Tab reaches the skip link, which moves focus to the content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('skip-link');
    await page.keyboard.press('Enter');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('main');
    await checkPage('balance');
  });

  it('should list the invoice and download its PDF with the session token', async () => {
    await go('invoices', 'Rechnungen');
    // A new page moves focus to its heading, so a screen reader starts there.
    expect(await page.evaluate<string>('document.activeElement.tagName')).toBe('H1');
    await page.getByRole('heading', { name: `Rechnung ${invoiceNumber}` }).waitFor();
    expect(await page.locator('main').innerText()).toContain('Offen');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: `Rechnung ${invoiceNumber} als PDF herunterladen` }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${invoiceNumber}.pdf`);
    const bytes = readFileSync(await download.path());
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    await checkPage('invoices');
  });

  it('should draw the usage of the last 30 days as a bar chart labelled with its summary', async () => {
    await go('usage', 'Verbrauch');
    const canvas = page.locator('canvas');
    await canvas.waitFor();
    await page.waitForFunction('window.Chart && Object.keys(window.Chart.instances).length > 0');
    await waitUntil(
      () => canvasPixelsOf(page, 'canvas', DOWNLOAD_BLUE),
      (pixels) => pixels > 2000,
      { what: 'the download bars drawn' },
    );
    expect(await canvas.getAttribute('role')).toBe('img');
    const label = await canvas.getAttribute('aria-label');
    expect(label).toContain(`${username}:`);
    expect(label).toContain('in den letzten 30 Tagen');
    expect(label).toContain('stärkster Tag');
    await checkPage('usage');
  });

  it('should show the service with its plan by name and rates, status and login, never its password', async () => {
    await go('services', 'Anschlüsse');
    const text = await page.locator('main').innerText();
    expect(text).toContain(username);
    // The plan by its name and rates (GET /portal/session names it), not by its id.
    expect(text).toContain('Tarif\nGlasfaser 500\nDownload 500 Mbit/s, Upload 100 Mbit/s');
    expect(text).not.toContain('plan_');
    expect(await page.content()).not.toContain(DEFAULT_PPPOE_PASSWORD);
    await checkPage('services');
  });

  it("should open a ticket, show the operator's public reply and not the internal note, and send a reply", async () => {
    await go('tickets', 'Hilfe');
    await page.getByLabel('Betreff').fill('Internet sehr langsam');
    await page.getByLabel('Worum geht es?').fill('Seit gestern Abend nur noch 2 Mbit/s.');
    await page.getByRole('button', { name: 'Senden' }).click();
    await heading(/^Anfrage #\d+: Internet sehr langsam$/);
    const tickets = await asOperator.get(`/api/v1/tickets?subscriber_id=${subscriberId}`);
    const ticket = ensure(tickets, 200, 'list tickets').body.data[0];
    expect(ticket).toMatchObject({ subject: 'Internet sehr langsam', subscriber_id: subscriberId });

    const publicReply = 'Wir haben Ihren Anschluss neu gestartet. Ist es jetzt besser?';
    const internalNote = 'Intern: Port 7 am Verteiler flackert.';
    ensure(
      await asOperator.post(`/api/v1/tickets/${ticket.id}/comments`, { body: publicReply, public: true }),
      201,
      'reply',
    );
    ensure(
      await asOperator.post(`/api/v1/tickets/${ticket.id}/comments`, { body: internalNote, public: false }),
      201,
      'note',
    );
    await page.reload();
    await heading(/^Anfrage #\d+/);
    await page.getByText(publicReply).waitFor();
    expect(await page.content()).not.toContain(internalNote);

    await page.getByLabel('Ihre Antwort').fill('Ja, danke, jetzt geht es wieder.');
    await page.getByRole('button', { name: 'Antwort senden' }).click();
    await page.getByText('Ihre Antwort wurde gesendet.').waitFor();
    const comments = ensure(await asOperator.get(`/api/v1/tickets/${ticket.id}/comments`), 200, 'comments')
      .body.data;
    expect(comments.at(-1)).toMatchObject({
      body: 'Ja, danke, jetzt geht es wieder.',
      author_type: 'subscriber',
      public: true,
    });
    await checkPage('ticket');
    await go('tickets', 'Hilfe');
    await checkPage('tickets');
  });

  it('should switch a notification off (the operator sees it) and keep the legal notices locked on', async () => {
    await go('profile', 'Profil');
    const legal = page.getByLabel('Neue Rechnungen');
    expect(await legal.isChecked()).toBe(true);
    expect(await legal.isDisabled()).toBe(true);
    const payments = page.getByLabel('Zahlungseingang');
    expect(await payments.isChecked()).toBe(true);
    // By keyboard: focus the switch and press Space, as a keyboard user does.
    await payments.focus();
    await page.keyboard.press('Space');
    const preferences = async (): Promise<Record<string, boolean>> => {
      const res = await asOperator.get(`/api/v1/subscribers/${subscriberId}/notification-preferences`);
      return (res.body as { data: { preferences: Record<string, boolean> } }).data.preferences;
    };
    await waitUntil(preferences, (prefs) => prefs.payment_received === false, {
      what: 'payment_received off for the operator',
    });
    await page.waitForFunction('!document.querySelector("input[name=payment_received]").disabled');
    await checkPage('profile');
  });

  it('should sign out (the token stops working) and refuse the used invite link', async () => {
    const token = await page.evaluate<string>('sessionStorage.getItem("portal.token")');
    await page.getByRole('button', { name: 'Abmelden' }).click();
    await heading('Anmelden');
    await page.getByText('Sie haben sich abgemeldet.').waitFor();
    expect(await page.evaluate<string | null>('sessionStorage.getItem("portal.token")')).toBeNull();
    expect((await request(t.http).get('/api/v1/portal/session').set(bearer(token))).status).toBe(401);
    await checkPage('sign-in');
    await page.goto(inviteUrl);
    await page
      .getByText('Diese Einladung ist unbekannt, schon benutzt oder abgelaufen.', { exact: false })
      .waitFor();
    // The refused sign-in is the one failed load the browser reports here.
    expect(problems.splice(0).filter((problem) => !problem.includes('status of 401'))).toEqual([]);
  });

  it('should have no serious or critical accessibility violation on any page, at either width', () => {
    expect(violations).toEqual([]);
  });
});
