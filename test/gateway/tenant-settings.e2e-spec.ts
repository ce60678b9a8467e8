import request from 'supertest';
import { expectError, expectSuccess, successData } from '../support/envelope';
import { bearer } from '../support/factories';
import { ISO_MS, listEvents, longString } from '../support/subscriber-factory';
import {
  createTenantWithToken,
  type TenantWithToken,
  type TestApp,
  issueToken,
  appSuite,
} from '../support/test-app';

type Body = Record<string, unknown>;

const SCOPES = ['billing:read', 'billing:write', 'events:read'];

const DEFAULTS = {
  legal_name: null,
  address: { line1: null, line2: null, city: null, postal_code: null, region: null, country: null },
  tax_id: null,
  registration_number: null,
  contact: { email: null, phone: null, website: null },
  payment_instructions: null,
  invoice_footer: null,
  locale: 'en-US',
  time_zone: 'UTC',
  numbering: {
    invoice: { format: 'INV-{YYYY}-{seq:6}', restart_yearly: false },
    credit_note: { format: 'CN-{YYYY}-{seq:6}', restart_yearly: false },
  },
  mail: null,
  notifications: {
    invoice_issued: true,
    payment_received: true,
    credit_note_issued: true,
    invoice_reminder: true,
    suspended_for_non_payment: true,
    service_restored: true,
    service_activated: true,
    ticket_reply: true,
    portal_invite: true,
    portal_sign_in_code: true,
  },
  updated_at: null,
};

/** A public address: the mail host must not be a private one (MAIL_ALLOW_PRIVATE is off here). */
const PUBLIC_HOST = '93.184.215.14';
const PASSWORD = 'smtp-Pa55word-never-shown';
const MAIL: Body = {
  host: PUBLIC_HOST,
  port: 587,
  tls: 'starttls',
  user: 'billing@acme-fiber.example',
  password: PASSWORD,
  from: 'Acme Fiber <billing@acme-fiber.example>',
  reply_to: 'support@acme-fiber.example',
};
const MAIL_ANSWER = { ...MAIL, password: undefined, password_set: true };
delete MAIL_ANSWER.password;

const FULL: Body = {
  legal_name: '  Acme Fiber, Lda.  ',
  address: {
    line1: 'Rua Augusta 100',
    line2: '3.º andar',
    city: 'Lisboa',
    postal_code: '1100-053',
    region: 'Lisboa',
    country: 'PT',
  },
  tax_id: 'PT509999999',
  registration_number: 'CRC Lisboa 12345',
  contact: {
    email: 'billing@acme-fiber.example',
    phone: '+351 21 000 0000',
    website: 'https://acme-fiber.example',
  },
  payment_instructions: 'Bank transfer\nIBAN PT50 0002 0123 1234 5678 9015 4\n\tQuote the invoice number.  ',
  invoice_footer: 'Thank you.\r\nΕυχαριστούμε — Спасибо',
  locale: 'pt-pt',
  time_zone: 'europe/lisbon',
  numbering: {
    invoice: { format: 'FT {YYYY}/{seq}', restart_yearly: true },
    credit_note: { format: 'NC {YY}{MM}-{seq:4}' },
  },
};

/** FULL as it is stored: one-line fields trimmed, multi-line ones verbatim, locale and zone canonical. */
const FULL_STORED = {
  ...FULL,
  legal_name: 'Acme Fiber, Lda.',
  locale: 'pt-PT',
  time_zone: 'Europe/Lisbon',
  numbering: {
    invoice: { format: 'FT {YYYY}/{seq}', restart_yearly: true },
    credit_note: { format: 'NC {YY}{MM}-{seq:4}', restart_yearly: false },
  },
  mail: DEFAULTS.mail,
  notifications: DEFAULTS.notifications,
};

