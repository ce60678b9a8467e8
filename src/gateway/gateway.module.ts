import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { getStorageToken, ThrottlerModule } from '@nestjs/throttler';
import { DeclaredInputGuard } from '../common/http/declared-input.guard';
import { JsonBodyGuard } from '../common/http/json-body.guard';
import { UNROUTED_LIMITER } from '../common/http/unrouted-limiter';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DatabaseHealth } from '../database/database-health';
import { EventsModule } from '../events';
import { AuthGuard } from './auth/auth.guard';
import { PortalSessions } from './auth/portal-sessions';
import { BootstrapService } from './bootstrap.service';
import { IdempotencyService } from './idempotency/idempotency.service';
import { GatewayInfoController } from './info/gateway-info.controller';
import { HealthController } from './info/health.controller';
import { AbuseService } from './rate-limit/abuse.service';
import {
  COUNTER_STORE,
  type CounterStore,
  MemoryCounterStore,
  RedisCounterStore,
} from './rate-limit/counter-store';
import { CounterThrottlerStorage } from './rate-limit/counter-throttler.storage';
import { RateLimitGuard } from './rate-limit/rate-limit.guard';
import { TenancyModule } from './tenancy.module';
import { TenantSettingsController } from './tenants/tenant-settings.controller';
import { TenantSettingsService } from './tenants/tenant-settings.service';
import { TenantsController } from './tenants/tenants.controller';
import { TokensController } from './tokens/tokens.controller';

const counterStoreProvider = {
  provide: COUNTER_STORE,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig): CounterStore =>
    config.redisUrl ? new RedisCounterStore(config.redisUrl) : new MemoryCounterStore(),
};

/**
 * The HTTP edge: authentication, scopes, rate limits, the body guard, idempotency, the bootstrap token and the gateway
 * endpoints, over TenancyModule's tenants and tokens (re-exported).
 */
@Module({
  imports: [
    TenancyModule,
    EventsModule,
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => [
        { name: 'default', limit: config.rateLimit.max, ttl: config.rateLimit.windowS * 1000 },
      ],
    }),
  ],
  controllers: [
    GatewayInfoController,
    HealthController,
    TenantsController,
    TokensController,
    TenantSettingsController,
  ],
  providers: [
    counterStoreProvider,
    { provide: getStorageToken(), useClass: CounterThrottlerStorage },
    AbuseService,
    BootstrapService,
    IdempotencyService,
    DatabaseHealth,
    TenantSettingsService,
    PortalSessions,
    RateLimitGuard,
    { provide: UNROUTED_LIMITER, useExisting: RateLimitGuard },
    // Guards run in this order: the abuse block and rate limit, authentication and scopes, and only then the body.
    { provide: APP_GUARD, useExisting: RateLimitGuard },
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: JsonBodyGuard },
    // Then what the route does not declare: an unknown query parameter, a body sent to an operation that takes none.
    { provide: APP_GUARD, useClass: DeclaredInputGuard },
  ],
  exports: [TenancyModule, IdempotencyService, UNROUTED_LIMITER, COUNTER_STORE, AbuseService],
})
export class GatewayModule implements OnApplicationShutdown {
  constructor(@Inject(COUNTER_STORE) private readonly counters: CounterStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.counters.close();
  }
}
