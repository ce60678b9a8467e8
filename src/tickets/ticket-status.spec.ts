import { ApiError } from '../common/errors/api-error';
import { assertTransition, canTransition, TICKET_STATUSES, TicketStatus } from './ticket-status';

const S = TicketStatus;

/** The workflow written out pair by pair, independently of TICKET_TRANSITIONS. */
const ALLOWED = new Set([
  `${S.New}>${S.Open}`,
  `${S.Open}>${S.PendingCustomer}`,
  `${S.Open}>${S.OnHold}`,
  `${S.Open}>${S.Resolved}`,
  `${S.PendingCustomer}>${S.Open}`,
  `${S.PendingCustomer}>${S.Resolved}`,
  `${S.OnHold}>${S.Open}`,
  `${S.OnHold}>${S.Resolved}`,
  `${S.Resolved}>${S.Open}`,
  `${S.Resolved}>${S.Closed}`,
  `${S.New}>${S.Cancelled}`,
  `${S.Open}>${S.Cancelled}`,
  `${S.PendingCustomer}>${S.Cancelled}`,
  `${S.OnHold}>${S.Cancelled}`,
  `${S.Resolved}>${S.Cancelled}`,
]);

const PAIRS = TICKET_STATUSES.flatMap((from) => TICKET_STATUSES.map((to) => [from, to] as const));

describe('ticket workflow', () => {
  it('covers all 49 pairs', () => {
    expect(PAIRS).toHaveLength(49);
  });

  it.each(PAIRS)('%s → %s', (from, to) => {
    const allowed = ALLOWED.has(`${from}>${to}`);
    expect(canTransition(from, to)).toBe(allowed);
    if (allowed) {
      expect(assertTransition(from, to)).toBe(to);
      return;
    }
    let thrown: unknown;
    try {
      assertTransition(from, to);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const apiError = thrown as ApiError;
    expect(apiError.code).toBe('invalid_state_transition');
    expect(apiError.field).toBe('status');
    expect(apiError.message).toContain(`from ${from} to ${to}`);
  });

  it('keeps closed and cancelled final', () => {
    for (const to of TICKET_STATUSES) {
      expect(canTransition(S.Closed, to)).toBe(false);
      expect(canTransition(S.Cancelled, to)).toBe(false);
    }
  });
});
