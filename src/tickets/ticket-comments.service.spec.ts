import { statusAfterComment } from './ticket-comments.service';
import { CommentAuthorType, TicketStatus, TICKET_STATUSES } from './ticket-status';
import { Ticket, TicketComment } from './ticket.entity';

const ticket = (status: TicketStatus): Ticket => Object.assign(new Ticket(), { id: 'tkt_1', status });
const comment = (authorType: CommentAuthorType, isPublic = true): TicketComment =>
  Object.assign(new TicketComment(), { authorType, public: isPublic });

/** Where a comment by `author` moves a ticket in each status (null: it stays). */
const moves = (author: CommentAuthorType, isPublic = true) =>
  Object.fromEntries(
    TICKET_STATUSES.map((status) => [status, statusAfterComment(ticket(status), comment(author, isPublic))]),
  );

const reopened = { to: TicketStatus.Open, reason: 'customer_replied' };

describe('statusAfterComment', () => {
  it('should reopen a ticket that waited on the customer, or was resolved, when the customer answers', () => {
    expect(moves(CommentAuthorType.Subscriber)).toEqual({
      new: null,
      open: null,
      pending_customer: reopened,
      on_hold: null,
      resolved: reopened,
      closed: null,
      cancelled: null,
    });
  });

  it("should open a new ticket on the help desk's first public reply, and move nothing else", () => {
    expect(moves(CommentAuthorType.Agent)).toEqual({
      new: { to: TicketStatus.Open, reason: 'agent_replied' },
      open: null,
      pending_customer: null,
      on_hold: null,
      resolved: null,
      closed: null,
      cancelled: null,
    });
  });

  it('should move nothing on a comment by the system, or on an internal note', () => {
    expect(Object.values(moves(CommentAuthorType.System)).every((move) => move === null)).toBe(true);
    expect(Object.values(moves(CommentAuthorType.Agent, false)).every((move) => move === null)).toBe(true);
    expect(Object.values(moves(CommentAuthorType.Subscriber, false)).every((move) => move === null)).toBe(
      true,
    );
  });
});
