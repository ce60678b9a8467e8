import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import { TenantsService } from '../gateway';
import { IpPoolsRepository } from './ipam/ip-pools.repository';
import { NasRepository } from './nas.repository';
import { NetworkSettingsRepository } from './network-settings.repository';
import { ProvisioningOrdersRepository } from './provisioning-orders.repository';
import { RadiusRepository } from './radius.repository';
import { ServicePlansRepository } from './service-plans.repository';
import { ServicesRepository } from './services.repository';
import { DataCapsRepository } from './data-caps/data-caps.repository';

/**
 * Deletes a test tenant's provisioning orders, services, plans, IP pools, NASes and network settings, and what
 * FreeRADIUS holds of them: the rows of its usernames (`<slug>/…`), its suspended group and its NAS clients (its test
 * clock is deleted, docs/test-clocks.md).
 */
@Injectable()
export class ProvisioningPurge {
  constructor(
    private readonly tenants: TenantsService,
    private readonly orders: ProvisioningOrdersRepository,
    private readonly services: ServicesRepository,
    private readonly plans: ServicePlansRepository,
    private readonly nas: NasRepository,
    private readonly radius: RadiusRepository,
    private readonly pools: IpPoolsRepository,
    private readonly caps: DataCapsRepository,
    private readonly networkSettings: NetworkSettingsRepository,
  ) {}

  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    const { manager } = tx;
    // In the transaction: a second connection could wait for the pool that the purge's lock keeps busy.
    const tenant = await this.tenants.findIn(tx, tenantId);
    const usernames = await this.services.radiusUsernames(manager, tenantId);
    await this.orders.purgeTenant(manager, tenantId);
    await this.caps.purgeTenant(manager, tenantId);
    await this.services.purgeTenant(manager, tenantId);
    await this.pools.purgeTenant(manager, tenantId);
    await this.plans.purgeTenant(manager, tenantId);
    const addresses = await this.nas.purgeTenant(manager, tenantId);
    await this.networkSettings.purgeTenant(manager, tenantId);
    // A service's username is `<tenant slug>/<pppoe_username>` (docs/network.md): the realm takes any left behind.
    await this.radius.purge(manager, `${tenant?.slug ?? tenantId}/`, usernames, addresses);
  }
}
