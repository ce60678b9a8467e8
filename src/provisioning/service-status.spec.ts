import { ApiError } from '../common/errors/api-error';
import { canTransition } from '../common/state-machine';
import {
  ORDER_ACTIONS,
  OrderAction,
  SERVICE_STATUSES,
  SERVICE_TRANSITIONS,
  ServiceStatus,
  statusAfter,
} from './service-status';

const S = ServiceStatus;

/** Every (action, status) written out: the status after the order, or null when refused. */
const EXPECTED: Record<OrderAction, Record<ServiceStatus, ServiceStatus | null>> = {
  activate: { pending: S.Active, active: null, suspended: null, terminated: null },
  suspend: { pending: null, active: S.Suspended, suspended: null, terminated: null },
  resume: { pending: null, active: null, suspended: S.Active, terminated: null },
  change_plan: { pending: S.Pending, active: S.Active, suspended: S.Suspended, terminated: null },
  modify: { pending: S.Pending, active: S.Active, suspended: S.Suspended, terminated: null },
  terminate: { pending: S.Terminated, active: S.Terminated, suspended: S.Terminated, terminated: null },
  cap_throttle: { pending: null, active: S.Active, suspended: null, terminated: null },
  cap_block: { pending: null, active: S.Active, suspended: null, terminated: null },
  cap_restore: { pending: null, active: S.Active, suspended: S.Suspended, terminated: null },
};

const CASES = ORDER_ACTIONS.flatMap((action) => SERVICE_STATUSES.map((status) => [action, status] as const));

describe('service actions', () => {
  it('covers all 36 pairs', () => {
    expect(CASES).toHaveLength(36);
  });

  it.each(CASES)('%s on a %s service', (action, status) => {
    const expected = EXPECTED[action][status];
    if (expected !== null) {
      expect(statusAfter(action, status)).toBe(expected);
      if (expected !== status) {
        expect(canTransition(SERVICE_TRANSITIONS, status, expected)).toBe(true);
      }
      return;
    }
    let thrown: unknown;
    try {
      statusAfter(action, status);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).code).toBe('invalid_state_transition');
    expect((thrown as ApiError).field).toBe('action');
  });
});
