import type { EventType } from '../events';
import { NOTIFICATION_KINDS, type NotificationKind } from '../common/notification-kinds';

/**
 * The notifications a subscriber is sent (issue 31, item 2): what triggers each, whether the subscriber may switch it
 * off, and the variables its templates may use. The worker, the preferences and the template checks all read this one
 * table, so a kind or a variable is added here first (a kind's name goes into src/common/notification-kinds.ts, which
 * the tenant settings read too).
 */
export { isNotificationKind, NOTIFICATION_KINDS, type NotificationKind } from '../common/notification-kinds';

/**
 * How a variable's value is written: `money` and `date` are formatted for the tenant's locale (and time zone) by
 * notification-context.ts; `flag` is true or empty, for a `{{#section}}`; `multiline` keeps its line breaks.
 */
export type VariableType = 'text' | 'multiline' | 'money' | 'date' | 'number' | 'flag';

export interface VariableSpec {
  type: VariableType;
  description: string;
  /** May be empty (a null field): a template shows it inside `{{#name}}…{{/name}}` to leave its sentence out. */
  optional?: true;
}

/** Every variable a template may name, by its dotted path in the view. */
export const TEMPLATE_VARIABLES = {
  'subscriber.name': { type: 'text', description: "The subscriber's full name (full_name)." },
  'subscriber.email': { type: 'text', description: 'The address the notification is sent to.' },
  'tenant.name': {
    type: 'text',
    description: "The tenant's name (its legal name when the settings give one).",
  },
  'tenant.email': { type: 'text', optional: true, description: "The tenant's contact email (settings)." },
  'tenant.phone': { type: 'text', optional: true, description: "The tenant's contact phone (settings)." },
  'tenant.website': { type: 'text', optional: true, description: "The tenant's website (settings)." },
  how_to_pay: {
    type: 'multiline',
    optional: true,
    description: "The tenant's payment_instructions (settings): bank account, reference to quote.",
  },
  'invoice.number': { type: 'text', description: "The invoice's document number (INV-2026-000042)." },
  'invoice.total': { type: 'money', description: 'What the invoice owes, tax included (total).' },
  'invoice.amount_due': {
    type: 'money',
    description:
      'What is still owed on it: amount_due; on a reminder, the amount the reminder event gives (less money received and not yet applied).',
  },
  'invoice.due_date': { type: 'date', description: 'Its due date.' },
  'invoice.issue_date': { type: 'date', description: 'When it was issued (finalized_at).' },
  'payment.amount': { type: 'money', description: 'The amount received.' },
  'payment.date': { type: 'date', description: 'When the money moved (occurred_at).' },
  'payment.method': {
    type: 'text',
    optional: true,
    description: 'How it was paid (card, cash…), as recorded.',
  },
  'payment.reference': { type: 'text', optional: true, description: 'Its reference (a bank reference).' },
  'credit_note.number': { type: 'text', description: "The credit note's document number." },
  'credit_note.total': { type: 'money', description: 'What it credits, tax included.' },
  'credit_note.reason': { type: 'text', description: 'Why it was issued, as printed on it.' },
  'credit_note.date': { type: 'date', description: 'When it was issued.' },
  'reminder.days': {
    type: 'number',
    description: 'How many days before or after the due date the reminder is for (0 on the due date).',
  },
  'reminder.before_due': { type: 'flag', description: 'Set when the due date is still ahead.' },
  'reminder.due_today': { type: 'flag', description: 'Set on the due date.' },
  'reminder.overdue': { type: 'flag', description: 'Set once the due date has passed.' },
  'balance.amount_owed': {
    type: 'money',
    description: 'What the subscriber owes, per currency ("49,99 €, 10,00 US$" when more than one).',
  },
  'suspension.date': { type: 'date', description: 'When the subscriber was suspended.' },
  'restoration.date': { type: 'date', description: 'When the subscriber was made active again.' },
  'service.username': {
    type: 'text',
    description:
      'The PPPoE login to configure in the router: radius_username, `<tenant slug>/<pppoe_username>` (docs/network.md). Never the password.',
  },
  'service.plan_name': { type: 'text', description: "The name of the service's plan." },
  'service.installation_address': { type: 'text', optional: true, description: 'Where it is installed.' },
  'service.activation_date': { type: 'date', description: 'When it became active (activated_at).' },
  'ticket.number': { type: 'number', description: "The ticket's number." },
  'ticket.subject': { type: 'text', description: "The ticket's subject." },
  'comment.body': { type: 'multiline', description: 'The public reply.' },
  'comment.author': { type: 'text', optional: true, description: 'Who wrote it, as recorded.' },
  'comment.date': { type: 'date', description: 'When it was written.' },
  'portal.code': {
    type: 'text',
    description:
      'The one-time code (an invite code ipi_…, or six digits to sign in with), minted when the message is sent. Never allowed in the subject.',
  },
  'portal.link': {
    type: 'text',
    optional: true,
    description:
      'The portal page (PORTAL_URL): for an invite with ?invite=<code>. Empty when PORTAL_URL is unset. Never allowed in the subject.',
  },
  'portal.expiry_date': { type: 'date', description: 'The last day the invite signs in (expires_at).' },
  'portal.valid_minutes': { type: 'number', description: 'How many minutes the sign-in code is valid.' },
} as const satisfies Record<string, VariableSpec>;

