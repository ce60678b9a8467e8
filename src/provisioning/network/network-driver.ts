import type { ProvisioningOrder, Service, ServicePlan, SessionOutcome } from '../provisioning.entity';
import type { SuspensionProfile } from './suspension-profile';

/** What an order did to the service's open sessions (RFC 5176), recorded on the order. */
export interface DriverOutcome {
  disconnect?: SessionOutcome;
  coa?: SessionOutcome;
}

/**
 * The dynamic pools a service is linked to, by name: the NAS picks its address from `framedPool` (Framed-Pool) and
 * its delegated prefix from `delegatedPrefixPool` (Delegated-IPv6-Prefix-Pool). Null: none.
 */
export interface ServicePools {
  framedPool: string | null;
  delegatedPrefixPool: string | null;
}

export const NO_POOLS: ServicePools = { framedPool: null, delegatedPrefixPool: null };

/** What a change of a tenant's suspension profile did to its suspended subscribers online (RFC 5176). */
export interface SuspensionChangeOutcome {
  /** The open sessions of the tenant's suspended usernames. */
  sessions: number;
  disconnect: SessionOutcome;
}

/** Nest's token for the configured driver (NETWORK_DRIVER). */
export const NETWORK_DRIVER = Symbol('NETWORK_DRIVER');

/**
 * Carries an order to the network. `service` and `plan` are the service as it is once the order completes (its new
 * status and plan); applying the same order twice must leave the network as applying it once (the worker retries,
 * and takes over the orders of a worker that died).
 */
export interface NetworkDriver {
  readonly name: string;
  apply(
    order: ProvisioningOrder,
    service: Service,
    plan: ServicePlan,
    pools?: ServicePools,
  ): Promise<DriverOutcome | void>;
  /**
   * The tenant's suspension mode or walled garden changed (its network settings): bring its suspended services to the
   * new profile, and end their open sessions so they log in again into it. `realm` is `<tenant slug>/`. Idempotent.
   */
  suspensionChanged?(
    tenantId: string,
    realm: string,
    profile: SuspensionProfile,
  ): Promise<SuspensionChangeOutcome>;
  close?(): Promise<void>;
}

/** A driver's failure; a transient one is retried with backoff (PROVISIONING_RETRY_DELAYS_S), any other fails. */
export class DriverError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** NETWORK_DRIVER=none: for setups with no network; orders complete without reaching anything (said at boot). */
export class NoNetworkDriver implements NetworkDriver {
  readonly name = 'none';

  async apply(): Promise<void> {
    // Nothing to reach.
  }
}
