import { formatDocumentDate, formatMoney } from '../../common/intl-format';
import { NOTIFICATION_KIND_SPECS, type NotificationKind, type TemplateVariable } from '../kinds';

/**
 * The view a notification's templates are rendered with, built from plain records (the field names of the API's
 * answers and events, so an event's data.object or a DTO passes as it is) and the tenant's locale and time zone.
 * Amounts and dates are formatted here, once: a template only places them. Nothing here reads the clock: every date
 * comes from a record.
 */

/** The tenant as an issuer: the fields of gateway's TenantIssuerRow that mails use. */
export interface TenantRecord {
  tenant_name: string;
  legal_name: string | null;
  contact_email: string | null;
  contact_phone: string | null;
  contact_website: string | null;
  payment_instructions: string | null;
}

export interface SubscriberRecord {
  full_name: string;
  email: string | null;
}

export interface InvoiceRecord {
  number: string | null;
  currency: string;
  total: number;
  amount_due: number;
  /** YYYY-MM-DD. */
  due_date: string;
  finalized_at: string | null;
}

export interface PaymentRecord {
  amount: number;
  currency: string;
  occurred_at: string;
  method: string | null;
  reference: string | null;
}

export interface CreditNoteRecord {
  number: string;
  currency: string;
  total: number;
  reason: string;
  created_at: string;
}

export interface MoneyRecord {
  /** Integer minor units of `currency`. */
  amount: number;
  currency: string;
}

export interface ServiceRecord {
  radius_username: string;
  installation_address: string | null;
  activated_at: string | null;
}

export interface TicketRecord {
  number: number;
  subject: string;
}

export interface CommentRecord {
  body: string;
  author: string | null;
  created_at: string;
}

/**
 * The one-time secret of a portal mail: minted by the portal when the message is sent (never stored in clear), or a
 * placeholder in a preview.
 */
export interface PortalSecretRecord {
  code: string;
  link: string | null;
}

/** What each kind is about: the records its event (and the reads the worker makes for it) supply. */
export type KindRecords =
  | { kind: 'invoice_issued'; invoice: InvoiceRecord }
  | { kind: 'payment_received'; payment: PaymentRecord }
  | { kind: 'credit_note_issued'; credit_note: CreditNoteRecord; invoice: Pick<InvoiceRecord, 'number'> }
  | {
      kind: 'invoice_reminder';
      invoice: InvoiceRecord;
      /** The invoice.reminder event's data.offset_days and data.amount_due (what is really owed). */
      reminder: { offset_days: number; amount_due: number };
    }
  | { kind: 'suspended_for_non_payment'; owed: readonly MoneyRecord[]; suspended_at: string }
  | { kind: 'service_restored'; restored_at: string }
  | { kind: 'service_activated'; service: ServiceRecord; plan: { name: string } }
  | { kind: 'ticket_reply'; ticket: TicketRecord; comment: CommentRecord }
  | { kind: 'portal_invite'; portal: PortalSecretRecord; expires_at: string }
  | { kind: 'portal_sign_in_code'; portal: PortalSecretRecord; valid_minutes: number };

export interface NotificationRecords {
  tenant: TenantRecord;
  subscriber: SubscriberRecord;
  about: KindRecords;
}

/** How the tenant writes amounts and dates: its settings' locale (BCP 47) and time zone (IANA). */
export interface TenantFormat {
  locale: string;
  timeZone: string;
}

type Value = string | number | boolean | null;
type FlatView = Partial<Record<TemplateVariable, Value>>;
/** A view as mustache reads it: objects without a prototype, so no name reaches Object's own properties. */
export type NotificationView = { [name: string]: Value | NotificationView };

/**
 * An amount in minor units of `currency`, for `locale`, with ISO 4217's decimals (src/common/intl-format.ts): the
 * same text as the invoice's PDF. (123456, 'EUR', 'de-DE') → "1.234,56 €".
 */
export function formatAmount(minor: number, currency: string, locale: string): string {
  return formatMoney(minor, currency, locale);
}

/**
 * A date for the tenant: a calendar date (YYYY-MM-DD) as that very date, a timestamp as its date in the tenant's time
 * zone. ('2026-03-01T20:00:00Z', en-US, Pacific/Auckland) → "March 2, 2026".
 */
export function formatDate(value: string, { locale, timeZone }: TenantFormat): string {
  return formatDocumentDate(value, locale, timeZone, 'long');
}

function invoiceValues(invoice: InvoiceRecord, format: TenantFormat): FlatView {
  return {
    'invoice.number': invoice.number,
    'invoice.total': formatAmount(invoice.total, invoice.currency, format.locale),
    'invoice.amount_due': formatAmount(invoice.amount_due, invoice.currency, format.locale),
    'invoice.due_date': formatDate(invoice.due_date, format),
    'invoice.issue_date': invoice.finalized_at === null ? null : formatDate(invoice.finalized_at, format),
  };
}

