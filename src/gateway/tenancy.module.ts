import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { TenantTime } from './clocks/tenant-time';
import { TestClocksRepository } from './clocks/test-clocks.repository';
import { TestClocksService } from './clocks/test-clocks.service';
import { IdempotencyRepository } from './idempotency/idempotency.repository';
import { TenantSettingsRepository } from './tenants/tenant-settings.repository';
import { TenantsRepository } from './tenants/tenants.repository';
import { TenantsService } from './tenants/tenants.service';
import { TokensRepository } from './tokens/tokens.repository';
import { TokensService } from './tokens/tokens.service';

/**
 * Tenants and tokens without the HTTP edge: what GatewayModule builds its guards on, and all the CLI needs (it has no
 * use for the guards, the rate limiter or the bootstrap token); and the tenant settings billing's documents and
 * numbering read (TenantSettingsRepository); a tenant's test clock and its time (TenantTime), which every worker reads;
 * the idempotency keys' table (GatewayModule's interceptor claims them; a test clock's deletion purges its tenant's).
 */
@Module({
  imports: [EventsModule],
  providers: [
    TenantsRepository,
    TenantSettingsRepository,
    TokensRepository,
    TenantsService,
    TokensService,
    TestClocksRepository,
    TenantTime,
    TestClocksService,
    IdempotencyRepository,
  ],
  exports: [
    TenantsService,
    TokensService,
    TenantSettingsRepository,
    TestClocksRepository,
    TenantTime,
    TestClocksService,
    IdempotencyRepository,
  ],
})
export class TenancyModule {}
