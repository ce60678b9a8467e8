import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { EventsModule } from '../events/events.module';
import { TenantsService } from '../gateway/tenants/tenants.service';
import { TokensService } from '../gateway/tokens/tokens.service';

/**
 * What the CLI needs and nothing more: the database, the event log and the tenant and token services.
 * Not GatewayModule: it installs the HTTP guards and the bootstrap token, which a command line has no use for.
 */
@Module({})
export class CliModule {
  /** `databaseUrl` is the resolved one: DATABASE_URL, or the embedded server's. */
  static forRoot(config: AppConfig, databaseUrl: string, poolMax: number): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(databaseUrl, poolMax, config.databaseTimeouts),
        EventsModule,
      ],
      providers: [TenantsService, TokensService],
    };
  }
}
