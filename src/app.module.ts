import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { EnvelopeInterceptor } from './common/envelope/envelope.interceptor';
import { EtagInterceptor } from './common/http/etag.interceptor';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { ApiValidationPipe } from './common/validation/validation.pipe';
import type { Clock } from './common/clock';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { EventsModule } from './events';
import { GatewayModule, IdempotencyInterceptor } from './gateway';
import { WebhooksModule } from './webhooks';
import { NotificationsModule } from './notifications';
import { SubscribersModule } from './subscribers';
import { BillingModule } from './billing';
import { TicketsModule } from './tickets';
import { ProvisioningModule } from './provisioning';
import { AutomationModule } from './automation';
import { ExportsModule } from './exports';
import { ImportsModule } from './imports';
import { TestClocksModule } from './test-clocks';
import { PortalBindingInterceptor, PortalModule } from './portal';

@Module({})
export class AppModule {
  /** `databaseUrl` is the resolved one: DATABASE_URL, or the embedded server's. */
  static forRoot(config: AppConfig, databaseUrl: string, poolMax: number, clock?: Clock): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, clock),
        DatabaseModule.forRoot(databaseUrl, poolMax, config.databaseTimeouts),
        GatewayModule,
        EventsModule,
        SubscribersModule,
        BillingModule,
        TicketsModule,
        ProvisioningModule,
        AutomationModule,
        TestClocksModule,
        WebhooksModule,
        NotificationsModule,
        ExportsModule,
        ImportsModule,
        PortalModule,
      ],
      providers: [
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        // Interceptors nest in this order: the envelope outermost, idempotency inside it (it stores the enveloped answer).
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        // Inside the envelope (it tags `data`, never `meta`), outside idempotency (a replay carries the tag too).
        { provide: APP_INTERCEPTOR, useClass: EtagInterceptor },
        // Outside idempotency: a portal session's request is held to its subscriber before anything, a replay included.
        { provide: APP_INTERCEPTOR, useExisting: PortalBindingInterceptor },
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }
}
