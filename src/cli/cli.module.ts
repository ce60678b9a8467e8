import { DynamicModule, Module } from '@nestjs/common';
import type { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { TenancyModule } from '../gateway';
import { WebhooksOutboxModule } from '../webhooks';

/**
 * What the CLI needs and nothing more: the database and the gateway's tenants and tokens (and the event log they
 * write). TenancyModule, not GatewayModule: that one installs the HTTP guards and the bootstrap token.
 */
@Module({})
export class CliModule {
  /** `databaseUrl` is the resolved one: DATABASE_URL, or the embedded server's. */
  static forRoot(config: AppConfig, databaseUrl: string, poolMax: number, clock?: Clock): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config, clock),
        DatabaseModule.forRoot(databaseUrl, poolMax, config.databaseTimeouts),
        TenancyModule,
        // Events written here still queue their webhook deliveries, for a server's worker to send.
        WebhooksOutboxModule,
      ],
    };
  }
}
