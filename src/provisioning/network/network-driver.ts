import type { ProvisioningOrder, Service, ServicePlan, SessionOutcome } from '../provisioning.entity';

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
