import type { NotificationKind } from '../kinds';

/** An event as the trigger reads it: its type and data (`object` and the details beside it). */
export interface TriggerEvent {
  type: string;
  data: { object?: unknown; [detail: string]: unknown };
}

/** The notification an event causes: its kind and, when the event names it, the subscriber it is for. */
export interface NotificationCause {
  kind: NotificationKind;
  /** Null for a ticket reply: the worker reads the ticket's subscriber. */
  subscriberId: string | null;
}

function field(object: unknown, name: string): unknown {
  return typeof object === 'object' && object !== null
    ? (object as Record<string, unknown>)[name]
    : undefined;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * The notification `event` causes, or null: the triggers of src/notifications/kinds.ts (NOTIFICATION_KIND_SPECS),
 * decided from the event alone, so the outbox fan-out writes the row in the event's own statement. What needs a read
 * (the tenant's switches, the subscriber's email and preferences, whether a restoration ends a suspension for
 * non-payment, a ticket's subscriber) is the worker's, which records a skipped notification with its reason.
 */
export function notificationFor(event: TriggerEvent): NotificationCause | null {
  const object = event.data.object;
  const subscriberOf = () => text(field(object, 'subscriber_id'));
  switch (event.type) {
    case 'invoice.finalized':
      return { kind: 'invoice_issued', subscriberId: subscriberOf() };
    case 'transaction.created':
      return field(object, 'kind') === 'payment'
        ? { kind: 'payment_received', subscriberId: subscriberOf() }
        : null;
    case 'credit_note.created':
      return { kind: 'credit_note_issued', subscriberId: subscriberOf() };
    case 'invoice.reminder':
      return { kind: 'invoice_reminder', subscriberId: subscriberOf() };
    case 'service.activated':
      return { kind: 'service_activated', subscriberId: subscriberOf() };
    case 'portal.invite_created':
      // An invite handed to the operator (delivery link) is mailed by no one.
      return field(object, 'delivery') === 'email'
        ? { kind: 'portal_invite', subscriberId: subscriberOf() }
        : null;
    case 'portal.sign_in_code_requested':
      return { kind: 'portal_sign_in_code', subscriberId: subscriberOf() };
    case 'subscriber.status_changed':
      return statusChange(event.data, text(field(object, 'id')));
    case 'ticket.comment_added':
      return field(object, 'public') === true && field(object, 'author_type') !== 'subscriber'
        ? { kind: 'ticket_reply', subscriberId: null }
        : null;
    default:
      return null;
  }
}

function statusChange(data: TriggerEvent['data'], subscriberId: string | null): NotificationCause | null {
  if (data.to === 'suspended' && data.reason === 'non_payment') {
    return { kind: 'suspended_for_non_payment', subscriberId };
  }
  if (data.from === 'suspended' && data.to === 'active') {
    return { kind: 'service_restored', subscriberId };
  }
  return null;
}
