import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { TenantsRepository } from './tenants/tenants.repository';
import { TenantsService } from './tenants/tenants.service';
import { TokensRepository } from './tokens/tokens.repository';
import { TokensService } from './tokens/tokens.service';

/**
 * Tenants and tokens without the HTTP edge: what GatewayModule builds its guards on, and all the CLI needs (it has no
 * use for the guards, the rate limiter or the bootstrap token).
 */
@Module({
  imports: [EventsModule],
  providers: [TenantsRepository, TokensRepository, TenantsService, TokensService],
  exports: [TenantsService, TokensService],
})
export class TenancyModule {}
