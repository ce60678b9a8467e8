import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { TenantSettingsRepository } from './tenants/tenant-settings.repository';
import { TenantsRepository } from './tenants/tenants.repository';
import { TenantsService } from './tenants/tenants.service';
import { TokensRepository } from './tokens/tokens.repository';
import { TokensService } from './tokens/tokens.service';

/**
 * Tenants and tokens without the HTTP edge: what GatewayModule builds its guards on, and all the CLI needs (it has no
 * use for the guards, the rate limiter or the bootstrap token); and the tenant settings billing's documents and
 * numbering read (TenantSettingsRepository).
 */
@Module({
  imports: [EventsModule],
  providers: [TenantsRepository, TenantSettingsRepository, TokensRepository, TenantsService, TokensService],
  exports: [TenantsService, TokensService, TenantSettingsRepository],
})
export class TenancyModule {}