export type TemplateVariable = keyof typeof TEMPLATE_VARIABLES;

export interface NotificationTrigger {
  /** The event whose record the notification is built from. */
  event: EventType;
  /** Which of those events send it, in words (the worker holds the test). */
  when: string;
}

export interface NotificationKindSpec {
  description: string;
  /**
   * A legal notice: sent whatever the subscriber's notification_preferences say. Invoices and credit notes are tax
   * documents the issuer has to deliver, so they cannot be switched off; every other kind is a courtesy the
   * subscriber may decline.
   */
  legalNotice: boolean;
  /**
   * Sign-in mail the subscriber (or its operator) asked for, carrying a one-time secret: like a legal notice it is
   * sent whatever the preferences say (declining it would only lock the subscriber out).
   */
  access?: true;
  trigger: NotificationTrigger;
  /** The variables its templates may name: the common ones and its own. */
  variables: readonly TemplateVariable[];
}

const COMMON = [
  'subscriber.name',
  'subscriber.email',
  'tenant.name',
  'tenant.email',
  'tenant.phone',
  'tenant.website',
] as const satisfies readonly TemplateVariable[];

const INVOICE = [
  'invoice.number',
  'invoice.total',
  'invoice.amount_due',
  'invoice.due_date',
] as const satisfies readonly TemplateVariable[];

