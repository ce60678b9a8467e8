import type { EntityManager } from 'typeorm';

/**
 * What a subscriber still owes, per currency with a balance above 0 (none: nothing owed). Supplied by billing
 * (SubscribersService.useOutstandingBalance), which owns the ledger and imports subscribers: subscribers never
 * imports billing. Runs in the caller's transaction.
 */
export type OutstandingBalancePolicy = (
  manager: EntityManager,
  tenantId: string,
  subscriberId: string,
) => Promise<{ currency: string; balance: number }[]>;

/**
 * The rule that moves a subscriber with its services (docs/automation.md): a service created for a prospect makes it
 * pending; a service activated makes a prospect or pending subscriber active. Built in, not switchable: its changes
 * are written in the service's (or the order's) own transaction, and the event log names it as their actor.
 */
export const SUBSCRIBER_FOLLOWS_SERVICE = 'subscriber_follows_service';
