import { NOTIFICATION_KIND_SPECS, NOTIFICATION_KINDS, type NotificationKind } from '../kinds';
import { DEFAULT_TEMPLATES } from './default-templates';
import { type KindRecords, notificationView, type TenantRecord } from './notification-context';
import { renderNotification, templateProblems } from './template-renderer';

const HOSTILE_NAME = '<script>alert(1)</script>\r\nBcc: victim@example.com';

const FULL_TENANT: TenantRecord = {
  tenant_name: 'acme',
  legal_name: 'Acme Fiber, Lda.',
  contact_email: 'billing@acme-fiber.example',
  contact_phone: '+351 21 000 0000',
  contact_website: 'https://acme-fiber.example',
  payment_instructions: 'IBAN PT50 0002 0123\nQuote the invoice number.',
};
const BARE_TENANT: TenantRecord = {
  tenant_name: 'acme',
  legal_name: null,
  contact_email: null,
  contact_phone: null,
  contact_website: null,
  payment_instructions: null,
};

const INVOICE = {
  number: 'INV-2026-000042',
  currency: 'EUR',
  total: 6049,
  amount_due: 6049,
  due_date: '2026-12-15',
  finalized_at: '2026-12-01T10:00:00.000Z',
};

/** One record set per kind, as its event and the worker's reads would give them. */
const SAMPLES: Record<NotificationKind, KindRecords> = {
  invoice_issued: { kind: 'invoice_issued', invoice: INVOICE },
  payment_received: {
    kind: 'payment_received',
    payment: {
      amount: 6049,
      currency: 'EUR',
      occurred_at: '2026-12-03T10:00:00Z',
      method: 'card',
      reference: 'R-1',
    },
  },
  credit_note_issued: {
    kind: 'credit_note_issued',
    credit_note: {
      number: 'CN-2026-000001',
      currency: 'EUR',
      total: 1210,
      reason: 'Outage 3-5 December',
      created_at: '2026-12-05T10:00:00Z',
    },
    invoice: { number: INVOICE.number },
  },
  invoice_reminder: {
    kind: 'invoice_reminder',
    invoice: INVOICE,
    reminder: { offset_days: 7, amount_due: 6049 },
  },
  suspended_for_non_payment: {
    kind: 'suspended_for_non_payment',
    owed: [{ amount: 6049, currency: 'EUR' }],
    suspended_at: '2026-12-30T03:00:00Z',
  },
  service_restored: { kind: 'service_restored', restored_at: '2027-01-02T09:00:00Z' },
  service_activated: {
    kind: 'service_activated',
    service: {
      radius_username: 'acme-fiber/ada.lovelace',
      installation_address: '12 Fibre Lane, Springfield',
      activated_at: '2026-11-21T10:00:00Z',
    },
    plan: { name: 'Fiber 500' },
  },
  ticket_reply: {
    kind: 'ticket_reply',
    ticket: { number: 1042, subject: 'No internet\r\nsince this morning' },
    comment: {
      body: 'A technician comes\nat <b>14:00</b>.',
      author: 'noc.jane',
      created_at: '2026-12-02T10:00:00Z',
    },
  },
  portal_invite: {
    kind: 'portal_invite',
    portal: { code: 'ipi_SECRETCODE', link: 'https://portal.example/?invite=ipi_SECRETCODE' },
    expires_at: '2026-12-10T10:00:00Z',
  },
  portal_sign_in_code: {
    kind: 'portal_sign_in_code',
    portal: { code: '004217', link: null },
    valid_minutes: 10,
  },
};

function render(kind: NotificationKind, tenant: TenantRecord, name = 'Ada Lovelace') {
  const view = notificationView(
    { tenant, subscriber: { full_name: name, email: 'ada@example.com' }, about: SAMPLES[kind] },
    { locale: 'en-US', timeZone: 'Europe/Lisbon' },
  );
  return renderNotification(DEFAULT_TEMPLATES[kind], view);
}

