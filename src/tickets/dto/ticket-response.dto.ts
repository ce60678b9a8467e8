import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Metadata } from '../../common/metadata';
import type { Actor } from '../../common/request-context';
import { ApiInteger, ApiMetadata } from '../../common/swagger/api-types';
import {
  COMMENT_AUTHOR_TYPES,
  CommentAuthorType,
  SLA_STOPPED_STATUSES,
  TICKET_PRIORITIES,
  TICKET_STATUSES,
  TICKET_TYPES,
  TicketPriority,
  TicketStatus,
  TicketType,
} from '../ticket-status';
import type { Ticket, TicketComment, TicketStatusChange } from '../ticket.entity';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** Whether the SLA was missed: due_at has passed and the ticket still waits on the help desk or the customer. */
export function isOverdue(ticket: Pick<Ticket, 'dueAt' | 'status'>, now: Date): boolean {
  return ticket.dueAt.getTime() < now.getTime() && !SLA_STOPPED_STATUSES.includes(ticket.status);
}

@ApiSchema({
  description:
    'Who made a change: a token, the system, the command line, an automation rule, or a subscriber in the portal.',
})
export class ActorDto {
  @ApiProperty({
    enum: ['token', 'system', 'cli', 'automation', 'subscriber'],
    example: 'token',
    description:
      'token: an API call; automation: a rule; system: the server itself; cli: an operator command; subscriber: ' +
      'the subscriber itself, through a portal session (docs/portal.md).',
  })
  type: string;

  @ApiProperty({
    example: 'tok_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description:
      'The token id (type token), the rule id (type automation) or the subscriber id (type subscriber); null otherwise.',
  })
  id: string | null;
}

@ApiSchema({ description: 'A support ticket: what it is about, its priority, status, assignee and SLA.' })
export class TicketDto {
  @ApiProperty({ example: 'tkt_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiInteger({ example: 1042, minimum: 1, description: 'Sequential per tenant, without gaps.' })
  number: number;

  @ApiProperty({ example: 'No internet since this morning' })
  subject: string;

  @ApiProperty({ nullable: true, type: String })
  description: string | null;

  @ApiProperty({
    enum: TICKET_TYPES,
    example: TicketType.Incident,
    description: 'What kind of request it is.',
  })
  type: TicketType;

  @ApiProperty({
    enum: TICKET_PRIORITIES,
    example: TicketPriority.High,
    description: 'Sets due_at from the tenant SLA (GET /ticket-settings).',
  })
  priority: TicketPriority;

  @ApiProperty({
    enum: TICKET_STATUSES,
    example: TicketStatus.New,
    description:
      'Workflow state, moved by POST /tickets/{id}/status or a reply; closed and cancelled are final (docs/tickets.md).',
  })
  status: TicketStatus;

  @ApiProperty({
    example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description: 'The subscriber it concerns; null: none.',
  })
  subscriber_id: string | null;

  @ApiProperty({
    example: 'noc.jane',
    nullable: true,
    type: String,
    description: "The operator's user name in their own system; null: unassigned.",
  })
  assignee: string | null;

  @ApiProperty({
    type: [String],
    example: ['fiber', 'outage'],
    description: 'Trimmed, lower-cased, each once.',
  })
  tags: string[];

  @ApiProperty({
    example: 'helpdesk-48213',
    nullable: true,
    type: String,
    description: 'Your own id for this ticket (unique per tenant); null when none was given.',
  })
  external_id: string | null;

  @ApiMetadata({ example: { channel: 'phone' } })
  metadata: Metadata;

  @ApiProperty({
    example: '2026-11-22T10:00:00.000Z',
    description: 'created_at plus the SLA hours of the priority.',
  })
  due_at: string;

  @ApiProperty({
    example: false,
    description: 'due_at has passed and the ticket is not resolved, closed or cancelled.',
  })
  overdue: boolean;

  @ApiProperty({ nullable: true, type: String, description: 'The first public comment by an agent.' })
  first_response_at: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When it was resolved; kept when closed, back to null when it moves anywhere else.',
  })
  resolved_at: string | null;

  @ApiProperty({ nullable: true, type: String, description: 'When it was closed; null until closed.' })
  closed_at: string | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;

