import { ApiError } from '../common/errors/api-error';

export enum SubscriberStatus {
  Prospect = 'prospect',
  Pending = 'pending',
  Active = 'active',
  Suspended = 'suspended',
  Cancelled = 'cancelled',
  Archived = 'archived',
}

export const SUBSCRIBER_STATUSES = Object.values(SubscriberStatus);

/** The states a subscriber may be created in. */
export const CREATABLE_STATUSES = [
  SubscriberStatus.Prospect,
  SubscriberStatus.Pending,
  SubscriberStatus.Active,
  SubscriberStatus.Suspended,
] as const;

export enum SuspensionReason {
  NonPayment = 'non_payment',
  Manual = 'manual',
  Fraud = 'fraud',
}

export const SUSPENSION_REASONS = Object.values(SuspensionReason);

/** DESIGN §4: the lifecycle as data. Anything not listed is refused. */
export const SUBSCRIBER_TRANSITIONS: Readonly<Record<SubscriberStatus, readonly SubscriberStatus[]>> = {
  [SubscriberStatus.Prospect]: [SubscriberStatus.Pending, SubscriberStatus.Active, SubscriberStatus.Archived],
  [SubscriberStatus.Pending]: [SubscriberStatus.Active, SubscriberStatus.Cancelled],
  [SubscriberStatus.Active]: [SubscriberStatus.Suspended, SubscriberStatus.Cancelled],
  [SubscriberStatus.Suspended]: [SubscriberStatus.Active, SubscriberStatus.Cancelled],
  [SubscriberStatus.Cancelled]: [SubscriberStatus.Active, SubscriberStatus.Archived],
  [SubscriberStatus.Archived]: [],
};

export function canTransition(from: SubscriberStatus, to: SubscriberStatus): boolean {
  return SUBSCRIBER_TRANSITIONS[from].includes(to);
}

/** Returns `to` when the move is allowed, else throws 409 invalid_state_transition naming both states. */
export function assertTransition(from: SubscriberStatus, to: SubscriberStatus): SubscriberStatus {
  if (!canTransition(from, to)) {
    throw new ApiError(
      'invalid_state_transition',
      `A subscriber cannot move from ${from} to ${to}.` +
        (SUBSCRIBER_TRANSITIONS[from].length ? ` Allowed: ${SUBSCRIBER_TRANSITIONS[from].join(', ')}.` : ''),
      'status',
    );
  }
  return to;
}
