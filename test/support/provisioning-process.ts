/**
 * Server processes for the provisioning crash and multi-instance suites.
 *
 * This file is also preloaded into those server processes (`node -r <this file> src/main.ts`). There, and only when
 * the process was started with TEST_PROVISIONING_HOLD (`<ms>:<tenant slug>`), it wraps the radius-sql driver: every
 * `apply` really writes the RADIUS rows and prints `provisioning-test applied <order id>` on stdout; an order of that
 * tenant is then held for that many milliseconds before the worker may record it. That keeps a suite's orders in
 * flight long enough for a SIGKILL to land between the network write and the completion, and lets it count which
 * process carried out which order; orders other suites left open in the shared database are not held. Nothing of
 * src/ changes; the jest process never sets the variable, so importing the helpers patches nothing.
 */
import { RadiusSqlDriver } from '../../src/provisioning/network/radius-sql.driver';
import { SERVER_DEFAULTS, type ServerChild, startServer, traced } from './server-process';

const APPLIED = /^provisioning-test applied (\S+)$/;

const HOLD = /^(\d+):(\S+)$/.exec(process.env.TEST_PROVISIONING_HOLD ?? '');
if (HOLD) {
  const [, holdMs, tenantSlug] = HOLD;
  const apply = RadiusSqlDriver.prototype.apply;
  RadiusSqlDriver.prototype.apply = async function (this: RadiusSqlDriver, order, service, plan) {
    const outcome = await apply.call(this, order, service, plan);
    process.stdout.write(`provisioning-test applied ${order.id}\n`);
    if (service.radiusUsername.startsWith(`${tenantSlug}/`)) {
      await new Promise((resolve) => setTimeout(resolve, Number(holdMs)));
    }
    return outcome;
  };
}

/** The order ids of the `provisioning-test applied` lines `server` printed from now on, in order, repeats kept. */
export function tracedApplies(server: ServerChild): () => string[] {
  return traced(server, APPLIED, (match) => match[1]);
}

export type ProvisioningServer = ServerChild & {
  /** The order ids this process' driver applied (each line it printed), in order, repeats kept. */
  applied(): string[];
};

/**
 * `src/main.ts` in its own Node process on `databaseUrl`, its radius-sql driver traced and holding the orders of
 * tenant `hold.tenantSlug` `hold.ms` after each apply (see above). Resolves once it answers /health/live; rejects
 * with its output when it ends before listening.
 */
export async function startProvisioningServer(
  databaseUrl: string,
  hold: { ms: number; tenantSlug: string },
  env: Record<string, string> = {},
): Promise<ProvisioningServer> {
  let applied: () => string[] = () => [];
  const server = await startServer({
    onSpawn: (spawned) => (applied = tracedApplies(spawned)),
    preloads: [__filename],
    env: {
      ...SERVER_DEFAULTS,
      DATABASE_URL: databaseUrl,
      NETWORK_DRIVER: 'radius-sql',
      TEST_PROVISIONING_HOLD: `${hold.ms}:${hold.tenantSlug}`,
      ...env,
    },
  });
  return Object.assign(server, { applied });
}
