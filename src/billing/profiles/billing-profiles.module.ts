import { Module } from '@nestjs/common';
import { EventsModule } from '../../events/events.module';
import { BillingProfilesController } from './billing-profiles.controller';
import { BillingProfilesService } from './billing-profiles.service';

@Module({
  imports: [EventsModule],
  controllers: [BillingProfilesController],
  providers: [BillingProfilesService],
  exports: [BillingProfilesService],
})
export class BillingProfilesModule {}
