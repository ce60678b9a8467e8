// The automation domain's public surface (docs/architecture.md).
export { AutomationEffect, AutomationRuleSetting, EventConsumer } from './automation.entity';
export { AutomationModule } from './automation.module';
export { TenantDunningDay } from './tenant-dunning-day';
export { AutomationPurge } from './automation-purge';
