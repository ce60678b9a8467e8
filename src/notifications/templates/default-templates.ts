import type { NotificationKind } from '../kinds';
import type { NotificationTemplate } from './template-renderer';

/**
 * The templates every tenant starts with, one per kind (a tenant's own template for a kind replaces it). Each names
 * only its kind's variables (the spec beside this file checks it with templateProblems) and leaves out the sentence of
 * an optional one that is empty. A section tag alone on its line takes the line with it, so the text part keeps its
 * layout whichever sections are skipped.
 */

const GREETING_TEXT = 'Dear {{subscriber.name}},\n\n';

const SIGNATURE_TEXT = `
Kind regards,
{{tenant.name}}
{{#tenant.email}}
{{tenant.email}}
{{/tenant.email}}
{{#tenant.phone}}
{{tenant.phone}}
{{/tenant.phone}}
{{#tenant.website}}
{{tenant.website}}
{{/tenant.website}}
`;

const HOW_TO_PAY_TEXT = `{{#how_to_pay}}

How to pay:
{{how_to_pay}}
{{/how_to_pay}}
`;

const HOW_TO_PAY_HTML = `{{#how_to_pay}}
<p><strong>How to pay:</strong></p>
<p style="white-space: pre-line;">{{how_to_pay}}</p>
{{/how_to_pay}}
`;

/** The text part: greeting, `body`, a blank line, signature. */
function text(body: string): string {
  return `${GREETING_TEXT}${body.replace(/\n*$/, '\n')}${SIGNATURE_TEXT}`;
}

/** The HTML part: a plain page (inline styles only, what mail clients keep) with greeting, `body`, signature. */
function html(body: string): string {
  return `<!DOCTYPE html>
<html>
<head><meta charset="utf-8"></head>
<body style="font-family: Arial, Helvetica, sans-serif; font-size: 14px; line-height: 1.5; color: #222222;">
<p>Dear {{subscriber.name}},</p>
${body}<p>Kind regards,<br>{{tenant.name}}{{#tenant.email}}<br>{{tenant.email}}{{/tenant.email}}{{#tenant.phone}}<br>{{tenant.phone}}{{/tenant.phone}}{{#tenant.website}}<br>{{tenant.website}}{{/tenant.website}}</p>
</body>
</html>
`;
}

const invoiceIssued: NotificationTemplate = {
  subject: 'Invoice {{invoice.number}} from {{tenant.name}}',
  text: text(`Your invoice {{invoice.number}} of {{invoice.total}} was issued on {{invoice.issue_date}}. You will find it attached as a PDF.

Amount due: {{invoice.amount_due}}
Due date: {{invoice.due_date}}
${HOW_TO_PAY_TEXT}`),
  html: html(`<p>Your invoice <strong>{{invoice.number}}</strong> of {{invoice.total}} was issued on {{invoice.issue_date}}. You will find it attached as a PDF.</p>
<p>Amount due: <strong>{{invoice.amount_due}}</strong><br>Due date: {{invoice.due_date}}</p>
${HOW_TO_PAY_HTML}`),
};

const paymentReceived: NotificationTemplate = {
  subject: 'Payment received: {{payment.amount}}',
  text: text(`Thank you: we received your payment of {{payment.amount}} on {{payment.date}}.
{{#payment.method}}
Method: {{payment.method}}
{{/payment.method}}
{{#payment.reference}}
Reference: {{payment.reference}}
{{/payment.reference}}

Please keep this message as your receipt.
`),
  html: html(`<p>Thank you: we received your payment of <strong>{{payment.amount}}</strong> on {{payment.date}}.</p>
{{#payment.method}}
<p>Method: {{payment.method}}</p>
{{/payment.method}}
{{#payment.reference}}
<p>Reference: {{payment.reference}}</p>
{{/payment.reference}}
<p>Please keep this message as your receipt.</p>
`),
};

const creditNoteIssued: NotificationTemplate = {
  subject: 'Credit note {{credit_note.number}} from {{tenant.name}}',
  text: text(`We issued credit note {{credit_note.number}} of {{credit_note.total}} on {{credit_note.date}}, against invoice {{invoice.number}}. You will find it attached as a PDF.

Reason: {{credit_note.reason}}
`),
  html: html(`<p>We issued credit note <strong>{{credit_note.number}}</strong> of {{credit_note.total}} on {{credit_note.date}}, against invoice {{invoice.number}}. You will find it attached as a PDF.</p>
<p>Reason: {{credit_note.reason}}</p>
`),
};

const invoiceReminder: NotificationTemplate = {
  subject: 'Payment reminder: invoice {{invoice.number}}',
  text: text(`{{#reminder.before_due}}
This is a friendly reminder that invoice {{invoice.number}} is due on {{invoice.due_date}}.
{{/reminder.before_due}}
{{#reminder.due_today}}
This is a friendly reminder that invoice {{invoice.number}} is due today, {{invoice.due_date}}.
{{/reminder.due_today}}
{{#reminder.overdue}}
Invoice {{invoice.number}} was due on {{invoice.due_date}} and has not been paid in full yet.
{{/reminder.overdue}}

Amount still owed: {{invoice.amount_due}} (invoice total: {{invoice.total}})
${HOW_TO_PAY_TEXT}
If you have already paid, please disregard this message.
`),
  html: html(`{{#reminder.before_due}}
<p>This is a friendly reminder that invoice <strong>{{invoice.number}}</strong> is due on {{invoice.due_date}}.</p>
{{/reminder.before_due}}
{{#reminder.due_today}}
<p>This is a friendly reminder that invoice <strong>{{invoice.number}}</strong> is due today, {{invoice.due_date}}.</p>
{{/reminder.due_today}}
{{#reminder.overdue}}
<p>Invoice <strong>{{invoice.number}}</strong> was due on {{invoice.due_date}} and has not been paid in full yet.</p>
{{/reminder.overdue}}
<p>Amount still owed: <strong>{{invoice.amount_due}}</strong> (invoice total: {{invoice.total}})</p>
${HOW_TO_PAY_HTML}<p>If you have already paid, please disregard this message.</p>
`),
};