  /** `now` (the caller's Clock) is what `overdue` is measured against. */
  static from(ticket: Ticket, now: Date): TicketDto {
    return {
      id: ticket.id,
      number: ticket.number,
      subject: ticket.subject,
      description: ticket.description,
      type: ticket.type,
      priority: ticket.priority,
      status: ticket.status,
      subscriber_id: ticket.subscriberId,
      assignee: ticket.assignee,
      tags: ticket.tags,
      external_id: ticket.externalId,
      metadata: ticket.metadata,
      due_at: ticket.dueAt.toISOString(),
      overdue: isOverdue(ticket, now),
      first_response_at: iso(ticket.firstResponseAt),
      resolved_at: iso(ticket.resolvedAt),
      closed_at: iso(ticket.closedAt),
      created_at: ticket.createdAt.toISOString(),
      updated_at: ticket.updatedAt.toISOString(),
    };
  }
}

@ApiSchema({ description: 'One move of a ticket in its workflow: from, to, why, by whom and when.' })
export class StatusChangeDto {
  @ApiProperty({ enum: TICKET_STATUSES, nullable: true, description: 'null for the creation.' })
  from: TicketStatus | null;

  // The example is a history's first entry, the creation: from null to new, no reason.
  @ApiProperty({ enum: TICKET_STATUSES, example: TicketStatus.New, description: 'The state it moved to.' })
  to: TicketStatus;

  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'As sent with the move, or what triggered it (customer_replied, agent_replied); null: none.',
  })
  reason: string | null;

  // No description: it would wrap the $ref in an allOf, one level too deep for the generated example (exampleOf).
  @ApiProperty({ type: ActorDto })
  actor: Actor;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', description: 'When the move happened.' })
  at: string;

  static from(change: TicketStatusChange): StatusChangeDto {
    return {
      from: change.fromStatus,
      to: change.toStatus,
      reason: change.reason,
      actor: { type: change.actor.type, id: change.actor.id },
      at: change.createdAt.toISOString(),
    };
  }
}

/** One ticket as single-record answers give it: with its status history, oldest first. */
@ApiSchema({ description: 'A ticket with its whole status history.' })
export class TicketDetailDto extends TicketDto {
  @ApiProperty({
    type: [StatusChangeDto],
    description: 'Every move of the ticket, oldest first (creation first).',
  })
  status_history: StatusChangeDto[];

  static withHistory(ticket: Ticket, history: TicketStatusChange[], now: Date): TicketDetailDto {
    return { ...TicketDto.from(ticket, now), status_history: history.map(StatusChangeDto.from) };
  }
}

@ApiSchema({ description: 'A message on a ticket: public (the customer sees it) or internal.' })
export class CommentDto {
  @ApiProperty({ example: 'tcm_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'tkt_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The ticket it is on.' })
  ticket_id: string;

  @ApiProperty({ example: 'A technician will visit between 14:00 and 16:00 today.' })
  body: string;

  @ApiProperty({
    example: true,
    description: 'true: a customer portal may show it; false: internal, never in events or webhooks.',
  })
  public: boolean;

  @ApiProperty({
    example: 'noc.jane',
    nullable: true,
    type: String,
    description: 'Who wrote it, as sent; null: not given.',
  })
  author: string | null;

  @ApiProperty({
    enum: COMMENT_AUTHOR_TYPES,
    example: CommentAuthorType.Agent,
    description: 'agent: the help desk; subscriber: the customer (always public); system: the server.',
  })
  author_type: CommentAuthorType;

  @ApiProperty({ example: '2026-11-21T10:05:00.000Z' })
  created_at: string;

  static from(comment: TicketComment): CommentDto {
    return {
      id: comment.id,
      ticket_id: comment.ticketId,
      body: comment.body,
      public: comment.public,
      author: comment.author,
      author_type: comment.authorType,
      created_at: comment.createdAt.toISOString(),
    };
  }

  /** What an event carries: an internal comment's body never leaves the API. */
  static forEvent(comment: TicketComment): Omit<CommentDto, 'body'> & { body: string | null } {
    return { ...CommentDto.from(comment), body: comment.public ? comment.body : null };
  }
}
