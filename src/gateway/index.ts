// The gateway's public surface: other modules import the gateway only from here (docs/architecture.md).
// Entities first: a domain whose entity references Tenant may be loaded while this file is still loading.
export { Tenant } from './tenants/tenant.entity';
export { ApiToken } from './tokens/api-token.entity';
export { TestClock, TestClockStatus, TEST_CLOCK_STATUSES } from './clocks/test-clock.entity';
export { IdempotencyKey } from './idempotency/idempotency-key.entity';
export { CreateTenantDto } from './tenants/dto/tenant.dto';
export { CreateTokenDto } from './tokens/dto/token.dto';
export { DEFAULT_TENANT_SLUG, TenantsService } from './tenants/tenants.service';
export { tenantsTable } from './tenants/tenants.repository';
export type { TenantSettings } from './tenants/tenant-settings.entity';
export {
  TenantSettingsRepository,
  type TenantIssuerRow,
  type TenantMailing,
} from './tenants/tenant-settings.repository';
export { DEFAULT_LOCALE, DEFAULT_TIME_ZONE } from './tenants/dto/tenant-settings.dto';
export { liveTenant, TestClocksRepository } from './clocks/test-clocks.repository';
export { TenantTime } from './clocks/tenant-time';
export { MAX_ADVANCE_DAYS, type TenantPurge, TestClocksService } from './clocks/test-clocks.service';
export {
  AdvanceTestClockDto,
  CreatedTestClockDto,
  CreateTestClockDto,
  TestClockDto,
} from './clocks/dto/test-clock.dto';
export { TokensService } from './tokens/tokens.service';
export type { IssuedToken, NewToken } from './tokens/tokens.service';
export { SkipIdempotency, IdempotencyInterceptor } from './idempotency/idempotency.interceptor';
export { ADMIN_TOKEN_FILE, BootstrapService } from './bootstrap.service';
export { TenancyModule } from './tenancy.module';
export { GatewayModule } from './gateway.module';
export { AbuseService } from './rate-limit/abuse.service';
export { COUNTER_STORE, type CounterStore } from './rate-limit/counter-store';
