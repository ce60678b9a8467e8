// The provisioning domain's public surface: other modules import provisioning only from here (docs/architecture.md).
// Entities first: a domain whose entity references a service may be loaded while this file is still loading.
export { ProvisioningOrder, Service, ServicePlan } from './provisioning.entity';
export { OrderAction, OrderStatus, ServiceStatus } from './service-status';
export { NETWORK_DRIVER, DriverError, type NetworkDriver } from './network/network-driver';
export { ServicesService } from './services.service';
export { DataCapsService, type BillingDaysLookup, type TopUpCharge } from './data-caps/data-caps.service';
export { ServiceImportsService } from './service-imports.service';
export type { ServiceImportResult, ServiceImportRow } from './service-imports.service';
export { ImportServiceDto } from './dto/service-import.dto';
export { ServicePlansService, type TaxRatesCheck } from './service-plans.service';
export { ServicePlansRepository, servicePlansTable, type PlanPricing } from './service-plans.repository';
export { ProvisioningOrdersRepository, provisioningOrdersTable } from './provisioning-orders.repository';
export { servicesTable } from './services.repository';
export { ServiceLifecycle } from './service-lifecycle';
export { ProvisioningPurge } from './provisioning-purge';
export { ProvisioningModule } from './provisioning.module';
