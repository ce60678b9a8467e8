import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../gateway';
import { EventRecord } from '../events';

/** A callback subscription. The secret is kept as given out: it is the HMAC key deliveries are signed with. */
@Entity('webhooks')
@Index('ix_webhooks_tenant_created', ['tenantId', 'createdAt', 'id'])
// The target of the (tenant_id, webhook_id) foreign keys of deliveries and attempts.
@Index('uq_webhooks_tenant_id', ['tenantId', 'id'], { unique: true })
export class Webhook {
  @ForeignKey(() => Tenant, { name: 'fk_webhooks_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  url: string;

  /** Exact event types, `prefix.*` patterns, or `*`. */
  @Column('text', { array: true })
  events: string[];

  @Column('text', { nullable: true })
  description: string | null;

  @Column('boolean')
  enabled: boolean;

  @Column('text', { nullable: true })
  disabledReason: string | null;

  @Column('text')
  secret: string;

  /** After a rotation the old secret still signs, beside the new one, until this instant. */
  @Column('text', { nullable: true })
  previousSecret: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  previousSecretExpiresAt: Date | null;

  /** Set at the first failed attempt after a success; a subscription failing for 5 days is disabled. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  failingSince: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

export enum DeliveryStatus {
  Pending = 'pending',
  Succeeded = 'succeeded',
  Failed = 'failed',
  /** Its subscription was disabled while it waited; never sent, and re-enabling does not bring it back. */
  Cancelled = 'cancelled',
}

/** One event owed to one subscription: the outbox row, written in the event's transaction. */
@Entity('webhook_deliveries')
// Only pending rows: the claim's walk in due order never passes delivered, failed or cancelled ones.
@Index('ix_webhook_deliveries_claimable', ['nextAttemptAt'], { where: `"status" = 'pending'` })
@Index('ix_webhook_deliveries_webhook_status', ['tenantId', 'webhookId', 'status', 'createdAt', 'id'])
@Index('ix_webhook_deliveries_webhook', ['tenantId', 'webhookId', 'createdAt', 'id'])
@Check('chk_webhook_deliveries_status', `"status" IN ('pending', 'succeeded', 'failed', 'cancelled')`)
@Check('chk_webhook_deliveries_attempts', `"attempts" >= 0`)
// With tenant_id: deleting a subscription checks its deliveries through their (tenant_id, webhook_id) index.
@ForeignKey(() => Webhook, ['tenantId', 'webhookId'], ['tenantId', 'id'], {
  name: 'fk_webhook_deliveries_webhook',
})
export class WebhookDelivery {
  @ForeignKey(() => Tenant, { name: 'fk_webhook_deliveries_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  webhookId: string;

  @ForeignKey(() => EventRecord, { name: 'fk_webhook_deliveries_event' })
  @Column('text')
  eventId: string;

  @Column('text')
  eventType: string;

  @Column('text')
  status: DeliveryStatus;

  @Column('integer')
  attempts: number;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  /** A worker's lease: while in the future, no other worker takes the row. Expires if that worker dies. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  lockedUntil: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/** The log of every delivery attempt. */
@Entity('webhook_attempts')
@Index('ix_webhook_attempts_webhook_created', ['tenantId', 'webhookId', 'createdAt', 'id'])
@ForeignKey(() => Webhook, ['tenantId', 'webhookId'], ['tenantId', 'id'], {
  name: 'fk_webhook_attempts_webhook',
})
export class WebhookAttempt {
  @ForeignKey(() => Tenant, { name: 'fk_webhook_attempts_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  webhookId: string;

  /** No foreign key: the log outlives nothing, and one would need an index on delivery_id for deletes. */
  @Column('text')
  deliveryId: string;

  @ForeignKey(() => EventRecord, { name: 'fk_webhook_attempts_event' })
  @Column('text')
  eventId: string;

  @Column('text')
  eventType: string;

  @Column('integer')
  attempt: number;

  @Column('integer', { nullable: true })
  statusCode: number | null;

  @Column('integer')
  durationMs: number;

  @Column('text', { nullable: true })
  error: string | null;

  /** The first KiB of the answer. */
  @Column('text', { nullable: true })
  responseBody: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
