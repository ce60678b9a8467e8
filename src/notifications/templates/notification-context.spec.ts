import { NOTIFICATION_KIND_SPECS } from '../kinds';
import {
  formatAmount,
  formatDate,
  type InvoiceRecord,
  type KindRecords,
  notificationView,
  type NotificationView,
  type TenantRecord,
} from './notification-context';

/** Intl separates amount and symbol with a no-break space (U+00A0) or a narrow one (U+202F): compare them as spaces. */
const spaces = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

const TENANT: TenantRecord = {
  tenant_name: 'acme',
  legal_name: 'Acme Fiber, Lda.',
  contact_email: 'billing@acme-fiber.example',
  contact_phone: null,
  contact_website: null,
  payment_instructions: 'IBAN PT50 0002 0123\nQuote the invoice number.',
};
const SUBSCRIBER = { full_name: 'Ada Lovelace', email: 'ada@example.com' };
const INVOICE: InvoiceRecord = {
  number: 'INV-2026-000042',
  currency: 'EUR',
  total: 6049,
  amount_due: 2499,
  due_date: '2026-12-15',
  finalized_at: '2026-12-01T10:00:00.000Z',
};
const EN_UTC = { locale: 'en-US', timeZone: 'UTC' };

function view(about: KindRecords, format = EN_UTC): NotificationView {
  return notificationView({ tenant: TENANT, subscriber: SUBSCRIBER, about }, format);
}

/** The dotted names of a view's leaves. */
function leaves(value: NotificationView, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, child]) =>
    child !== null && typeof child === 'object' ? leaves(child, `${prefix}${key}.`) : [`${prefix}${key}`],
  );
}

describe('formatAmount', () => {
  it.each([
    [123456, 'EUR', 'en-US', '€1,234.56'],
    [123456, 'EUR', 'de-DE', '1.234,56 €'],
    [-5, 'EUR', 'de-DE', '-0,05 €'],
    [1234, 'JPY', 'en-US', '¥1,234'],
    [1234, 'JPY', 'de-DE', '1.234 ¥'],
    [30125, 'KWD', 'en-US', 'KWD 30.125'],
    [30125, 'KWD', 'de-DE', '30,125 KWD'],
    [0, 'KWD', 'en-US', 'KWD 0.000'],
    // ISO 4217's decimals, as the invoice's PDF prints them, where Intl's display digits differ (CLDR shows none).
    [12345, 'IQD', 'en-US', 'IQD 12.345'],
    [12345, 'HUF', 'en-US', 'HUF 123.45'],
  ])('%i %s in %s is %s', (minor, currency, locale, text) => {
    expect(spaces(formatAmount(minor, currency, locale))).toBe(text);
  });

  it('is exact past what a float holds in cents', () => {
    expect(formatAmount(Number.MAX_SAFE_INTEGER, 'EUR', 'en-US')).toBe('€90,071,992,547,409.91');
  });

  it('refuses what is not an amount in minor units', () => {
    expect(() => formatAmount(1.5, 'EUR', 'en-US')).toThrow(RangeError);
    expect(() => formatAmount(2 ** 60, 'EUR', 'en-US')).toThrow(RangeError);
  });
});

describe('formatDate', () => {
  // 20:00 UTC on 1 March is 09:00 on 2 March in Auckland (UTC+13) and 15:00 on 1 March in New York (UTC-5).
  const INSTANT = '2026-03-01T20:00:00.000Z';

  it.each([
    ['en-US', 'Pacific/Auckland', 'March 2, 2026'],
    ['en-US', 'America/New_York', 'March 1, 2026'],
    ['de-DE', 'Pacific/Auckland', '2. März 2026'],
    ['de-DE', 'America/New_York', '1. März 2026'],
  ])('a timestamp in %s, %s, is %s', (locale, timeZone, text) => {
    expect(formatDate(INSTANT, { locale, timeZone })).toBe(text);
  });

  it.each([
    ['en-US', 'Pacific/Auckland', 'December 15, 2026'],
    ['en-US', 'America/New_York', 'December 15, 2026'],
    ['de-DE', 'Pacific/Auckland', '15. Dezember 2026'],
    ['de-DE', 'America/New_York', '15. Dezember 2026'],
  ])('a calendar date is that day in any zone: %s, %s, %s', (locale, timeZone, text) => {
    expect(formatDate('2026-12-15', { locale, timeZone })).toBe(text);
  });

  it('refuses what is not a date', () => {
    expect(() => formatDate('next tuesday', EN_UTC)).toThrow(RangeError);
  });
});

