import { DEFAULT_DUE_HOURS } from './dto/ticket-settings.dto';
import { dueHoursOf, slaDueAt } from './ticket-settings.service';
import { TicketPriority, TICKET_PRIORITIES } from './ticket-status';
import { TicketSettings } from './ticket.entity';

const CREATED = new Date('2026-03-28T22:15:00.000Z');

const settings = Object.assign(new TicketSettings(), {
  tenantId: 'ten_1',
  urgentHours: 1,
  highHours: 8,
  normalHours: 48,
  lowHours: 0,
  updatedAt: CREATED,
});

describe('ticket SLA', () => {
  it('should give a tenant that never changed its SLA the defaults, urgent first', () => {
    expect(dueHoursOf(null)).toEqual({ urgent: 4, high: 24, normal: 72, low: 168 });
    expect(dueHoursOf(null)).toEqual(DEFAULT_DUE_HOURS);
  });

  it("should answer a copy of the defaults, which a caller's change cannot alter", () => {
    dueHoursOf(null).urgent = 999;
    expect(dueHoursOf(null).urgent).toBe(4);
  });

  it("should read the tenant's own hours per priority", () => {
    expect(dueHoursOf(settings)).toEqual({ urgent: 1, high: 8, normal: 48, low: 0 });
  });

  it("should make a ticket due its priority's hours after it opened, in UTC, across a month end", () => {
    expect(slaDueAt(null, TicketPriority.Urgent, CREATED).toISOString()).toBe('2026-03-29T02:15:00.000Z');
    expect(slaDueAt(null, TicketPriority.Normal, CREATED).toISOString()).toBe('2026-03-31T22:15:00.000Z');
    expect(slaDueAt(null, TicketPriority.Low, CREATED).toISOString()).toBe('2026-04-04T22:15:00.000Z');
    expect(slaDueAt(settings, TicketPriority.High, CREATED).toISOString()).toBe('2026-03-29T06:15:00.000Z');
  });

  it('should make a ticket of 0 hours due the moment it opened', () => {
    expect(slaDueAt(settings, TicketPriority.Low, CREATED)).toEqual(CREATED);
  });

  it('should never make a more urgent priority due later under the defaults', () => {
    const due = TICKET_PRIORITIES.map((priority) => slaDueAt(null, priority, CREATED).getTime());
    const byUrgency = [
      TicketPriority.Urgent,
      TicketPriority.High,
      TicketPriority.Normal,
      TicketPriority.Low,
    ].map((priority) => due[TICKET_PRIORITIES.indexOf(priority)]);
    expect(byUrgency).toEqual([...byUrgency].sort((a, b) => a - b));
  });
});
