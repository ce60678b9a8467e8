import request from 'supertest';
import { bearer } from './factories';
import type { TestApp } from './test-app';

export const TICKET_SCOPES = [
  'tickets:read',
  'tickets:write',
  'subscribers:read',
  'subscribers:write',
  'events:read',
];
export const TICKET_ID = /^tkt_[0-9A-Z]{26}$/;
export const COMMENT_ID = /^tcm_[0-9A-Z]{26}$/;

export const TICKET_STATUSES = [
  'new',
  'open',
  'pending_customer',
  'on_hold',
  'resolved',
  'closed',
  'cancelled',
] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** The keys of a ticket in a list; single-ticket answers add status_history. */
export const TICKET_KEYS = [
  'assignee',
  'closed_at',
  'created_at',
  'description',
  'due_at',
  'external_id',
  'first_response_at',
  'id',
  'metadata',
  'number',
  'overdue',
  'priority',
  'resolved_at',
  'status',
  'subject',
  'subscriber_id',
  'tags',
  'type',
  'updated_at',
];

export interface Ticket {
  id: string;
  number: number;
  subject: string;
  description: string | null;
  type: string;
  priority: string;
  status: TicketStatus;
  subscriber_id: string | null;
  assignee: string | null;
  tags: string[];
  external_id: string | null;
  metadata: Record<string, unknown>;
  due_at: string;
  overdue: boolean;
  first_response_at: string | null;
  resolved_at: string | null;
  closed_at: string | null;
  created_at: string;
  updated_at: string;
  status_history?: {
    from: string | null;
    to: string;
    reason: string | null;
    actor: { type: string; id: string | null };
    at: string;
  }[];
}

type Body = Record<string, unknown>;

export function postTicket(t: TestApp, token: string, body: Body, headers: Record<string, string> = {}) {
  return request(t.http).post('/api/v1/tickets').set(bearer(token)).set(headers).send(body);
}

export async function createTicket(t: TestApp, token: string, overrides: Body = {}): Promise<Ticket> {
  const res = await postTicket(t, token, { subject: 'No internet since this morning', ...overrides });
  if (res.status !== 201) {
    throw new Error(`create ticket: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as Ticket;
}

export function postTicketStatus(t: TestApp, token: string, id: string, status: string, reason?: string) {
  return request(t.http)
    .post(`/api/v1/tickets/${id}/status`)
    .set(bearer(token))
    .send(reason === undefined ? { status } : { status, reason });
}

export function postComment(t: TestApp, token: string, id: string, body: Body) {
  return request(t.http).post(`/api/v1/tickets/${id}/comments`).set(bearer(token)).send(body);
}

/** A reason for moves that need one (on_hold, cancelled); other moves get none. */
export function reasonFor(to: string): string | undefined {
  return to === 'on_hold' || to === 'cancelled' ? `moving to ${to}` : undefined;
}

/** Allowed moves that bring a new ticket to each state. */
export const PATH_TO: Record<TicketStatus, TicketStatus[]> = {
  new: [],
  open: ['open'],
  pending_customer: ['open', 'pending_customer'],
  on_hold: ['open', 'on_hold'],
  resolved: ['open', 'resolved'],
  closed: ['open', 'resolved', 'closed'],
  cancelled: ['cancelled'],
};

/** A fresh ticket driven to `status` through allowed moves. */
export async function ticketIn(t: TestApp, token: string, status: TicketStatus, body: Body = {}) {
  const ticket = await createTicket(t, token, body);
  for (const to of PATH_TO[status]) {
    const res = await postTicketStatus(t, token, ticket.id, to, reasonFor(to));
    if (res.status !== 200) {
      throw new Error(`move to ${to}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
  return ticket;
}

/** Makes a ticket's SLA lapse an hour ago (the API never backdates). */
export async function makeOverdue(t: TestApp, id: string): Promise<void> {
  await t.dataSource.query(`UPDATE tickets SET due_at = now() - interval '1 hour' WHERE id = $1`, [id]);
}
