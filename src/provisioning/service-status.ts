import { ApiError } from '../common/errors/api-error';
import type { Transitions } from '../common/state-machine';

export enum ServiceStatus {
  Pending = 'pending',
  Active = 'active',
  Suspended = 'suspended',
  Terminated = 'terminated',
}

export const SERVICE_STATUSES = Object.values(ServiceStatus);

/** The service lifecycle as data; a service moves only when the order that carries the move completes. */
export const SERVICE_TRANSITIONS: Transitions<ServiceStatus> = {
  [ServiceStatus.Pending]: [ServiceStatus.Active, ServiceStatus.Terminated],
  [ServiceStatus.Active]: [ServiceStatus.Suspended, ServiceStatus.Terminated],
  [ServiceStatus.Suspended]: [ServiceStatus.Active, ServiceStatus.Terminated],
  [ServiceStatus.Terminated]: [],
};

export enum OrderAction {
  Activate = 'activate',
  Suspend = 'suspend',
  Resume = 'resume',
  ChangePlan = 'change_plan',
  Modify = 'modify',
  Terminate = 'terminate',
  /** The data cap worker's: the plan's cap reached (throttle or block), or the period or a top-up restoring it. */
  CapThrottle = 'cap_throttle',
  CapBlock = 'cap_block',
  CapRestore = 'cap_restore',
}

/** What the network applies for a service's data cap (Service.capState). */
export enum CapState {
  Normal = 'normal',
  Throttled = 'throttled',
  Blocked = 'blocked',
}

export const CAP_STATES = Object.values(CapState);

export const CAP_ACTIONS = ['throttle', 'block'] as const;
export type CapAction = (typeof CAP_ACTIONS)[number];

/** The cap state each cap order leaves a service in; any other order leaves it as it was. */
const CAP_STATE_AFTER: Partial<Record<OrderAction, CapState>> = {
  [OrderAction.CapThrottle]: CapState.Throttled,
  [OrderAction.CapBlock]: CapState.Blocked,
  [OrderAction.CapRestore]: CapState.Normal,
};

/** The cap state a service is in once an order of `action` completes. */
export function capStateAfter(action: OrderAction, current: CapState): CapState {
  return CAP_STATE_AFTER[action] ?? current;
}

export const ORDER_ACTIONS = Object.values(OrderAction);

/** What POST /services/{id}/actions takes; activate retries a pending service whose activation failed. */
export const SERVICE_ACTIONS = [
  OrderAction.Activate,
  OrderAction.Suspend,
  OrderAction.Resume,
  OrderAction.ChangePlan,
  OrderAction.Terminate,
] as const;
export type ServiceAction = (typeof SERVICE_ACTIONS)[number];

export enum OrderStatus {
  Acknowledged = 'acknowledged',
  InProgress = 'in_progress',
  Completed = 'completed',
  Failed = 'failed',
  Cancelled = 'cancelled',
}

export const ORDER_STATUSES = Object.values(OrderStatus);
export const OPEN_ORDER_STATUSES: readonly OrderStatus[] = [OrderStatus.Acknowledged, OrderStatus.InProgress];

/**
 * Each action as data: the service states it may start from, and the state the service is in once its order
 * completes (null: the state it had). Anything else is refused.
 */
export const ACTION_RULES: Readonly<
  Record<OrderAction, { from: readonly ServiceStatus[]; to: ServiceStatus | null }>
> = {
  [OrderAction.Activate]: { from: [ServiceStatus.Pending], to: ServiceStatus.Active },
  [OrderAction.Suspend]: { from: [ServiceStatus.Active], to: ServiceStatus.Suspended },
  [OrderAction.Resume]: { from: [ServiceStatus.Suspended], to: ServiceStatus.Active },
  [OrderAction.ChangePlan]: {
    from: [ServiceStatus.Pending, ServiceStatus.Active, ServiceStatus.Suspended],
    to: null,
  },
  [OrderAction.Modify]: {
    from: [ServiceStatus.Pending, ServiceStatus.Active, ServiceStatus.Suspended],
    to: null,
  },
  [OrderAction.Terminate]: {
    from: [ServiceStatus.Pending, ServiceStatus.Active, ServiceStatus.Suspended],
    to: ServiceStatus.Terminated,
  },
  [OrderAction.CapThrottle]: { from: [ServiceStatus.Active], to: null },
  [OrderAction.CapBlock]: { from: [ServiceStatus.Active], to: null },
  [OrderAction.CapRestore]: { from: [ServiceStatus.Active, ServiceStatus.Suspended], to: null },
};

/** The status a service in `current` has once an order of `action` completes; 409 when the action is refused. */
export function statusAfter(action: OrderAction, current: ServiceStatus): ServiceStatus {
  const rule = ACTION_RULES[action];
  if (!rule.from.includes(current)) {
    throw new ApiError(
      'invalid_state_transition',
      `A ${current} service cannot take ${action}; ${action} applies to ${rule.from.join(', ')} services.`,
      'action',
    );
  }
  return rule.to ?? current;
}
