import { ApiError } from '../common/errors/api-error';
import {
  assertTransition,
  canTransition,
  SUBSCRIBER_STATUSES,
  SubscriberStatus as S,
} from './subscriber-status';

const ALLOWED = new Set([
  'prospect>pending',
  'prospect>active',
  'prospect>archived',
  'pending>active',
  'pending>cancelled',
  'active>suspended',
  'active>cancelled',
  'suspended>active',
  'suspended>cancelled',
  'cancelled>active',
  'cancelled>archived',
]);

describe('subscriber state machine', () => {
  const pairs = SUBSCRIBER_STATUSES.flatMap((from) => SUBSCRIBER_STATUSES.map((to) => [from, to] as const));

  it('should cover all 36 pairs of states', () => {
    expect(pairs).toHaveLength(36);
  });

  it.each(pairs)('should decide %s → %s as the lifecycle table of the README says', (from, to) => {
    const allowed = ALLOWED.has(`${from}>${to}`);
    expect(canTransition(from, to)).toBe(allowed);
    if (allowed) {
      expect(assertTransition(from, to)).toBe(to);
    } else {
      expect(() => assertTransition(from, to)).toThrow(ApiError);
    }
  });

  it('should name both states in the refusal', () => {
    try {
      assertTransition(S.Archived, S.Active);
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe('invalid_state_transition');
      expect((error as ApiError).message).toContain('from archived to active');
    }
  });
});
