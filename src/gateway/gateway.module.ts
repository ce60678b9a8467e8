import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { getStorageToken, ThrottlerModule } from '@nestjs/throttler';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EventsModule } from '../events/events.module';
import { AuthGuard } from './auth/auth.guard';
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
import { TenantsController } from './tenants/tenants.controller';
import { TenantsService } from './tenants/tenants.service';
import { TokensController } from './tokens/tokens.controller';
import { TokensService } from './tokens/tokens.service';

const counterStoreProvider = {
  provide: COUNTER_STORE,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig): CounterStore =>
    config.redisUrl ? new RedisCounterStore(config.redisUrl) : new MemoryCounterStore(),
};

/** Tokens, tenants, authentication, scopes, rate limits and the public gateway endpoints. */
@Module({
  imports: [
    EventsModule,
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => [
        { name: 'default', limit: config.rateLimit.max, ttl: config.rateLimit.windowS * 1000 },
      ],
    }),
  ],
  controllers: [GatewayInfoController, HealthController, TenantsController, TokensController],
  providers: [
    counterStoreProvider,
    { provide: getStorageToken(), useClass: CounterThrottlerStorage },
    AbuseService,
    TenantsService,
    TokensService,
    BootstrapService,
    IdempotencyService,
    // Guards run in this order: the rate limit (and abuse block) first, then authentication and scopes.
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [TenantsService, TokensService, IdempotencyService],
})
export class GatewayModule implements OnApplicationShutdown {
  constructor(@Inject(COUNTER_STORE) private readonly counters: CounterStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.counters.close();
  }
}
