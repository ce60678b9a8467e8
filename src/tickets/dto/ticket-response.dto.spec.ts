import { TicketStatus, TICKET_STATUSES } from '../ticket-status';
import { isOverdue } from './ticket-response.dto';

const DUE = new Date('2026-03-01T12:00:00.000Z');
const ticket = (status: TicketStatus) => ({ dueAt: DUE, status });

describe('isOverdue', () => {
  it('should call a ticket overdue only once its due time has passed', () => {
    expect(isOverdue(ticket(TicketStatus.Open), new Date('2026-03-01T11:59:59.999Z'))).toBe(false);
    expect(isOverdue(ticket(TicketStatus.Open), DUE)).toBe(false);
    expect(isOverdue(ticket(TicketStatus.Open), new Date('2026-03-01T12:00:00.001Z'))).toBe(true);
  });

  it('should stop the SLA clock once the ticket is resolved, closed or cancelled, and only then', () => {
    const late = new Date('2026-04-01T00:00:00.000Z');
    const overdue = Object.fromEntries(
      TICKET_STATUSES.map((status) => [status, isOverdue(ticket(status), late)]),
    );
    expect(overdue).toEqual({
      new: true,
      open: true,
      pending_customer: true,
      on_hold: true,
      resolved: false,
      closed: false,
      cancelled: false,
    });
  });
});