/** The kind's own values; each builder names only variables of TEMPLATE_VARIABLES (the FlatView type holds it). */
function kindValues(about: KindRecords, format: TenantFormat): FlatView {
  const { locale } = format;
  switch (about.kind) {
    case 'invoice_issued':
      return invoiceValues(about.invoice, format);
    case 'payment_received':
      return {
        'payment.amount': formatAmount(about.payment.amount, about.payment.currency, locale),
        'payment.date': formatDate(about.payment.occurred_at, format),
        'payment.method': about.payment.method,
        'payment.reference': about.payment.reference,
      };
    case 'credit_note_issued':
      return {
        'credit_note.number': about.credit_note.number,
        'credit_note.total': formatAmount(about.credit_note.total, about.credit_note.currency, locale),
        'credit_note.reason': about.credit_note.reason,
        'credit_note.date': formatDate(about.credit_note.created_at, format),
        'invoice.number': about.invoice.number,
      };
    case 'invoice_reminder':
      return reminderValues(about.invoice, about.reminder, format);
    case 'suspended_for_non_payment':
      return {
        'balance.amount_owed': about.owed
          .map((owed) => formatAmount(owed.amount, owed.currency, locale))
          .join(', '),
        'suspension.date': formatDate(about.suspended_at, format),
      };
    case 'service_restored':
      return { 'restoration.date': formatDate(about.restored_at, format) };
    case 'service_activated':
      return {
        'service.username': about.service.radius_username,
        'service.plan_name': about.plan.name,
        'service.installation_address': about.service.installation_address,
        'service.activation_date':
          about.service.activated_at === null ? null : formatDate(about.service.activated_at, format),
      };
    case 'ticket_reply':
      return {
        'ticket.number': about.ticket.number,
        'ticket.subject': about.ticket.subject,
        'comment.body': about.comment.body,
        'comment.author': about.comment.author,
        'comment.date': formatDate(about.comment.created_at, format),
      };
    case 'portal_invite':
      return {
        'portal.code': about.portal.code,
        'portal.link': about.portal.link,
        'portal.expiry_date': formatDate(about.expires_at, format),
      };
    case 'portal_sign_in_code':
      return {
        'portal.code': about.portal.code,
        'portal.link': about.portal.link,
        'portal.valid_minutes': about.valid_minutes,
      };
  }
}

function reminderValues(
  invoice: InvoiceRecord,
  reminder: { offset_days: number; amount_due: number },
  format: TenantFormat,
): FlatView {
  const offset = reminder.offset_days;
  return {
    ...invoiceValues({ ...invoice, amount_due: reminder.amount_due }, format),
    'reminder.days': Math.abs(offset),
    // true or null: a flag is only ever read by a section, where both behave as mustache's truthy and falsy.
    'reminder.before_due': offset < 0 || null,
    'reminder.due_today': offset === 0 || null,
    'reminder.overdue': offset > 0 || null,
  };
}

function commonValues(records: NotificationRecords): FlatView {
  const { tenant, subscriber } = records;
  return {
    'subscriber.name': subscriber.full_name,
    'subscriber.email': subscriber.email,
    'tenant.name': tenant.legal_name ?? tenant.tenant_name,
    'tenant.email': tenant.contact_email,
    'tenant.phone': tenant.contact_phone,
    'tenant.website': tenant.contact_website,
    how_to_pay: tenant.payment_instructions,
  };
}

/** `{'invoice.number': 'X'}` → `{invoice: {number: 'X'}}`, keeping only `names`. */
function nest(flat: FlatView, names: readonly TemplateVariable[]): NotificationView {
  const view: NotificationView = Object.create(null) as NotificationView;
  for (const name of names) {
    const path = name.split('.');
    let at = view;
    for (const part of path.slice(0, -1)) {
      at[part] ??= Object.create(null) as NotificationView;
      at = at[part] as NotificationView;
    }
    at[path[path.length - 1]] = flat[name] ?? null;
  }
  return view;
}

/**
 * The view for one notification: every variable of its kind (NOTIFICATION_KIND_SPECS), formatted for the tenant, and
 * nothing else; a variable its records leave empty is null (mustache writes nothing, a section is skipped).
 */
export function notificationView(records: NotificationRecords, format: TenantFormat): NotificationView {
  const kind: NotificationKind = records.about.kind;
  const flat = { ...commonValues(records), ...kindValues(records.about, format) };
  return nest(flat, NOTIFICATION_KIND_SPECS[kind].variables);
}
