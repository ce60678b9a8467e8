import { ApiError } from '../common/errors/api-error';
import { TicketStatus, TICKET_STATUSES } from './ticket-status';
import { Ticket } from './ticket.entity';
import { assertEditable } from './tickets.service';

const ticket = (status: TicketStatus): Ticket => Object.assign(new Ticket(), { id: 'tkt_1', status });

describe('assertEditable', () => {
  it('should let a ticket be changed and commented on until it is closed or cancelled', () => {
    const editable = TICKET_STATUSES.filter((status) => {
      try {
        assertEditable(ticket(status));
        return true;
      } catch {
        return false;
      }
    });
    expect(editable).toEqual(['new', 'open', 'pending_customer', 'on_hold', 'resolved']);
  });

  it('should answer 409 ticket_closed on status, naming the ticket and its state', () => {
    let error: unknown;
    try {
      assertEditable(ticket(TicketStatus.Cancelled));
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'ticket_closed', field: 'status' });
    expect((error as ApiError).getStatus()).toBe(409);
    expect((error as ApiError).message).toBe(
      'Ticket tkt_1 is cancelled: it can no longer be changed or commented on.',
    );
  });
});
