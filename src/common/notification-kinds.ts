/**
 * The names of the notifications a subscriber is sent (issue 31, item 2). Shared infrastructure because two modules
 * read them and one will read the other: each tenant switches kinds on and off in its settings (gateway,
 * src/gateway/tenants/tenant-mail-settings.ts), and notifications (src/notifications/kinds.ts, where each kind's
 * trigger, legal-notice flag and variables are) will read those settings through gateway.
 */
export const NOTIFICATION_KINDS = [
  'invoice_issued',
  'payment_received',
  'credit_note_issued',
  'invoice_reminder',
  'suspended_for_non_payment',
  'service_restored',
  'service_activated',
  'ticket_reply',
  'portal_invite',
  'portal_sign_in_code',
] as const;

export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export function isNotificationKind(value: unknown): value is NotificationKind {
  return typeof value === 'string' && (NOTIFICATION_KINDS as readonly string[]).includes(value);
}