/** GET/PATCH /tenant/settings: the tenant as the issuer of its documents, and its numbering series' formats. */
describe('Tenant settings', () => {
  let t: TestApp;

  const getSettings = (token: string) => request(t.http).get('/api/v1/tenant/settings').set(bearer(token));
  const patchSettings = (token: string, body: unknown, headers: Record<string, string> = {}) =>
    request(t.http)
      .patch('/api/v1/tenant/settings')
      .set(bearer(token))
      .set(headers)
      .send(body as object);

  const readSettings = async (token: string) => successData<Body>(await getSettings(token));
  const changeSettings = async (token: string, body: Body) =>
    successData<Body>(await patchSettings(token, body));

  const tenant = (): Promise<TenantWithToken> => createTenantWithToken(t, SCOPES);
  const updates = (token: string) => listEvents(t, token, { type: 'tenant_settings.updated' });

  appSuite((app) => (t = app));

  describe('GET /api/v1/tenant/settings', () => {
    it('should answer the defaults, with an ETag, to a tenant that never changed them, and write nothing', async () => {
      const fresh = await tenant();
      const res = await getSettings(fresh.token);
      expectSuccess(res);
      expect(res.body.data).toEqual(DEFAULTS);
      expect(res.headers.etag).toMatch(/^"[^"]+"$/);
      expect(await readSettings(fresh.token)).toEqual(DEFAULTS);
      const rows = await t.dataSource.query('SELECT 1 FROM tenant_settings WHERE tenant_id = $1', [
        fresh.tenantId,
      ]);
      expect(rows).toEqual([]);
      expect(await updates(fresh.token)).toEqual([]);
    });
  });

  describe('PATCH /api/v1/tenant/settings', () => {
    it('should store every field, answer what GET answers, and stamp updated_at', async () => {
      const fresh = await tenant();
      const before = Date.now();
      const settings = await changeSettings(fresh.token, FULL);
      expect(settings).toEqual({ ...FULL_STORED, updated_at: expect.stringMatching(ISO_MS) });
      expect(Math.abs(Date.parse(settings.updated_at as string) - before)).toBeLessThan(60_000);
      expect(await readSettings(fresh.token)).toEqual(settings);
    });

    it('should merge address and contact part by part, and clear with null', async () => {
      const fresh = await tenant();
      await changeSettings(fresh.token, FULL);
      const merged = await changeSettings(fresh.token, {
        address: { city: 'Porto', line2: null },
        contact: { phone: null },
        tax_id: null,
      });
      expect(merged.address).toEqual({ ...(FULL.address as Body), city: 'Porto', line2: null });
      expect(merged.contact).toEqual({ ...(FULL.contact as Body), phone: null });
      expect(merged.tax_id).toBeNull();
      expect(merged.legal_name).toBe('Acme Fiber, Lda.');

      const cleared = await changeSettings(fresh.token, {
        address: null,
        contact: null,
        legal_name: null,
        payment_instructions: null,
        invoice_footer: null,
        registration_number: null,
      });
      expect(cleared).toEqual({
        ...DEFAULTS,
        locale: 'pt-PT',
        time_zone: 'Europe/Lisbon',
        numbering: FULL_STORED.numbering,
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(await readSettings(fresh.token)).toEqual(cleared);
    });

    it('should change one numbering series and leave the other, and accept the defaults back', async () => {
      const fresh = await tenant();
      const settings = await changeSettings(fresh.token, {
        numbering: { credit_note: { restart_yearly: true } },
      });
      expect(settings.numbering).toEqual({
        invoice: DEFAULTS.numbering.invoice,
        credit_note: { format: 'CN-{YYYY}-{seq:6}', restart_yearly: true },
      });
      const back = await changeSettings(fresh.token, {
        numbering: { credit_note: { restart_yearly: false } },
        locale: 'en-US',
      });
      expect({ ...back, updated_at: null }).toEqual(DEFAULTS);
    });

    it('should accept every field at its longest', async () => {
      const fresh = await tenant();
      const longest = {
        legal_name: longString(200),
        address: {
          line1: longString(200),
          line2: longString(200),
          city: longString(100),
          postal_code: longString(20),
          region: longString(100),
        },
        tax_id: longString(50),
        registration_number: longString(50),
        contact: {
          email: `${longString(64)}@${longString(63)}.${longString(63)}.example`,
          phone: '+'.padEnd(40, '1'),
        },
        payment_instructions: longString(2000),
        invoice_footer: longString(1000),
        numbering: { invoice: { format: `${longString(35)}{seq}` } },
      };
      const settings = await changeSettings(fresh.token, longest);
      expect(settings.legal_name).toBe(longest.legal_name);
      expect(settings.address).toEqual({ ...longest.address, country: null });
      expect(settings.payment_instructions).toBe(longest.payment_instructions);
      expect((settings.numbering as { invoice: Body }).invoice.format).toBe(longest.numbering.invoice.format);
    });

    it.each<[string, unknown, number, string, string | null]>([
      // locale: BCP 47, and one this server can write documents in
      ['an unknown language', { locale: 'xx' }, 422, 'validation_failed', 'locale'],
      ['an underscore locale', { locale: 'en_US' }, 422, 'validation_failed', 'locale'],
      ['a private-use tag', { locale: 'x-private' }, 422, 'validation_failed', 'locale'],
      ['two locales', { locale: 'en-US,pt-PT' }, 422, 'validation_failed', 'locale'],
      ['an empty locale', { locale: '' }, 422, 'validation_failed', 'locale'],
      [
        'a 36-character locale',
        { locale: `en-${'a'.repeat(8)}-${'b'.repeat(8)}-${'c'.repeat(8)}-dddddd` },
        422,
        'validation_failed',
        'locale',
      ],
      ['a numeric locale', { locale: 1 }, 422, 'validation_failed', 'locale'],
      ['a null locale', { locale: null }, 422, 'validation_failed', 'locale'],
      // time_zone: IANA
      ['an unknown zone', { time_zone: 'Mars/Olympus_Mons' }, 422, 'validation_failed', 'time_zone'],
      ['an offset', { time_zone: '+01:00' }, 422, 'validation_failed', 'time_zone'],
      ['UTC+1', { time_zone: 'UTC+1' }, 422, 'validation_failed', 'time_zone'],
      ['a zone with a path trick', { time_zone: 'Europe/../Lisbon' }, 422, 'validation_failed', 'time_zone'],
      ['an empty zone', { time_zone: '' }, 422, 'validation_failed', 'time_zone'],
      ['a null zone', { time_zone: null }, 422, 'validation_failed', 'time_zone'],
      ['a zone as an object', { time_zone: { name: 'UTC' } }, 422, 'validation_failed', 'time_zone'],
      // numbering formats
      [
        'a format without {seq}',
        { numbering: { invoice: { format: 'INV-{YYYY}' } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'a format with two {seq}',
        { numbering: { credit_note: { format: '{seq}{seq}' } } },
        422,
        'validation_failed',
        'numbering.credit_note.format',
      ],
      [
        'an unknown token',
        { numbering: { invoice: { format: '{DD}-{seq}' } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        '{seq:13}',
        { numbering: { invoice: { format: '{seq:13}' } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        '{seq:0}',
        { numbering: { invoice: { format: '{seq:0}' } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'a huge width',
        { numbering: { invoice: { format: '{seq:99999999999999999999}' } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'a 41-character format',
        { numbering: { invoice: { format: `${'A'.repeat(36)}{seq}` } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'a control character',
        { numbering: { invoice: { format: 'INV\u0007{seq}' } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'an unclosed brace',
        { numbering: { invoice: { format: 'INV-{seq' } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'an empty format',
        { numbering: { invoice: { format: '' } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'a null format',
        { numbering: { invoice: { format: null } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'a numeric format',
        { numbering: { invoice: { format: 7 } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'a yearly restart without a year',
        { numbering: { invoice: { format: 'INV-{seq}', restart_yearly: true } } },
        422,
        'validation_failed',
        'numbering.invoice.format',
      ],
      [
        'a yearly restart with only {MM}',
        { numbering: { credit_note: { format: '{MM}/{seq}', restart_yearly: true } } },
        422,
        'validation_failed',
        'numbering.credit_note.format',
      ],
      [
        'a string restart_yearly',
        { numbering: { invoice: { restart_yearly: 'yes' } } },
        422,
        'validation_failed',
        'numbering.invoice.restart_yearly',
      ],
      [
        'a null restart_yearly',
        { numbering: { invoice: { restart_yearly: null } } },
        422,
        'validation_failed',
        'numbering.invoice.restart_yearly',
      ],
      ['a null series', { numbering: { invoice: null } }, 422, 'validation_failed', 'numbering.invoice'],
      [
        'a series as a string',
        { numbering: { invoice: 'INV-{seq}' } },
        422,
        'validation_failed',
        'numbering.invoice',
      ],
      ['null numbering', { numbering: null }, 422, 'validation_failed', 'numbering'],
      ['numbering as an array', { numbering: [] }, 422, 'validation_failed', 'numbering'],
      [
        'an unknown series',
        { numbering: { receipt: { format: '{seq}' } } },
        400,
        'unknown_field',
        'numbering.receipt',
      ],
      [
        'an unknown series field',
        { numbering: { invoice: { prefix: 'INV' } } },
        400,
        'unknown_field',
        'numbering.invoice.prefix',
      ],
      // lengths, one line, not blank
      ['a 201-character legal name', { legal_name: longString(201) }, 422, 'validation_failed', 'legal_name'],
      ['a blank legal name', { legal_name: '   ' }, 422, 'validation_failed', 'legal_name'],
      ['a two-line legal name', { legal_name: 'Acme\nFiber' }, 422, 'validation_failed', 'legal_name'],
      ['a numeric legal name', { legal_name: 42 }, 422, 'validation_failed', 'legal_name'],
      [
        'a 201-character line1',
        { address: { line1: longString(201) } },
        422,
        'validation_failed',
        'address.line1',
      ],
      [
        'a 201-character line2',
        { address: { line2: longString(201) } },
        422,
        'validation_failed',
        'address.line2',
      ],
      [
        'a 101-character city',
        { address: { city: longString(101) } },
        422,
        'validation_failed',
        'address.city',
      ],
      [
        'a 21-character postal code',
        { address: { postal_code: longString(21) } },
        422,
        'validation_failed',
        'address.postal_code',
      ],
      [
        'a 101-character region',
        { address: { region: longString(101) } },
        422,
        'validation_failed',
        'address.region',
      ],
      ['a lower-case country', { address: { country: 'pt' } }, 422, 'validation_failed', 'address.country'],
      ['an unassigned country', { address: { country: 'QQ' } }, 422, 'validation_failed', 'address.country'],
      ['an alpha-3 country', { address: { country: 'PRT' } }, 422, 'validation_failed', 'address.country'],
      ['an unknown address part', { address: { street: 'x' } }, 400, 'unknown_field', 'address.street'],
      ['an address as a string', { address: 'Rua Augusta 100' }, 422, 'validation_failed', 'address'],
      ['a 51-character tax id', { tax_id: longString(51) }, 422, 'validation_failed', 'tax_id'],
      [
        'a 51-character registration number',
        { registration_number: longString(51) },
        422,
        'validation_failed',
        'registration_number',
      ],
      [
        'an invalid email',
        { contact: { email: 'billing at acme' } },
        422,
        'validation_failed',
        'contact.email',
      ],
      [
        'a 255-character email',
        { contact: { email: `${longString(64)}@${longString(186)}.com` } },
        422,
        'validation_failed',
        'contact.email',
      ],
      ['a phone in words', { contact: { phone: 'call us' } }, 422, 'validation_failed', 'contact.phone'],
      [
        'a 41-character phone',
        { contact: { phone: '+'.padEnd(41, '1') } },
        422,
        'validation_failed',
        'contact.phone',
      ],
      [
        'an ftp website',
        { contact: { website: 'ftp://acme.example' } },
        422,
        'validation_failed',
        'contact.website',
      ],
      [
        'a website without a scheme',
        { contact: { website: 'acme.example' } },
        422,
        'validation_failed',
        'contact.website',
      ],
      [
        '2001 characters of payment instructions',
        { payment_instructions: longString(2001) },
        422,
        'validation_failed',
        'payment_instructions',
      ],
      [
        'blank payment instructions',
        { payment_instructions: '\n  \n' },
        422,
        'validation_failed',
        'payment_instructions',
      ],
      [
        'a bell in payment instructions',
        { payment_instructions: 'IBAN\u0007' },
        422,
        'validation_failed',
        'payment_instructions',
      ],
      [
        'a 1001-character footer',
        { invoice_footer: longString(1001) },
        422,
        'validation_failed',
        'invoice_footer',
      ],
      ['an unknown field', { vat_number: 'PT1' }, 400, 'unknown_field', 'vat_number'],
      ['a NUL character', { legal_name: 'Acme\u0000' }, 422, 'validation_failed', 'legal_name'],
      ['a body that is an array', [{ legal_name: 'Acme' }], 400, 'invalid_json', null],
    ])('should refuse %s, naming the field, and change nothing', async (_case, body, status, code, field) => {
      const fresh = await tenant();
      const stored = await changeSettings(fresh.token, { legal_name: 'Before' });
      expectError(await patchSettings(fresh.token, body), status, code, field);
      expect(await readSettings(fresh.token)).toEqual(stored);
      expect(await updates(fresh.token)).toHaveLength(1);
    });

    it('should hold restart_yearly sent alone to the stored format, and a format sent alone to the stored restart', async () => {
      const fresh = await tenant();
      await changeSettings(fresh.token, { numbering: { invoice: { format: 'INV-{seq}' } } });
      expectError(
        await patchSettings(fresh.token, { numbering: { invoice: { restart_yearly: true } } }),
        422,
        'validation_failed',
        'numbering.invoice.restart_yearly',
      );
      await changeSettings(fresh.token, {
        numbering: { invoice: { format: 'INV-{YY}-{seq}', restart_yearly: true } },
      });
      const res = await patchSettings(fresh.token, { numbering: { invoice: { format: 'INV-{seq}' } } });
      expectError(res, 422, 'validation_failed', 'numbering.invoice.format');
      expect(res.body.error.message).toContain('{YYYY} or {YY}');
      expect((await readSettings(fresh.token)).numbering).toEqual({
        invoice: { format: 'INV-{YY}-{seq}', restart_yearly: true },
        credit_note: DEFAULTS.numbering.credit_note,
      });
    });
  });

  describe('mail and notifications', () => {
    it('should store the mail server, answer password_set and never the password, keep it when left out and clear it with null', async () => {
      const fresh = await tenant();
      const set = await patchSettings(fresh.token, { mail: MAIL });
      expectSuccess(set);
      expect(set.body.data.mail).toEqual(MAIL_ANSWER);
      expect(JSON.stringify(set.body)).not.toContain(PASSWORD);
      const read = await getSettings(fresh.token);
      expect(read.body.data.mail).toEqual(MAIL_ANSWER);
      expect(JSON.stringify(read.body)).not.toContain(PASSWORD);
      const stored = await t.dataSource.query(
        'SELECT mail_password FROM tenant_settings WHERE tenant_id = $1',
        [fresh.tenantId],
      );
      expect(stored).toEqual([{ mail_password: PASSWORD }]);

      // Left out: kept. Sent again, even the same: a change (no answer confirms a guess).
      const partial = await changeSettings(fresh.token, { mail: { port: 2525, reply_to: null } });
      expect(partial.mail).toEqual({ ...MAIL_ANSWER, port: 2525, reply_to: null });
      const before = await updates(fresh.token);
      const same = await changeSettings(fresh.token, { mail: { password: PASSWORD } });
      expect((await updates(fresh.token)).length).toBe(before.length + 1);
      expect(same.mail).toEqual(partial.mail);

      // null clears the login (user and password together), then mail: null the whole server.
      const noLogin = await changeSettings(fresh.token, { mail: { user: null, password: null } });
      expect(noLogin.mail).toEqual({
        ...MAIL_ANSWER,
        port: 2525,
        reply_to: null,
        user: null,
        password_set: false,
      });
      expect(
        await t.dataSource.query('SELECT mail_password FROM tenant_settings WHERE tenant_id = $1', [
          fresh.tenantId,
        ]),
      ).toEqual([{ mail_password: null }]);
      expect((await changeSettings(fresh.token, { mail: null })).mail).toBeNull();
      expect((await readSettings(fresh.token)).mail).toBeNull();
    });

    it('should keep the password out of tenant_settings.updated and out of a PATCH sent again with its idempotency key', async () => {
      const fresh = await tenant();
      // PATCH is not replayed (idempotency keys are for POST): sent twice, each answer is the settings, password_set.
      const first = await patchSettings(fresh.token, { mail: MAIL }, { 'Idempotency-Key': 'mail-key-1' });
      const again = await patchSettings(fresh.token, { mail: MAIL }, { 'Idempotency-Key': 'mail-key-1' });
      for (const res of [first, again]) {
        expectSuccess(res);
        expect(res.body.data.mail).toEqual(MAIL_ANSWER);
        expect(JSON.stringify(res.body)).not.toContain(PASSWORD);
      }
      const events = await updates(fresh.token);
      expect(events).toHaveLength(2);
      expect(events[1].data.object.mail).toEqual(MAIL_ANSWER);
      expect(events[1].data.changed_fields).toEqual(expect.arrayContaining(['mail.host', 'mail.password']));
      expect(events[0].data.changed_fields).toEqual(['mail.password']);
      const raw = await request(t.http)
        .get('/api/v1/events?type=tenant_settings.updated')
        .set(bearer(fresh.token));
      expect(raw.text).not.toContain(PASSWORD);
      const keys = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = $1 AND response_body::text LIKE $2`,
        [fresh.tenantId, `%${PASSWORD}%`],
      );
      expect(keys).toEqual([{ n: 0 }]);
    });

    it('should switch kinds one by one, keep the others on, and name them in changed_fields', async () => {
      const fresh = await tenant();
      const off = await changeSettings(fresh.token, {
        notifications: { payment_received: false, invoice_issued: false },
      });
      expect(off.notifications).toEqual({
        ...DEFAULTS.notifications,
        payment_received: false,
        invoice_issued: false,
      });
      const on = await changeSettings(fresh.token, { notifications: { invoice_issued: true } });
      expect(on.notifications).toEqual({ ...DEFAULTS.notifications, payment_received: false });
      expect(await readSettings(fresh.token)).toEqual(on);
      const events = await updates(fresh.token);
      expect(events.map((event) => event.data.changed_fields)).toEqual([
        ['notifications.invoice_issued'],
        ['notifications.invoice_issued', 'notifications.payment_received'],
      ]);
    });

    it.each<[string, Body | null, unknown, string, string]>([
      ['port 0', null, { mail: { ...MAIL, port: 0 } }, 'validation_failed', 'mail.port'],
      ['port 65536', null, { mail: { ...MAIL, port: 65536 } }, 'validation_failed', 'mail.port'],
      ['a fractional port', null, { mail: { ...MAIL, port: 25.5 } }, 'validation_failed', 'mail.port'],
      ['a port as text', null, { mail: { ...MAIL, port: '587' } }, 'validation_failed', 'mail.port'],
      ['an unknown tls mode', null, { mail: { ...MAIL, tls: 'ssl' } }, 'validation_failed', 'mail.tls'],
      [
        'a host with CR/LF',
        null,
        { mail: { ...MAIL, host: 'smtp.example.com\r\nRCPT' } },
        'validation_failed',
        'mail.host',
      ],
      [
        'a host with a port',
        null,
        { mail: { ...MAIL, host: 'smtp.example.com:25' } },
        'validation_failed',
        'mail.host',
      ],
      [
        'a bracketed IPv6 host',
        null,
        { mail: { ...MAIL, host: '[2001:4860::1]' } },
        'validation_failed',
        'mail.host',
      ],
      ['a loopback host', null, { mail: { ...MAIL, host: '127.0.0.1' } }, 'validation_failed', 'mail.host'],
      ['a private host', null, { mail: { ...MAIL, host: '10.0.0.25' } }, 'validation_failed', 'mail.host'],
      [
        'a link-local host',
        null,
        { mail: { ...MAIL, host: '169.254.169.254' } },
        'validation_failed',
        'mail.host',
      ],
      ['an IPv6 loopback host', null, { mail: { ...MAIL, host: '::1' } }, 'validation_failed', 'mail.host'],
      ['localhost', null, { mail: { ...MAIL, host: 'localhost' } }, 'validation_failed', 'mail.host'],
      [
        'two From addresses',
        null,
        { mail: { ...MAIL, from: 'a@example.com, b@example.com' } },
        'validation_failed',
        'mail.from',
      ],
      [
        'a From with a line break',
        null,
        { mail: { ...MAIL, from: 'a@example.com\nBcc: x@evil.example' } },
        'validation_failed',
        'mail.from',
      ],
      [
        'a From that is no address',
        null,
        { mail: { ...MAIL, from: 'Acme Fiber' } },
        'validation_failed',
        'mail.from',
      ],
      [
        'a Reply-To with a line break',
        null,
        { mail: { ...MAIL, reply_to: 'a@example.com\r\n' } },
        'validation_failed',
        'mail.reply_to',
      ],
      [
        'a password with a line break',
        null,
        { mail: { ...MAIL, password: 'pw\r\nQUIT' } },
        'validation_failed',
        'mail.password',
      ],
      ['an empty password', null, { mail: { ...MAIL, password: '' } }, 'validation_failed', 'mail.password'],
      [
        'a user without a password',
        null,
        { mail: { ...MAIL, password: undefined } },
        'validation_failed',
        'mail.password',
      ],
      [
        'a password without a user',
        null,
        { mail: { ...MAIL, user: undefined } },
        'validation_failed',
        'mail.user',
      ],
      [
        'a first server without a host',
        null,
        { mail: { ...MAIL, host: undefined } },
        'validation_failed',
        'mail.host',
      ],
      [
        'a first server without a port',
        null,
        { mail: { ...MAIL, port: undefined } },
        'validation_failed',
        'mail.port',
      ],
      [
        'a first server without From',
        null,
        { mail: { ...MAIL, from: undefined } },
        'validation_failed',
        'mail.from',
      ],
      [
        'clearing the host of a server',
        { mail: MAIL },
        { mail: { host: null } },
        'validation_failed',
        'mail.host',
      ],
      [
        'clearing the password alone',
        { mail: MAIL },
        { mail: { password: null } },
        'validation_failed',
        'mail.password',
      ],
      ['mail as a string', null, { mail: 'smtp://x' }, 'validation_failed', 'mail'],
      [
        'a switch that is not a boolean',
        null,
        { notifications: { ticket_reply: 'no' } },
        'validation_failed',
        'notifications.ticket_reply',
      ],
      ['notifications null', null, { notifications: null }, 'validation_failed', 'notifications'],
      [
        'an unknown kind',
        null,
        { notifications: { sms_sent: false } },
        'unknown_field',
        'notifications.sms_sent',
      ],
    ])(
      'should refuse %s with 422 naming the field, never echoing the password',
      async (_case, setup, body, code, field) => {
        const fresh = await tenant();
        const stored = await changeSettings(fresh.token, { legal_name: 'Before', ...(setup ?? {}) });
        const res = await patchSettings(fresh.token, body);
        expectError(res, code === 'unknown_field' ? 400 : 422, code, field);
        expect(JSON.stringify(res.body)).not.toContain(PASSWORD);
        expect(await readSettings(fresh.token)).toEqual(stored);
        expect(await updates(fresh.token)).toHaveLength(1);
      },
    );
  });

  describe('If-Match', () => {
    it("should accept the defaults' ETag on the first PATCH, then refuse it as stale", async () => {
      const fresh = await tenant();
      const etag = (await getSettings(fresh.token)).headers.etag;
      const first = await patchSettings(fresh.token, { legal_name: 'Acme' }, { 'If-Match': etag });
      expectSuccess(first);
      expect(first.headers.etag).toBeDefined();
      expect(first.headers.etag).not.toBe(etag);
      expect((await getSettings(fresh.token)).headers.etag).toBe(first.headers.etag);

      const stale = await patchSettings(fresh.token, { legal_name: 'Other' }, { 'If-Match': etag });
      expectError(stale, 412, 'precondition_failed');
      expect((await readSettings(fresh.token)).legal_name).toBe('Acme');

      const current = await patchSettings(
        fresh.token,
        { legal_name: 'Other' },
        { 'If-Match': first.headers.etag },
      );
      expectSuccess(current);
      expect(current.body.data.legal_name).toBe('Other');
      expectSuccess(await patchSettings(fresh.token, { legal_name: 'Third' }, { 'If-Match': '*' }));
      expect(await updates(fresh.token)).toHaveLength(3);
    });

    it('should let one of two PATCHes sent with the same tag through and answer the other 412', async () => {
      const fresh = await tenant();
      await changeSettings(fresh.token, { legal_name: 'Start' });
      const etag = (await getSettings(fresh.token)).headers.etag;
      const results = await Promise.all(
        ['One', 'Two'].map((name) => patchSettings(fresh.token, { legal_name: name }, { 'If-Match': etag })),
      );
      expect(results.map((res) => res.status).sort()).toEqual([200, 412]);
      const winner = results.find((res) => res.status === 200)!;
      expect((await readSettings(fresh.token)).legal_name).toBe(winner.body.data.legal_name);
    });
  });

  describe('tenant_settings.updated', () => {
    it('should record each change with the settings as data.object and the changed fields, and no-ops not at all', async () => {
      const fresh = await tenant();
      const first = await changeSettings(fresh.token, FULL);
      const second = await changeSettings(fresh.token, {
        address: { city: 'Porto', country: 'PT' },
        numbering: { invoice: { format: 'FT {YYYY}/{seq:5}', restart_yearly: true } },
        locale: 'PT-pt',
      });
      // Nothing different: no write, no event, updated_at kept.
      const same = await changeSettings(fresh.token, {
        legal_name: 'Acme Fiber, Lda.',
        address: { city: 'Porto' },
      });
      expect(same).toEqual(second);

      const events = await updates(fresh.token);
      expect(events.map((event) => event.data.object)).toEqual([second, first]);
      expect(events[0].data.changed_fields).toEqual(['address.city', 'numbering.invoice.format']);
      expect(events[1].data.changed_fields).toEqual([
        'legal_name',
        'address.line1',
        'address.line2',
        'address.city',
        'address.postal_code',
        'address.region',
        'address.country',
        'tax_id',
        'registration_number',
        'contact.email',
        'contact.phone',
        'contact.website',
        'payment_instructions',
        'invoice_footer',
        'locale',
        'time_zone',
        'numbering.invoice.format',
        'numbering.invoice.restart_yearly',
        'numbering.credit_note.format',
      ]);
      for (const event of events) {
        expect(event.subject_id).toBeNull();
        expect(event.actor).toEqual({ type: 'token', id: fresh.tokenId });
      }
    });
  });

  describe('scopes and tenants', () => {
    it('should read with billing:read, change with billing:write, and refuse other tokens', async () => {
      const owner = await tenant();
      const reader = await issueToken(t, owner.slug, ['billing:read']);
      const writer = await issueToken(t, owner.slug, ['billing:write']);
      const other = await issueToken(t, owner.slug, ['tickets:*', 'subscribers:*']);

      expectSuccess(await getSettings(reader.token));
      expectError(await patchSettings(reader.token, { legal_name: 'X' }), 403, 'insufficient_scope');
      expectSuccess(await patchSettings(writer.token, { legal_name: 'By writer' }));
      expectError(await getSettings(writer.token), 403, 'insufficient_scope');
      expectError(await getSettings(other.token), 403, 'insufficient_scope');
      expectError(await patchSettings(other.token, { legal_name: 'X' }), 403, 'insufficient_scope');
      expectError(await request(t.http).get('/api/v1/tenant/settings'), 401, 'authentication_required');
      expect((await readSettings(reader.token)).legal_name).toBe('By writer');
    });

    it("should keep each tenant's settings its own", async () => {
      const [a, b, untouched] = await Promise.all([tenant(), tenant(), tenant()]);
      await changeSettings(a.token, { legal_name: 'A', numbering: { invoice: { format: 'A-{seq}' } } });
      await changeSettings(b.token, { legal_name: 'B', time_zone: 'Asia/Tokyo' });
      expect(await readSettings(a.token)).toMatchObject({ legal_name: 'A', time_zone: 'UTC' });
      expect(await readSettings(b.token)).toMatchObject({ legal_name: 'B', time_zone: 'Asia/Tokyo' });
      expect(((await readSettings(b.token)).numbering as { invoice: Body }).invoice).toEqual(
        DEFAULTS.numbering.invoice,
      );
      expect(await readSettings(untouched.token)).toEqual(DEFAULTS);
      expect(await updates(untouched.token)).toEqual([]);
    });
  });
});
