import type { ProvisioningOrder, Service, ServicePlan } from '../provisioning.entity';
import { RadiusRepository, SUSPENDED_GROUP, type RadiusUser } from '../radius.repository';
import { ServiceStatus } from '../service-status';
import { DriverError, type NetworkDriver } from './network-driver';

/**
 * What FreeRADIUS's SQL module should read for a service (docs/network.md): an active service logs in with its
 * password and gets its plan's rate (MikroTik and WISPr attributes) and its static address; a suspended one is put in
 * the `suspended` group, whose check item rejects it; a pending or terminated one has no rows at all.
 */
export function radiusUser(service: Service, plan: ServicePlan): RadiusUser | null {
  const password = { attribute: 'Cleartext-Password', op: ':=', value: service.pppoePassword };
  switch (service.status) {
    case ServiceStatus.Active:
      return {
        check: [password],
        reply: [
          { attribute: 'Mikrotik-Rate-Limit', op: ':=', value: `${plan.uploadKbps}k/${plan.downloadKbps}k` },
          { attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: String(plan.downloadKbps * 1000) },
          { attribute: 'WISPr-Bandwidth-Max-Up', op: ':=', value: String(plan.uploadKbps * 1000) },
          ...(service.staticIpv4
            ? [{ attribute: 'Framed-IP-Address', op: ':=', value: service.staticIpv4 }]
            : []),
        ],
        groups: [],
      };
    case ServiceStatus.Suspended:
      return { check: [password], reply: [], groups: [SUSPENDED_GROUP] };
    case ServiceStatus.Pending:
    case ServiceStatus.Terminated:
      return null;
  }
}

/** NETWORK_DRIVER=radius-sql, the default: writes FreeRADIUS's standard SQL tables, one username per transaction. */
export class RadiusSqlDriver implements NetworkDriver {
  readonly name = 'radius-sql';
  private groupsReady = false;

  constructor(private readonly radius: RadiusRepository) {}

  async apply(_order: ProvisioningOrder, service: Service, plan: ServicePlan): Promise<void> {
    try {
      if (!this.groupsReady) {
        await this.radius.ensureSuspendedGroup();
        this.groupsReady = true;
      }
      await this.radius.rewrite(service.radiusUsername, radiusUser(service, plan));
    } catch (error) {
      // The RADIUS database unreachable, a lock timeout, a failover: worth another try later.
      throw new DriverError(`radius-sql: ${(error as Error).message}`, true);
    }
  }

  close(): Promise<void> {
    return this.radius.close();
  }
}
