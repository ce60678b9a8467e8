import {
  assertTransition as assertMove,
  canTransition as canMove,
  type Transitions,
} from '../common/state-machine';

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

/** The lifecycle as data (the README's "Lifecycle" table under "Subscribers"). Anything not listed is refused. */
export const SUBSCRIBER_TRANSITIONS: Transitions<SubscriberStatus> = {
  [SubscriberStatus.Prospect]: [SubscriberStatus.Pending, SubscriberStatus.Active, SubscriberStatus.Archived],
  [SubscriberStatus.Pending]: [SubscriberStatus.Active, SubscriberStatus.Cancelled],
  [SubscriberStatus.Active]: [SubscriberStatus.Suspended, SubscriberStatus.Cancelled],
  [SubscriberStatus.Suspended]: [SubscriberStatus.Active, SubscriberStatus.Cancelled],
  [SubscriberStatus.Cancelled]: [SubscriberStatus.Active, SubscriberStatus.Archived],
  [SubscriberStatus.Archived]: [],
};

export function canTransition(from: SubscriberStatus, to: SubscriberStatus): boolean {
  return canMove(SUBSCRIBER_TRANSITIONS, from, to);
}

/** Returns `to` when the move is allowed, else throws 409 invalid_state_transition naming both states. */
export function assertTransition(from: SubscriberStatus, to: SubscriberStatus): SubscriberStatus {
  return assertMove(SUBSCRIBER_TRANSITIONS, 'a subscriber', from, to);
}
