import type { NetworkDriverName } from './app-config';
import { type RadacctConfig, radacctConfig } from './radacct-config';

type Env = Record<string, string | undefined>;

/** app-config's checked readers (a bad value stops the boot naming the variable). */
interface Readers {
  integer: (env: Env, name: string, fallback: number, min: number, max: number) => number;
  boolean: (env: Env, name: string, fallback: boolean) => boolean;
  delays: (env: Env, name: string, fallback?: number[]) => number[];
  url: (env: Env, name: string, protocols: string[]) => string | null;
  networkDriver: (env: Env) => NetworkDriverName;
}

export interface ProvisioningConfig {
  /** Run the provisioning worker in this process (several instances may all run it). */
  workerEnabled: boolean;
  pollMs: number;
  /** How long a claimed order is its worker's; a dead worker's order is taken up again after it. */
  leaseMs: number;
  /** Waits between attempts after a transient driver error; once spent, the order fails. */
  retryDelaysS: number[];
  /** What carries orders to the network: FreeRADIUS's SQL tables, or nothing (no network). */
  driver: NetworkDriverName;
  /** The database FreeRADIUS reads, when it is not the API's own. */
  radiusDatabaseUrl: string | null;
  /** RFC 5176 Disconnect/CoA requests: how long to wait for a NAS's answer, and how many times to send again. */
  dynamicAuthTimeoutMs: number;
  dynamicAuthRetries: number;
  /** How often the data cap worker measures the capped services' usage (docs/network.md, "Data caps"). */
  dataCapPollMs: number;
  /** radacct's retention (RADACCT_*; docs/network.md, "Accounting at scale"). */
  radacct: RadacctConfig;
}

/** The provisioning worker, the network driver, the data cap worker and radacct's retention (docs/network.md). */
export function provisioningConfig(env: Env, read: Readers): ProvisioningConfig {
  const { integer, boolean, delays, url, networkDriver } = read;
  return {
    workerEnabled: boolean(env, 'PROVISIONING_WORKER_ENABLED', true),
    pollMs: integer(env, 'PROVISIONING_POLL_MS', 1000, 10, 60_000),
    leaseMs: integer(env, 'PROVISIONING_LEASE_MS', 60_000, 100, 3_600_000),
    retryDelaysS: delays(env, 'PROVISIONING_RETRY_DELAYS_S', [5, 30, 120, 600, 1800]),
    driver: networkDriver(env),
    radiusDatabaseUrl: url(env, 'RADIUS_DATABASE_URL', ['postgres:', 'postgresql:']),
    dynamicAuthTimeoutMs: integer(env, 'RADIUS_COA_TIMEOUT_MS', 1000, 50, 30_000),
    dynamicAuthRetries: integer(env, 'RADIUS_COA_RETRIES', 2, 0, 10),
    dataCapPollMs: integer(env, 'DATA_CAP_POLL_MS', 60_000, 10, 3_600_000),
    radacct: radacctConfig(env, integer),
  };
}
