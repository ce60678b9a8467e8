import {
  assertTransition as assertMove,
  canTransition as canMove,
  type Transitions,
} from '../common/state-machine';

export enum TicketStatus {
  New = 'new',
  Open = 'open',
  PendingCustomer = 'pending_customer',
  OnHold = 'on_hold',
  Resolved = 'resolved',
  Closed = 'closed',
  Cancelled = 'cancelled',
}

export const TICKET_STATUSES = Object.values(TicketStatus);

/** States a ticket never leaves; PATCH and comments answer 409 ticket_closed there. */
export const FINAL_STATUSES: readonly TicketStatus[] = [TicketStatus.Closed, TicketStatus.Cancelled];

/** States in which the SLA clock no longer runs: a ticket here is never overdue. */
export const SLA_STOPPED_STATUSES: readonly TicketStatus[] = [
  TicketStatus.Resolved,
  TicketStatus.Closed,
  TicketStatus.Cancelled,
];

/** Moves that must say why. */
export const REASON_REQUIRED: readonly TicketStatus[] = [TicketStatus.OnHold, TicketStatus.Cancelled];

/** The workflow as data. Anything not listed is refused; any non-final state may also be cancelled. */
export const TICKET_TRANSITIONS: Transitions<TicketStatus> = {
  [TicketStatus.New]: [TicketStatus.Open, TicketStatus.Cancelled],
  [TicketStatus.Open]: [
    TicketStatus.PendingCustomer,
    TicketStatus.OnHold,
    TicketStatus.Resolved,
    TicketStatus.Cancelled,
  ],
  [TicketStatus.PendingCustomer]: [TicketStatus.Open, TicketStatus.Resolved, TicketStatus.Cancelled],
  [TicketStatus.OnHold]: [TicketStatus.Open, TicketStatus.Resolved, TicketStatus.Cancelled],
  [TicketStatus.Resolved]: [TicketStatus.Open, TicketStatus.Closed, TicketStatus.Cancelled],
  [TicketStatus.Closed]: [],
  [TicketStatus.Cancelled]: [],
};

export function canTransition(from: TicketStatus, to: TicketStatus): boolean {
  return canMove(TICKET_TRANSITIONS, from, to);
}

/** Returns `to` when the move is allowed, else throws 409 invalid_state_transition naming both states. */
export function assertTransition(from: TicketStatus, to: TicketStatus): TicketStatus {
  return assertMove(TICKET_TRANSITIONS, 'a ticket', from, to);
}

export enum TicketType {
  Incident = 'incident',
  Problem = 'problem',
  Question = 'question',
  Task = 'task',
  Installation = 'installation',
  Billing = 'billing',
}

export const TICKET_TYPES = Object.values(TicketType);

export enum TicketPriority {
  Low = 'low',
  Normal = 'normal',
  High = 'high',
  Urgent = 'urgent',
}

export const TICKET_PRIORITIES = Object.values(TicketPriority);

export enum CommentAuthorType {
  Agent = 'agent',
  Subscriber = 'subscriber',
  System = 'system',
}

export const COMMENT_AUTHOR_TYPES = Object.values(CommentAuthorType);

/** Reasons the service writes itself when a comment moves a ticket. */
export const CUSTOMER_REPLIED = 'customer_replied';
export const AGENT_REPLIED = 'agent_replied';
