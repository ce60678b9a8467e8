import { Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { Tenant } from '../gateway';

/** A tenant's choice for one rule; a rule without a row is enabled. */
@Entity('automation_rule_settings')
export class AutomationRuleSetting {
  @ForeignKey(() => Tenant, { name: 'fk_automation_rule_settings_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  rule: string;

  @Column('boolean')
  enabled: boolean;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/**
 * How far a consumer has read the event log: the (transaction id, event id) of the last event it handled. Events are
 * read in that order and only from transactions older than every one still running, so an event that commits late
 * is never passed over. One row per consumer, locked by the instance reading (FOR UPDATE SKIP LOCKED).
 */
@Entity('event_consumers')
export class EventConsumer {
  @PrimaryColumn('text')
  name: string;

  @Column('bigint')
  lastTxId: string;

  @Column('text')
  lastEventId: string;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/** What a rule has done once and must never do again (an invoice.overdue sent, a failed order's ticket opened). */
@Entity('automation_effects')
export class AutomationEffect {
  @ForeignKey(() => Tenant, { name: 'fk_automation_effects_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  rule: string;

  /** The record the effect is about (an invoice, an order). */
  @PrimaryColumn('text')
  subjectId: string;

  /** What it produced (the ticket, the event). */
  @Column('text', { nullable: true })
  resultId: string | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
