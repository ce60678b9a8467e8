import { Module } from '@nestjs/common';
import { BillingProfilesModule } from '../billing/profiles/billing-profiles.module';
import { EventsModule } from '../events/events.module';
import { SubscribersController } from './subscribers.controller';
import { SubscribersService } from './subscribers.service';

@Module({
  imports: [EventsModule, BillingProfilesModule],
  controllers: [SubscribersController],
  providers: [SubscribersService],
  exports: [SubscribersService],
})
export class SubscribersModule {}