const suspendedForNonPayment: NotificationTemplate = {
  subject: 'Your service has been suspended',
  text: text(`Your internet service was suspended on {{suspension.date}} because of unpaid invoices.

Amount owed: {{balance.amount_owed}}

Your service will be restored once the overdue amount is paid.
${HOW_TO_PAY_TEXT}`),
  html: html(`<p>Your internet service was suspended on {{suspension.date}} because of unpaid invoices.</p>
<p>Amount owed: <strong>{{balance.amount_owed}}</strong></p>
<p>Your service will be restored once the overdue amount is paid.</p>
${HOW_TO_PAY_HTML}`),
};

const serviceRestored: NotificationTemplate = {
  subject: 'Your service has been restored',
  text: text(`Your internet service was restored on {{restoration.date}}.

Thank you for being a customer of {{tenant.name}}.
`),
  html: html(`<p>Your internet service was restored on {{restoration.date}}.</p>
<p>Thank you for being a customer of {{tenant.name}}.</p>
`),
};

const serviceActivated: NotificationTemplate = {
  subject: 'Your {{service.plan_name}} service is active',
  text: text(`Your {{service.plan_name}} service was activated on {{service.activation_date}}.
{{#service.installation_address}}
Installation address: {{service.installation_address}}
{{/service.installation_address}}

Configure your router with this PPPoE username:
{{service.username}}

For your security, your password is never sent by email. If you do not have it, please contact us.
`),
  html: html(`<p>Your {{service.plan_name}} service was activated on {{service.activation_date}}.</p>
{{#service.installation_address}}
<p>Installation address: {{service.installation_address}}</p>
{{/service.installation_address}}
<p>Configure your router with this PPPoE username:<br><strong>{{service.username}}</strong></p>
<p>For your security, your password is never sent by email. If you do not have it, please contact us.</p>
`),
};

const ticketReply: NotificationTemplate = {
  subject: 'Re: [Ticket #{{ticket.number}}] {{ticket.subject}}',
  text: text(`There is a new reply to your ticket #{{ticket.number}} "{{ticket.subject}}"{{#comment.author}} from {{comment.author}}{{/comment.author}}, on {{comment.date}}:

{{comment.body}}
`),
  html: html(`<p>There is a new reply to your ticket #{{ticket.number}} "{{ticket.subject}}"{{#comment.author}} from {{comment.author}}{{/comment.author}}, on {{comment.date}}:</p>
<blockquote style="margin: 0 0 1em 0; padding-left: 1em; border-left: 3px solid #cccccc; white-space: pre-line;">{{comment.body}}</blockquote>
`),
};

const portalInvite: NotificationTemplate = {
  subject: 'Your access to the {{tenant.name}} customer portal',
  text: text(`You are invited to the {{tenant.name}} customer portal, where you can see your invoices, services and tickets.
{{#portal.link}}

Open this link to sign in:
{{portal.link}}
{{/portal.link}}

Your invite code: {{portal.code}}

The invite works once, until {{portal.expiry_date}}. If you did not expect it, you can ignore this message.
`),
  html: html(`<p>You are invited to the {{tenant.name}} customer portal, where you can see your invoices, services and tickets.</p>
{{#portal.link}}
<p><a href="{{portal.link}}">Sign in to the portal</a></p>
{{/portal.link}}
<p>Your invite code: <strong>{{portal.code}}</strong></p>
<p>The invite works once, until {{portal.expiry_date}}. If you did not expect it, you can ignore this message.</p>
`),
};

const portalSignInCode: NotificationTemplate = {
  subject: 'Your sign-in code for {{tenant.name}}',
  text: text(`Your code to sign in to the {{tenant.name}} customer portal:

{{portal.code}}

It works once, within {{portal.valid_minutes}} minutes.{{#portal.link}} Enter it at {{portal.link}}{{/portal.link}}
If you did not ask for it, you can ignore this message: nobody can sign in without the code.
`),
  html: html(`<p>Your code to sign in to the {{tenant.name}} customer portal:</p>
<p style="font-size: 24px; letter-spacing: 4px;"><strong>{{portal.code}}</strong></p>
<p>It works once, within {{portal.valid_minutes}} minutes.{{#portal.link}} Enter it at <a href="{{portal.link}}">{{portal.link}}</a>.{{/portal.link}}</p>
<p>If you did not ask for it, you can ignore this message: nobody can sign in without the code.</p>
`),
};

export const DEFAULT_TEMPLATES: Readonly<Record<NotificationKind, NotificationTemplate>> = {
  invoice_issued: invoiceIssued,
  payment_received: paymentReceived,
  credit_note_issued: creditNoteIssued,
  invoice_reminder: invoiceReminder,
  suspended_for_non_payment: suspendedForNonPayment,
  service_restored: serviceRestored,
  service_activated: serviceActivated,
  ticket_reply: ticketReply,
  portal_invite: portalInvite,
  portal_sign_in_code: portalSignInCode,
};