export const NOTIFICATION_KIND_SPECS: Readonly<Record<NotificationKind, NotificationKindSpec>> = {
  invoice_issued: {
    description: 'An invoice was issued; its PDF is attached.',
    legalNotice: true,
    trigger: { event: 'invoice.finalized', when: 'Every one (the invoice left draft, or was created open).' },
    variables: [...COMMON, ...INVOICE, 'invoice.issue_date', 'how_to_pay'],
  },
  payment_received: {
    // A receipt confirms money already recorded on the account (statements and the invoice's status carry the legal
    // record), so a subscriber paying by direct debit every month may turn it off.
    description: 'A receipt for a payment.',
    legalNotice: false,
    trigger: {
      event: 'transaction.created',
      when: 'Of kind payment. Not transaction.allocated: a payment is allocated again and again, and a receipt is sent once per payment.',
    },
    variables: [...COMMON, 'payment.amount', 'payment.date', 'payment.method', 'payment.reference'],
  },
  credit_note_issued: {
    description: 'A credit note was issued against an invoice; its PDF is attached.',
    legalNotice: true,
    trigger: { event: 'credit_note.created', when: 'Every one.' },
    variables: [
      ...COMMON,
      'credit_note.number',
      'credit_note.total',
      'credit_note.reason',
      'credit_note.date',
      'invoice.number',
    ],
  },
  invoice_reminder: {
    description: 'A payment reminder, before or after the due date.',
    legalNotice: false,
    trigger: {
      event: 'invoice.reminder',
      when: 'Every one (the invoice_reminders rule sends one per invoice and offset); data.offset_days and data.amount_due fill reminder.* and invoice.amount_due.',
    },
    variables: [
      ...COMMON,
      ...INVOICE,
      'reminder.days',
      'reminder.before_due',
      'reminder.due_today',
      'reminder.overdue',
      'how_to_pay',
    ],
  },
  suspended_for_non_payment: {
    description: 'The subscriber was suspended for non-payment: what is owed and how to pay.',
    legalNotice: false,
    trigger: {
      event: 'subscriber.status_changed',
      when: 'data.to suspended with data.reason non_payment (the overdue_invoices rule, or an operator giving that reason). Not service.suspended: that is one per service, and comes only once the network order completes.',
    },
    variables: [...COMMON, 'balance.amount_owed', 'suspension.date', 'how_to_pay'],
  },
  service_restored: {
    description: 'A subscriber suspended for non-payment is active again.',
    legalNotice: false,
    trigger: {
      event: 'subscriber.status_changed',
      when: 'data.from suspended and data.to active, ending a suspension for non_payment (the latest move into suspended before it, as the reconnection_fee rule reads it in src/automation/fee-rules.ts): the pair of suspended_for_non_payment. Not service.resumed, one per service.',
    },
    variables: [...COMMON, 'restoration.date'],
  },
  service_activated: {
    description: 'A service became active: its PPPoE login, never its password.',
    legalNotice: false,
    trigger: { event: 'service.activated', when: 'Every one (its activate order completed).' },
    variables: [
      ...COMMON,
      'service.username',
      'service.plan_name',
      'service.installation_address',
      'service.activation_date',
    ],
  },
  ticket_reply: {
    description: "A public reply on one of the subscriber's tickets.",
    legalNotice: false,
    trigger: {
      event: 'ticket.comment_added',
      when: "data.object.public true and author_type not subscriber (the subscriber's own words are not sent back), on a ticket that has a subscriber_id. An internal comment's body is null in the event and is never sent.",
    },
    variables: [
      ...COMMON,
      'ticket.number',
      'ticket.subject',
      'comment.body',
      'comment.author',
      'comment.date',
    ],
  },
  portal_invite: {
    description: 'An invite to the portal an operator sent by email: its one-time link and code.',
    legalNotice: false,
    access: true,
    trigger: {
      event: 'portal.invite_created',
      when: 'data.object.delivery email (POST /subscribers/{id}/portal-invites with delivery email); a link invite is handed to the operator instead. The code is minted when the message is sent: the event never holds it.',
    },
    variables: [...COMMON, 'portal.code', 'portal.link', 'portal.expiry_date'],
  },
  portal_sign_in_code: {
    description: "A six-digit code to sign in to the portal, asked for with the subscriber's email.",
    legalNotice: false,
    access: true,
    trigger: {
      event: 'portal.sign_in_code_requested',
      when: 'Every one (POST /portal/sign-in-codes for an email a live subscriber has). The code is minted when the message is sent: the event never holds it.',
    },
    variables: [...COMMON, 'portal.code', 'portal.link', 'portal.valid_minutes'],
  },
};

/** The variables that carry a one-time secret: refused in a subject, which the notification log keeps. */
export const SECRET_VARIABLES: readonly TemplateVariable[] = ['portal.code', 'portal.link'];

/** Whether the subscriber cannot decline the kind: a legal notice, or the portal's sign-in mail. */
export function alwaysSent(kind: NotificationKind): boolean {
  const spec = NOTIFICATION_KIND_SPECS[kind];
  return spec.legalNotice || spec.access === true;
}

/** The kinds a subscriber's notification_preferences may switch off. */
export const SWITCHABLE_KINDS: readonly NotificationKind[] = NOTIFICATION_KINDS.filter(
  (kind) => !alwaysSent(kind),
);