describe('DEFAULT_TEMPLATES', () => {
  it('has one template for every kind', () => {
    expect(Object.keys(DEFAULT_TEMPLATES).sort()).toEqual([...NOTIFICATION_KINDS].sort());
  });

  describe.each(NOTIFICATION_KINDS)('%s', (kind) => {
    it('passes the checks a tenant template passes at save: only its kind variables', () => {
      expect(templateProblems(kind, DEFAULT_TEMPLATES[kind])).toEqual([]);
    });

    it('renders a subject, a text and an HTML page, with and without the optional settings', () => {
      for (const tenant of [FULL_TENANT, BARE_TENANT]) {
        const rendered = render(kind, tenant);
        expect(rendered.subject.length).toBeGreaterThan(0);
        expect(rendered.subject.length).toBeLessThanOrEqual(200);
        expect(rendered.text).toMatch(/^Dear Ada Lovelace,\n\n\S/);
        expect(rendered.text).toContain(`Kind regards,\n${tenant.legal_name ?? tenant.tenant_name}\n`);
        expect(rendered.text).not.toMatch(/\n\n\n/);
        expect(rendered.html).toMatch(/^<!DOCTYPE html>\n<html>[\s\S]*<\/html>\n$/);
        expect(`${rendered.subject}${rendered.text}${rendered.html}`).not.toMatch(/{{|}}|\[object Object]/);
      }
    });

    it('escapes a hostile name in the HTML, keeps it in the text, and keeps line breaks out of the subject', () => {
      const rendered = render(kind, FULL_TENANT, HOSTILE_NAME);
      expect(rendered.html).toContain('Dear &lt;script&gt;alert(1)&lt;&#x2F;script&gt;');
      expect(rendered.html).not.toContain('<script>');
      expect(rendered.text).toContain(`Dear ${HOSTILE_NAME},`);
      expect(rendered.subject).not.toMatch(/[\r\n]/);
    });
  });

  it('gives the amounts, dates and payment instructions of an invoice', () => {
    const rendered = render('invoice_issued', FULL_TENANT);
    expect(rendered.subject).toBe('Invoice INV-2026-000042 from Acme Fiber, Lda.');
    expect(rendered.text).toContain('Amount due: €60.49\nDue date: December 15, 2026\n');
    expect(rendered.text).toContain('How to pay:\nIBAN PT50 0002 0123\nQuote the invoice number.\n');
    expect(render('invoice_issued', BARE_TENANT).text).not.toContain('How to pay');
  });

  it('tells an overdue reminder from one before the due date', () => {
    expect(render('invoice_reminder', FULL_TENANT).text).toContain('was due on December 15, 2026');
    const early = notificationView(
      {
        tenant: FULL_TENANT,
        subscriber: { full_name: 'Ada', email: null },
        about: { kind: 'invoice_reminder', invoice: INVOICE, reminder: { offset_days: -3, amount_due: 100 } },
      },
      { locale: 'en-US', timeZone: 'UTC' },
    );
    const text = renderNotification(DEFAULT_TEMPLATES.invoice_reminder, early).text;
    expect(text).toContain('is due on December 15, 2026');
    expect(text).not.toContain('was due');
    expect(text).toContain('Amount still owed: €1.00');
  });

  it('gives the PPPoE login of a service, never a password', () => {
    const rendered = render('service_activated', FULL_TENANT);
    expect(rendered.text).toContain('\nacme-fiber/ada.lovelace\n');
    expect(NOTIFICATION_KIND_SPECS.service_activated.variables).not.toContain('service.password');
  });

  it("puts a portal mail's code and link in the text and HTML, never in the subject", () => {
    const invite = render('portal_invite', FULL_TENANT);
    expect(invite.text).toContain('https://portal.example/?invite=ipi_SECRETCODE');
    expect(invite.text).toContain('Your invite code: ipi_SECRETCODE');
    expect(invite.html).toContain('href="https:&#x2F;&#x2F;portal.example&#x2F;?invite&#x3D;ipi_SECRETCODE"');
    expect(invite.subject).not.toContain('SECRETCODE');
    const code = render('portal_sign_in_code', BARE_TENANT);
    expect(code.text).toContain('\n004217\n');
    expect(code.text).toContain('within 10 minutes.');
    expect(code.subject).not.toContain('004217');
  });

  it('puts a ticket subject with a line break on one subject line, and escapes the reply in HTML', () => {
    const rendered = render('ticket_reply', FULL_TENANT);
    expect(rendered.subject).toBe('Re: [Ticket #1042] No internet since this morning');
    expect(rendered.html).toContain('A technician comes\nat &lt;b&gt;14:00&lt;&#x2F;b&gt;.');
    expect(rendered.text).toContain('A technician comes\nat <b>14:00</b>.');
  });
});
