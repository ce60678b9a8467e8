import { Module } from '@nestjs/common';
import { BillingModule } from '../billing';
import { EventsModule } from '../events';
import { ProvisioningModule } from '../provisioning';
import { SubscribersModule } from '../subscribers';
import { ImportWorker } from './import-worker';
import { ImportsController } from './imports.controller';
import { ImportsRepository } from './imports.repository';
import { ImportsPurge } from './imports-purge';
import { ImportsService } from './imports.service';

@Module({
  imports: [EventsModule, SubscribersModule, ProvisioningModule, BillingModule],
  controllers: [ImportsController],
  providers: [ImportsService, ImportsRepository, ImportWorker, ImportsPurge],
  exports: [ImportsPurge],
})
export class ImportsModule {}
