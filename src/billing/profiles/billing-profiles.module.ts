import { Module } from '@nestjs/common';
import { EventsModule } from '../../events';
import { BillingProfilesController } from './billing-profiles.controller';
import { BillingProfilesRepository } from './billing-profiles.repository';
import { BillingProfilesService } from './billing-profiles.service';

@Module({
  imports: [EventsModule],
  controllers: [BillingProfilesController],
  providers: [BillingProfilesRepository, BillingProfilesService],
  exports: [BillingProfilesService],
})
export class BillingProfilesModule {}
