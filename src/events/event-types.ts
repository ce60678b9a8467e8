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
  'subscriber.created': 'A subscriber was created.',
  'subscriber.updated': 'A subscriber was changed; data.changed_fields names the fields.',
  'subscriber.status_changed': 'A subscriber moved between states; data holds from, to and reason.',
  'billing_profile.created': 'A billing profile was created.',
  'billing_profile.updated': 'A billing profile was changed.',
  'invoice.created': 'An invoice was created (as draft or open).',
  'invoice.finalized': 'An invoice was issued: it left draft, or was created open.',
  'invoice.paid': 'An invoice was paid in full (amount_due reached 0).',
  'invoice.voided': 'An invoice was voided.',
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
  'webhook.created': 'A webhook subscription was registered.',
  'webhook.updated':
    'A webhook subscription was changed through the API (url, events, description or enabled).',
  'webhook.deleted': 'A webhook subscription was deleted.',
  'webhook.secret_rotated': 'A webhook signing secret was rotated (the secret is never in the event).',
  'webhook.test': 'A test ping, sent by POST /webhooks/{id}/test to that endpoint alone.',
} as const satisfies Record<string, string>;

export type EventType = keyof typeof EVENT_TYPES;

/** Every pattern a webhook may subscribe with: each type, each dotted prefix of one with `.*`, and `*`. */
const EVENT_PATTERNS: ReadonlySet<string> = new Set(
  (Object.keys(EVENT_TYPES) as EventType[]).flatMap((type) => patternsFor(type)),
);

export function isEventPattern(pattern: string): boolean {
  return EVENT_PATTERNS.has(pattern);
}