describe('notificationView', () => {
  const samples: KindRecords[] = [
    { kind: 'invoice_issued', invoice: INVOICE },
    {
      kind: 'payment_received',
      payment: {
        amount: 5000,
        currency: 'JPY',
        occurred_at: '2026-12-03T10:00:00Z',
        method: null,
        reference: 'R1',
      },
    },
    {
      kind: 'credit_note_issued',
      credit_note: {
        number: 'CN-2026-000001',
        currency: 'KWD',
        total: 1210,
        reason: 'Outage',
        created_at: '2026-12-05T10:00:00.000Z',
      },
      invoice: { number: INVOICE.number },
    },
    { kind: 'invoice_reminder', invoice: INVOICE, reminder: { offset_days: 3, amount_due: 1000 } },
    {
      kind: 'suspended_for_non_payment',
      owed: [{ amount: 6049, currency: 'EUR' }],
      suspended_at: '2026-12-20',
    },
    { kind: 'service_restored', restored_at: '2026-12-21T08:00:00.000Z' },
    {
      kind: 'service_activated',
      service: {
        radius_username: 'acme/ada',
        installation_address: null,
        activated_at: '2026-12-01T09:00:00Z',
      },
      plan: { name: 'Fiber 500' },
    },
    {
      kind: 'ticket_reply',
      ticket: { number: 1042, subject: 'No internet' },
      comment: {
        body: 'A technician comes at 14:00.',
        author: 'noc.jane',
        created_at: '2026-12-02T10:00:00Z',
      },
    },
  ];

  it.each(samples.map((about) => [about.kind, about] as const))(
    '%s holds exactly its kind variables',
    (kind, about) => {
      expect(leaves(view(about)).sort()).toEqual([...NOTIFICATION_KIND_SPECS[kind].variables].sort());
    },
  );

  it('formats an invoice for the tenant', () => {
    const { invoice, tenant, subscriber, how_to_pay } = view(
      { kind: 'invoice_issued', invoice: INVOICE },
      {
        locale: 'de-DE',
        timeZone: 'Europe/Berlin',
      },
    ) as Record<string, NotificationView>;
    expect(invoice).toEqual({
      number: 'INV-2026-000042',
      total: '60,49\u00a0€',
      amount_due: '24,99\u00a0€',
      due_date: '15. Dezember 2026',
      issue_date: '1. Dezember 2026',
    });
    expect(tenant).toEqual({
      name: 'Acme Fiber, Lda.',
      email: 'billing@acme-fiber.example',
      phone: null,
      website: null,
    });
    expect(subscriber).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });
    expect(how_to_pay).toBe(TENANT.payment_instructions);
  });

  it('names the tenant by its name when the settings give no legal name', () => {
    const about: KindRecords = { kind: 'service_restored', restored_at: '2026-12-21' };
    const built = notificationView(
      { tenant: { ...TENANT, legal_name: null }, subscriber: SUBSCRIBER, about },
      EN_UTC,
    );
    expect((built.tenant as NotificationView).name).toBe('acme');
  });

  it.each([
    [-7, { days: 7, before_due: true, due_today: null, overdue: null }],
    [0, { days: 0, before_due: null, due_today: true, overdue: null }],
    [14, { days: 14, before_due: null, due_today: null, overdue: true }],
  ])('a reminder at offset %i says where the due date is', (offset, reminder) => {
    const built = view({
      kind: 'invoice_reminder',
      invoice: INVOICE,
      reminder: { offset_days: offset, amount_due: 1000 },
    });
    expect(built.reminder).toEqual(reminder);
    // What the reminder event says is still owed, not the invoice's amount_due.
    expect((built.invoice as NotificationView).amount_due).toBe('€10.00');
  });

  it('lists what is owed in each currency', () => {
    const built = view({
      kind: 'suspended_for_non_payment',
      owed: [
        { amount: 6049, currency: 'EUR' },
        { amount: 1500, currency: 'USD' },
      ],
      suspended_at: '2026-12-20T03:00:00Z',
    });
    expect(built.balance).toEqual({ amount_owed: '€60.49, $15.00' });
    expect(built.suspension).toEqual({ date: 'December 20, 2026' });
  });

  it('gives the PPPoE login, and nothing named like a password', () => {
    const built = view(samples[6]);
    expect(built.service).toEqual({
      username: 'acme/ada',
      plan_name: 'Fiber 500',
      installation_address: null,
      activation_date: 'December 1, 2026',
    });
    expect(JSON.stringify(built)).not.toMatch(/password/i);
  });

  it('is made of objects without a prototype, so no name reaches Object.prototype', () => {
    const built = view(samples[0]);
    expect(Object.getPrototypeOf(built)).toBeNull();
    expect(Object.getPrototypeOf(built.invoice)).toBeNull();
  });
});
