import type { Metadata } from '../common/metadata';
import type { Actor } from '../common/request-context';
import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../gateway';
import { CommentAuthorType, TicketPriority, TicketStatus, TicketType } from './ticket-status';

const IN = (values: string[]) => values.map((value) => `'${value}'`).join(', ');

@Entity('tickets')
@Index('ix_tickets_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_tickets_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
@Index('ix_tickets_tenant_priority_created', ['tenantId', 'priority', 'createdAt', 'id'])
@Index('ix_tickets_tenant_type_created', ['tenantId', 'type', 'createdAt', 'id'])
@Index('ix_tickets_tenant_subscriber_created', ['tenantId', 'subscriberId', 'createdAt', 'id'])
@Index('ix_tickets_tenant_assignee_created', ['tenantId', 'assignee', 'createdAt', 'id'])
// overdue=true: the tickets whose SLA clock still runs, by due time.
@Index('ix_tickets_tenant_running_due', ['tenantId', 'dueAt'], {
  where: `"status" NOT IN ('resolved', 'closed', 'cancelled')`,
})
// The key the comments' and history's composite foreign keys point at (each row is its ticket's tenant's).
@Index('uq_tickets_tenant_id', ['tenantId', 'id'], { unique: true })
@Index('uq_tickets_tenant_number', ['tenantId', 'number'], { unique: true })
@Index('uq_tickets_external_id', ['tenantId', 'externalId'], { unique: true })
// tag= (GIN over the tags array) and q= (trigram GIN over lower(subject), lower(description)): operator classes
// TypeORM cannot declare, so they live in their migration only.
@Index('ix_tickets_tags', { synchronize: false })
@Index('ix_tickets_subject_trgm', { synchronize: false })
@Index('ix_tickets_description_trgm', { synchronize: false })
// The subscriber must be the ticket's tenant's; named by table (tickets import subscribers only through its index).
@ForeignKey('subscribers', ['tenantId', 'subscriberId'], ['tenantId', 'id'], {
  name: 'fk_tickets_subscriber',
})
@Check('chk_tickets_number', `"number" > 0`)
@Check('chk_tickets_status', `"status" IN (${IN(Object.values(TicketStatus))})`)
@Check('chk_tickets_type', `"type" IN (${IN(Object.values(TicketType))})`)
@Check('chk_tickets_priority', `"priority" IN (${IN(Object.values(TicketPriority))})`)
@Check('chk_tickets_resolved_at', `("status" IN ('resolved', 'closed')) = ("resolved_at" IS NOT NULL)`)
@Check('chk_tickets_closed_at', `("status" = 'closed') = ("closed_at" IS NOT NULL)`)
export class Ticket {
  @ForeignKey(() => Tenant, { name: 'fk_tickets_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  /** Sequential per tenant, gap-free (ticket_counters). */
  @Column('integer')
  number: number;

  @Column('text')
  subject: string;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('text')
  type: TicketType;

  @Column('text')
  priority: TicketPriority;

  @Column('text')
  status: TicketStatus;

  @Column('text', { nullable: true })
  subscriberId: string | null;

  @Column('text', { nullable: true })
  assignee: string | null;

  @Column('text', { array: true })
  tags: string[];

  @Column('text', { nullable: true })
  externalId: string | null;

  @Column('jsonb')
  metadata: Metadata;

  @Column({ type: 'timestamptz', precision: 3 })
  dueAt: Date;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  firstResponseAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  resolvedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  closedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/** One move of a ticket's status, the creation (from null to new) included: the history GET /tickets/{id} shows. */
@Entity('ticket_status_changes')
@Index('ix_ticket_status_changes_ticket', ['tenantId', 'ticketId', 'createdAt', 'id'])
@ForeignKey('tickets', ['tenantId', 'ticketId'], ['tenantId', 'id'], {
  name: 'fk_ticket_status_changes_ticket',
})
export class TicketStatusChange {
  @ForeignKey(() => Tenant, { name: 'fk_ticket_status_changes_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  ticketId: string;

  @Column('text', { nullable: true })
  fromStatus: TicketStatus | null;

  @Column('text')
  toStatus: TicketStatus;

  @Column('text', { nullable: true })
  reason: string | null;

  @Column('jsonb')
  actor: Actor;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

@Entity('ticket_comments')
@Index('ix_ticket_comments_ticket', ['tenantId', 'ticketId', 'createdAt', 'id'])
@Index('ix_ticket_comments_ticket_public', ['tenantId', 'ticketId', 'public', 'createdAt', 'id'])
@ForeignKey('tickets', ['tenantId', 'ticketId'], ['tenantId', 'id'], { name: 'fk_ticket_comments_ticket' })
@Check('chk_ticket_comments_author_type', `"author_type" IN (${IN(Object.values(CommentAuthorType))})`)
@Check('chk_ticket_comments_subscriber_public', `"author_type" <> 'subscriber' OR "public"`)
export class TicketComment {
  @ForeignKey(() => Tenant, { name: 'fk_ticket_comments_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  ticketId: string;

  @Column('text')
  body: string;

  @Column('boolean')
  public: boolean;

  @Column('text', { nullable: true })
  author: string | null;

  @Column('text')
  authorType: CommentAuthorType;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

/** The last ticket number issued per tenant; its row lock serialises numbering until commit. */
@Entity('ticket_counters')
@Check('chk_ticket_counters_last_number', `"last_number" > 0`)
export class TicketCounter {
  @ForeignKey(() => Tenant, { name: 'fk_ticket_counters_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @Column('integer')
  lastNumber: number;
}

/** A tenant's SLA: hours to the due time per priority. No row means the defaults. */
@Entity('ticket_settings')
@Check(
  'chk_ticket_settings_due_hours',
  `"urgent_hours" BETWEEN 1 AND 8760 AND "high_hours" BETWEEN 1 AND 8760 AND ` +
    `"normal_hours" BETWEEN 1 AND 8760 AND "low_hours" BETWEEN 1 AND 8760`,
)
export class TicketSettings {
  @ForeignKey(() => Tenant, { name: 'fk_ticket_settings_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @Column('integer')
  urgentHours: number;

  @Column('integer')
  highHours: number;

  @Column('integer')
  normalHours: number;

  @Column('integer')
  lowHours: number;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
