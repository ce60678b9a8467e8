import { isIP } from 'node:net';
import { ApiError } from '../../common/errors/api-error';
import { ForbiddenAddressError, assertPublicHost } from '../../common/net/public-address';
import { NOTIFICATION_KINDS, type NotificationKind } from '../../common/notification-kinds';
import type { SmtpSettings, SmtpTlsMode } from '../../config/smtp-settings';
import type { MailSettingsDto, NotificationSwitchesDto } from './dto/tenant-mail-settings.dto';
import type { TenantSettings } from './tenant-settings.entity';

/** A column PATCH may change. */
export type SettingsColumn = Exclude<keyof TenantSettings, 'tenantId' | 'updatedAt'>;

type MailColumn = Extract<SettingsColumn, `mail${string}`>;
type KindColumn = Extract<SettingsColumn, `notify${string}`>;

/**
 * The mail server's fields and their columns, in the order changed_fields names them. The password is write-only: the
 * answer says password_set instead, and TenantSettingsService counts a password sent as a change even when it equals
 * the stored one, so the answer never tells whether a guess was right.
 */
export const MAIL_FIELDS: readonly (readonly [string, MailColumn])[] = [
  ['mail.host', 'mailHost'],
  ['mail.port', 'mailPort'],
  ['mail.tls', 'mailTls'],
  ['mail.user', 'mailUser'],
  ['mail.password', 'mailPassword'],
  ['mail.from', 'mailFrom'],
  ['mail.reply_to', 'mailReplyTo'],
];

export const PASSWORD_FIELD = 'mail.password';

export const KIND_COLUMNS: Readonly<Record<NotificationKind, KindColumn>> = {
  invoice_issued: 'notifyInvoiceIssued',
  payment_received: 'notifyPaymentReceived',
  credit_note_issued: 'notifyCreditNoteIssued',
  invoice_reminder: 'notifyInvoiceReminder',
  suspended_for_non_payment: 'notifySuspendedForNonPayment',
  service_restored: 'notifyServiceRestored',
  service_activated: 'notifyServiceActivated',
  ticket_reply: 'notifyTicketReply',
  portal_invite: 'notifyPortalInvite',
  portal_sign_in_code: 'notifyPortalSignInCode',
};

export const NOTIFICATION_FIELDS: readonly (readonly [string, KindColumn])[] = NOTIFICATION_KINDS.map(
  (kind) => [`notifications.${kind}`, KIND_COLUMNS[kind]] as const,
);

/** No mail server of its own (the instance's is used) and every kind on. */
export function mailDefaults(): Pick<TenantSettings, MailColumn | KindColumn> {
  return {
    mailHost: null,
    mailPort: null,
    mailTls: null,
    mailUser: null,
    mailPassword: null,
    mailFrom: null,
    mailReplyTo: null,
    ...(Object.fromEntries(NOTIFICATION_KINDS.map((kind) => [KIND_COLUMNS[kind], true])) as Record<
      KindColumn,
      boolean
    >),
  };
}

/** The mail server as the API shows it: null while the instance's is used, and never the password. */
export function answerMail(settings: TenantSettings): MailSettingsDto | null {
  if (settings.mailHost === null) {
    return null;
  }
  return {
    host: settings.mailHost,
    port: settings.mailPort as number,
    tls: settings.mailTls as MailSettingsDto['tls'],
    user: settings.mailUser,
    password_set: settings.mailPassword !== null,
    from: settings.mailFrom as string,
    reply_to: settings.mailReplyTo,
  };
}

export function answerNotifications(settings: TenantSettings): NotificationSwitchesDto {
  return Object.fromEntries(
    NOTIFICATION_KINDS.map((kind) => [kind, settings[KIND_COLUMNS[kind]]]),
  ) as unknown as NotificationSwitchesDto;
}

function refuse(field: string, message: string): never {
  throw new ApiError('validation_failed', `${field} ${message}`, field);
}

/**
 * The merged mail settings hold together: a server needs its host, port, TLS mode and From mailbox (or `mail: null`
 * for the instance's), and a login both its user and its password.
 */
export function assertMailComplete(settings: TenantSettings): void {
  const anySet = MAIL_FIELDS.some(([, column]) => settings[column] !== null);
  if (!anySet) {
    return;
  }
  const required: readonly (readonly [string, MailColumn])[] = [
    ['mail.host', 'mailHost'],
    ['mail.port', 'mailPort'],
    ['mail.tls', 'mailTls'],
    ['mail.from', 'mailFrom'],
  ];
  for (const [field, column] of required) {
    if (settings[column] === null) {
      refuse(
        field,
        "is required for a mail server of the tenant's own (send mail null to use the instance's)",
      );
    }
  }
  if (settings.mailUser !== null && settings.mailPassword === null) {
    refuse('mail.password', 'is required with mail.user: send both, or null for both');
  }
  if (settings.mailUser === null && settings.mailPassword !== null) {
    refuse('mail.user', 'is required with mail.password: send both, or null for both');
  }
}

/**
 * A tenant's mail server may not be, or resolve to, a private, loopback or link-local address unless MAIL_ALLOW_PRIVATE
 * (the list webhooks' callbacks are held to, src/common/net/public-address.ts): otherwise any tenant could make this
 * server open connections inside its own network. A name is checked as it resolves now; the sender (issue 31, not yet
 * built) is to check again as it connects, as src/webhooks/webhook-sender.ts does, against DNS rebinding.
 */
export async function assertPublicMailHost(host: unknown, allowPrivate: boolean): Promise<void> {
  if (allowPrivate || typeof host !== 'string') {
    return;
  }
  try {
    await assertPublicHost(host);
  } catch (error) {
    const reason = error instanceof ForbiddenAddressError ? error.message : `${host} does not resolve`;
    refuse('mail.host', `is not allowed: ${reason} (MAIL_ALLOW_PRIVATE allows it).`);
  }
}

const HOST_NAME =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** A host name (ASCII labels: an IDN in its xn-- form) or an IP address, IPv6 without brackets. */
export function isMailHost(value: unknown): boolean {
  return typeof value === 'string' && value.length <= 253 && (isIP(value) !== 0 || HOST_NAME.test(value));
}

/** The tenant's own mail server from its settings, or null while the instance's (SMTP_URL, MAIL_FROM) is used. */
export function ownMailServer(settings: TenantSettings | null): SmtpSettings | null {
  if (!settings?.mailHost || settings.mailPort === null || !settings.mailTls || !settings.mailFrom) {
    return null;
  }
  return {
    host: settings.mailHost,
    port: settings.mailPort,
    tls: settings.mailTls as SmtpTlsMode,
    ...(settings.mailUser !== null && { user: settings.mailUser, password: settings.mailPassword ?? '' }),
    from: settings.mailFrom,
    ...(settings.mailReplyTo !== null && { reply_to: settings.mailReplyTo }),
  };
}
