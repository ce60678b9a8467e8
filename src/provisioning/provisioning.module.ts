import { Module, type OnModuleInit } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EventsModule } from '../events';
import { TenancyModule } from '../gateway';
import { SubscribersModule, SubscribersService } from '../subscribers';
import { NETWORK_DRIVER, NoNetworkDriver, type NetworkDriver } from './network/network-driver';
import { RadiusSqlDriver } from './network/radius-sql.driver';
import { IpAssignments } from './ipam/ip-assignments';
import { IpPoolsController } from './ipam/ip-pools.controller';
import { IpPoolsRepository } from './ipam/ip-pools.repository';
import { IpPoolsService } from './ipam/ip-pools.service';
import { NasController } from './nas.controller';
import { NasRepository } from './nas.repository';
import { NasService } from './nas.service';
import { NetworkSessionsController } from './network-sessions.controller';
import { NetworkSessionsService } from './network-sessions.service';
import { AccountingRetentionWorker } from './accounting-retention-worker';
import { NetworkSettingsController } from './network-settings.controller';
import { NetworkSettingsRepository } from './network-settings.repository';
import { NetworkSettingsService } from './network-settings.service';
import { NetworkSettingsWorker } from './network-settings-worker';
import { profileOf } from './network/suspension-profile';
import { ProvisioningOrdersController } from './provisioning-orders.controller';
import { ProvisioningOrdersRepository } from './provisioning-orders.repository';
import { ProvisioningOrdersService } from './provisioning-orders.service';
import { ProvisioningWorker } from './provisioning-worker';
import { ProvisioningPurge } from './provisioning-purge';
import { RadiusRepository } from './radius.repository';
import { ServicePlansController } from './service-plans.controller';
import { ServicePlansRepository } from './service-plans.repository';
import { ServicePlansService } from './service-plans.service';
import { ServicesController } from './services.controller';
import { pppoeUsernameSearch, ServicesRepository } from './services.repository';
import { ServiceImportsService } from './service-imports.service';
import { ServiceLifecycle } from './service-lifecycle';
import { ServicesService } from './services.service';
import { DataCapWorker } from './data-caps/data-cap-worker';
import { DataCapsController } from './data-caps/data-caps.controller';
import { DataCapsRepository } from './data-caps/data-caps.repository';
import { DataCapsService } from './data-caps/data-caps.service';

/** NETWORK_DRIVER picks what carries orders to the network (docs/network.md). */
function networkDriver(
  config: AppConfig,
  radius: RadiusRepository,
  dataSource: DataSource,
  nas: NasRepository,
  settings: NetworkSettingsRepository,
): NetworkDriver {
  if (config.provisioning.driver === 'none') {
    return new NoNetworkDriver();
  }
  return new RadiusSqlDriver(radius, {
    nasAt: (tenantId, ip) => nas.findByIp(dataSource.manager, tenantId, ip),
    suspension: async (tenantId) => profileOf(await settings.find(dataSource.manager, tenantId)),
    timeoutMs: config.provisioning.dynamicAuthTimeoutMs,
    retries: config.provisioning.dynamicAuthRetries,
  });
}

/** FreeRADIUS's tables: in the API's database, or in RADIUS_DATABASE_URL's. */
function radiusRepository(config: AppConfig, dataSource: DataSource): RadiusRepository {
  return new RadiusRepository(dataSource, config.provisioning.radiusDatabaseUrl);
}

@Module({
  imports: [EventsModule, SubscribersModule, TenancyModule],
  controllers: [
    ServicePlansController,
    ServicesController,
    ProvisioningOrdersController,
    NasController,
    NetworkSessionsController,
    IpPoolsController,
    DataCapsController,
    NetworkSettingsController,
  ],
  providers: [
    { provide: RadiusRepository, useFactory: radiusRepository, inject: [APP_CONFIG, getDataSourceToken()] },
    {
      provide: NETWORK_DRIVER,
      useFactory: networkDriver,
      inject: [APP_CONFIG, RadiusRepository, getDataSourceToken(), NasRepository, NetworkSettingsRepository],
    },
    NasRepository,
    IpPoolsRepository,
    IpPoolsService,
    IpAssignments,
    NetworkSettingsRepository,
    NetworkSettingsService,
    NetworkSettingsWorker,
    AccountingRetentionWorker,
    ServiceLifecycle,
    NasService,
    NetworkSessionsService,
    ServicePlansService,
    ServicesService,
    ServiceImportsService,
    ProvisioningOrdersService,
    ProvisioningWorker,
    ServicePlansRepository,
    ServicesRepository,
    ProvisioningOrdersRepository,
    ProvisioningPurge,
    DataCapsRepository,
    DataCapsService,
    DataCapWorker,
  ],
  exports: [
    DataCapsService,
    ProvisioningPurge,
    ServicesService,
    ServiceImportsService,
    ServiceLifecycle,
    ServicePlansService,
    ServicePlansRepository,
    ProvisioningOrdersRepository,
  ],
})
export class ProvisioningModule implements OnModuleInit {
  constructor(private readonly subscribers: SubscribersService) {}

  /** Subscribers' search finds a subscriber by the PPPoE username of a service (provisioning's table). */
  onModuleInit(): void {
    this.subscribers.useSearchSource(pppoeUsernameSearch);
  }
}
