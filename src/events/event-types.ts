import { patternsFor } from './new-event';

/**
 * Every event type the service emits, with a one-line description: the one list that NewEvent's `type` is typed by
 * (so a new type cannot be emitted without being listed), that webhook patterns are checked against, and that
 * GET /api/v1/event-types answers.
 */
export const EVENT_TYPES = {
  'tenant.created': 'A tenant was created.',
  'token.created': 'An API token was issued (the secret is never in the event).',
  'token.revoked': 'An API token was revoked.',
  'portal.invite_created':
    'A one-time portal invite was made for a subscriber (docs/portal.md); its code is never in the event.',
  'portal.sign_in_code_requested':
    'A one-time sign-in code was requested for a subscriber by email (docs/portal.md); the code is minted when the mail is sent and is never in the event.',
  'portal.signed_in':
    'A subscriber signed in to the portal: a portal session began (its token is never in the event).',
  'portal.session_revoked':
    'A portal session was ended: signed out by the subscriber, or revoked by an operator (actor says which).',
  'test_clock.created': 'A test clock was created, with the test tenant it governs (docs/test-clocks.md).',
  'test_clock.advancing': 'A test clock started advancing to data.object.advance_to.',
  'test_clock.ready':
    "A test clock's advance finished: everything due up to its frozen_time was carried out (the end of an advance).",
  'test_clock.internal_failure': 'A test clock stopped advancing on an error; it can no longer advance.',
  'test_clock.deleted':
    'A test clock was deleted, and with it its test tenant and every record of that tenant (docs/test-clocks.md).',
  'tenant_settings.updated':
    "The tenant's issuer details or numbering series (GET /tenant/settings) were changed; data.changed_fields names the fields.",
  'subscriber.created': 'A subscriber was created.',
  'subscriber.updated': 'A subscriber was changed; data.changed_fields names the fields.',
  'subscriber.status_changed': 'A subscriber moved between states; data holds from, to and reason.',
  'billing_profile.created': 'A billing profile was created.',
  'billing_profile.updated': 'A billing profile was changed.',
  'tax_rate.created': 'A tax rate was created.',
  'tax_rate.updated': 'A tax rate was changed or archived; data.changed_fields names the fields.',
  'invoice.created': 'An invoice was created (as draft or open).',
  'invoice.finalized': 'An invoice was issued: it left draft, or was created open.',
  'invoice.paid': 'An invoice was paid in full (amount_due reached 0).',
  'invoice.voided': 'An invoice was voided.',
  'credit_note.created':
    'A credit note was issued against an invoice; data.object.credit_transaction_id is the credit that carries its value.',
  'invoice.written_off':
    'What an invoice still asked was written off as uncollectable (data.object.amount_written_off); it is owed no more.',
  'invoice.overdue':
    'An invoice is still owed past its due date (sent once per invoice by the overdue_invoices automation rule).',
  'invoice.reminder':
    'A payment reminder: the invoice is still owed on due_date + data.offset_days (data.amount_due after money not yet applied); sent once per invoice and offset by the invoice_reminders automation rule.',
  'billing_run.completed': 'A bill run finished; data.object holds its totals and errors.',
  'billing_run.failed': 'A bill run stopped on an error it could not report per subscriber.',
  'import.completed':
    'An import went through all its rows; data.object holds its figures (refused rows at /imports/{id}/errors).',
  'import.failed':
    'An import stopped on an error it could not report per row; the rows done before it stay done.',
  'automation_rule.updated': 'An automation rule was enabled or disabled for the tenant.',
  'charge.created':
    'A pending charge was recorded (by the API, a debit, a fee, or a termination settling its prepaid days); the next invoice carries it.',
  'charge.deleted': 'A pending charge was deleted before any invoice carried it.',
  'transaction.created': 'A payment, credit, debit or refund was recorded.',
  'transaction.allocated': 'A payment or credit was applied to invoices or to the balance.',
  'transaction.refunded': 'A payment was refunded, in part or in full.',
  'ticket.created': 'A support ticket was opened.',
  'ticket.updated': 'A ticket was changed (not its status); data.changed_fields names the fields.',
  'ticket.status_changed':
    'A ticket moved in its workflow; data holds from, to and reason (customer_replied when a reply reopened it).',
  'ticket.comment_added':
    'A comment was added to a ticket; data.object is the comment, whose body is null when it is internal.',
  'ticket_settings.updated': "The tenant's ticket SLA (hours per priority) was changed.",
  'service_plan.created': 'A service plan was created.',
  'service_plan.updated': 'A service plan was changed; data.changed_fields names the fields.',
  'service.created': 'A service was ordered for a subscriber (pending until its activate order completes).',
  'service.updated':
    "A service's fields were changed; data.changed_fields names them (the password is never in an event).",
  'service.activated': 'A service became active: its activate order completed.',
  'service.suspended': 'A service was suspended: its suspend order completed.',
  'service.resumed': 'A suspended service became active again: its resume order completed.',
  'service.plan_changed': 'A service moved to another plan: its change_plan order completed.',
  'service.terminated': 'A service was terminated: its terminate order completed.',
  'service.cap_warning':
    "A service used 80 % of its data cap (with the period's top-ups) this billing period; once per period. data.object is its data cap state.",
  'service.cap_reached':
    'A service reached its data cap this billing period: a cap_throttle or cap_block order throttles or blocks it (data.order_id). data.object is its data cap state.',
  'service.cap_restored':
    'A throttled or blocked service is restored (a new billing period, a top-up, or a plan without a cap): a cap_restore order (data.order_id).',
  'service.cap_topped_up':
    "Bytes were added to a service's data cap for this billing period; data.object is the top-up.",
  'provisioning_order.created': 'A provisioning order was acknowledged.',
  'provisioning_order.completed': 'A provisioning order reached the network and completed.',
  'provisioning_order.failed': 'A provisioning order failed for good; data.object.last_error says why.',
  'provisioning_order.cancelled': 'A provisioning order was cancelled before the worker took it.',
  'nas.created':
    "A NAS was registered (and written to FreeRADIUS's nas table); its secret is never in an event.",
  'nas.updated': 'A NAS was changed; data.changed_fields names the fields (`secret` when it was replaced).',
  'nas.deleted': "A NAS was removed from the registry and from FreeRADIUS's nas table.",
  'ip_pool.created':
    'An IP pool was created; a static IPv4 pool adopting live services’ addresses emits service.updated for each.',
  'ip_pool.updated': 'An IP pool was changed; data.changed_fields names the fields.',
  'ip_pool.deleted': 'An IP pool was deleted (it held no address and no live service was linked to it).',
  'network_settings.updated':
    "The tenant's suspension mode or walled garden (GET /network-settings) was changed; data.changed_fields names the fields.",
  'webhook.created': 'A webhook subscription was registered.',
  'webhook.updated':
    'A webhook subscription was changed through the API (url, events, description or enabled).',
  'webhook.deleted': 'A webhook subscription was deleted.',
  'webhook.secret_rotated': 'A webhook signing secret was rotated (the secret is never in the event).',
  'webhook.test': 'A test ping, sent by POST /webhooks/{id}/test to that endpoint alone.',
  'notification.sent': "A notification's message was taken by the mail server (data.object.message_id).",
  'notification.failed':
    'A notification will not be sent: the mail server refused it for good (5xx), or every retry failed; data.object.reason says why.',
  'notification_template.updated':
    "A tenant's template of a kind was saved (PUT /notification-templates/{kind}).",
  'notification_template.deleted':
    "A tenant's template of a kind was removed: the shipped default applies again.",
  'notification_preferences.updated':
    "A subscriber's notification preferences were changed; data.changed_fields names the kinds.",
} as const satisfies Record<string, string>;

export type EventType = keyof typeof EVENT_TYPES;

/** Every pattern a webhook may subscribe with: each type, each dotted prefix of one with `.*`, and `*`. */
const EVENT_PATTERNS: ReadonlySet<string> = new Set(
  (Object.keys(EVENT_TYPES) as EventType[]).flatMap((type) => patternsFor(type)),
);

export function isEventPattern(pattern: string): boolean {
  return EVENT_PATTERNS.has(pattern);
}
