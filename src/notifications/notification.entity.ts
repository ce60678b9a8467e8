import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../gateway';
import { EventRecord } from '../events';
import { Subscriber } from '../subscribers';

export enum NotificationStatus {
  /** Waiting for the worker: due at next_attempt_at. */
  Queued = 'queued',
  /** The mail server took the message (its answer in `response`). */
  Sent = 'sent',
  /** A permanent refusal (5xx), a message that can never be sent, or every retry used up. */
  Failed = 'failed',
  /** Nothing was sent, and `reason` says why (no mail server, no email, switched off…). */
  Skipped = 'skipped',
}

export const NOTIFICATION_STATUSES = Object.values(NotificationStatus);

/** Why a notification was not sent; each is a value of `reason` on a skipped one. */
export const SKIP_REASONS = [
  'no_mail_server',
  'test_tenant_without_mail_server',
  'no_subscriber',
  'no_email',
  'kind_disabled_by_tenant',
  'declined_by_subscriber',
  'suspension_not_for_non_payment',
  'record_gone',
  'no_longer_valid',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/**
 * One message a subscriber is (or was to be) sent: written by the outbox fan-out in the statement of the event that
 * causes it (src/notifications/notifications-outbox.ts), then sent, retried or skipped by the worker.
 */
@Entity('notifications')
@Index('ix_notifications_claimable', ['nextAttemptAt'], { where: `"status" = 'queued'` })
@Index('ix_notifications_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_notifications_tenant_subscriber', ['tenantId', 'subscriberId', 'createdAt', 'id'])
@Index('ix_notifications_tenant_kind', ['tenantId', 'kind', 'createdAt', 'id'])
@Index('ix_notifications_tenant_status', ['tenantId', 'status', 'createdAt', 'id'])
// The per-tenant send rate counts a tenant's sends started in the last minute.
@Index('ix_notifications_tenant_send_started', ['tenantId', 'sendStartedAt'])
@Index('uq_notifications_tenant_id', ['tenantId', 'id'], { unique: true })
@Check('chk_notifications_status', `"status" IN ('queued', 'sent', 'failed', 'skipped')`)
@Check('chk_notifications_attempts', `"attempts" >= 0`)
export class Notification {
  @ForeignKey(() => Tenant, { name: 'fk_notifications_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  kind: string;

  /** Null until the worker finds it (a ticket reply's subscriber is the ticket's). */
  @Column('text', { nullable: true })
  subscriberId: string | null;

  @ForeignKey(() => EventRecord, { name: 'fk_notifications_event' })
  @Column('text')
  eventId: string;

  @Column('text')
  eventType: string;

  @Column('text')
  status: string;

  /** Skipped: a SkipReason. Failed: the server's answer, or why the message could not be built. */
  @Column('text', { nullable: true })
  reason: string | null;

  /** The address it went (or was to go) to, once the worker has read it. */
  @Column('text', { nullable: true })
  recipient: string | null;

  @Column('text', { nullable: true })
  subject: string | null;

  /** The Message-ID header: the same on every attempt, so a receiving server can tell a repeat. */
  @Column('text', { nullable: true })
  messageId: string | null;

  @Column('integer')
  attempts: number;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  lockedUntil: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  sentAt: Date | null;

  /** When its latest send started: the per-tenant rate (NOTIFICATION_RATE_PER_MINUTE) counts these. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  sendStartedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/** One try at sending a notification, and what the mail server (or the network) answered. */
@Entity('notification_attempts')
@Index('ix_notification_attempts_notification', ['notificationId', 'attempt'])
@Check('chk_notification_attempts_outcome', `"outcome" IN ('sent', 'temporary', 'permanent', 'refused')`)
export class NotificationAttempt {
  @ForeignKey(() => Tenant, { name: 'fk_notification_attempts_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @ForeignKey(() => Notification, { name: 'fk_notification_attempts_notification' })
  @Column('text')
  notificationId: string;

  @Column('integer')
  attempt: number;

  /** sent, temporary (4xx, a timeout, no connection: tried again), permanent (5xx), refused (never sendable). */
  @Column('text')
  outcome: string;

  @Column('integer', { nullable: true })
  smtpCode: number | null;

  @Column('text', { nullable: true })
  response: string | null;

  @Column('integer')
  durationMs: number;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

/** A tenant's own template of a kind, in place of the shipped default. */
@Entity('notification_templates')
export class NotificationTemplateRecord {
  @ForeignKey(() => Tenant, { name: 'fk_notification_templates_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  kind: string;

  @Column('text')
  subject: string;

  @Column('text')
  text: string;

  @Column('text')
  html: string;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/** The kinds a subscriber switched off (or on again): a kind without a row is on. */
@Entity('notification_preferences')
export class NotificationPreference {
  @ForeignKey(() => Tenant, { name: 'fk_notification_preferences_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @ForeignKey(() => Subscriber, { name: 'fk_notification_preferences_subscriber' })
  @PrimaryColumn('text')
  subscriberId: string;

  @PrimaryColumn('text')
  kind: string;

  @Column('boolean')
  enabled: boolean;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
