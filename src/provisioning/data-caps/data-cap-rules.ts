import { addMonths } from '../../common/dates';
import { CapState, OrderAction, ServiceStatus } from '../service-status';

/** The share of the allowance at which `service.cap_warning` is emitted (once per period). */
export const WARNING_SHARE = 0.8;

/** The billing period holding `day` on the grid of `billingDay`: [start, end) (billing's gridPeriod). */
export function periodOn(day: string, billingDay: number): { start: string; end: string } {
  const sameMonth = `${day.slice(0, 8)}${String(billingDay).padStart(2, '0')}`;
  const start = sameMonth <= day ? sameMonth : addMonths(sameMonth, -1);
  return { start, end: addMonths(start, 1) };
}

/** What the cap worker decides for one service (docs/network.md, "Data caps"). */
export interface CapDecision {
  warn: boolean;
  /** The cap order to open: reach the cap (throttle, block) or restore; null: none. */
  action: OrderAction | null;
}

/** The decision for a service from its usage and allowance now (pure: the worker's and the tests' rule). */
export function decide(input: {
  status: ServiceStatus;
  capState: CapState;
  capBytes: number | null;
  capAction: string | null;
  usedBytes: number;
  allowanceBytes: number | null;
  warned: boolean;
}): CapDecision {
  const { capState, capBytes, usedBytes, allowanceBytes } = input;
  if (capBytes === null || allowanceBytes === null) {
    return { warn: false, action: capState === CapState.Normal ? null : OrderAction.CapRestore };
  }
  const warn = !input.warned && usedBytes >= WARNING_SHARE * allowanceBytes;
  if (capState !== CapState.Normal) {
    return { warn, action: usedBytes < allowanceBytes ? OrderAction.CapRestore : null };
  }
  if (input.status === ServiceStatus.Active && usedBytes >= allowanceBytes) {
    return {
      warn,
      action: input.capAction === 'block' ? OrderAction.CapBlock : OrderAction.CapThrottle,
    };
  }
  return { warn, action: null };
}
