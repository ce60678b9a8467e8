import { Module } from '@nestjs/common';
import { BillingModule } from '../billing';
import { SubscribersModule } from '../subscribers';
import { ExportsController } from './exports.controller';
import { ExportsService } from './exports.service';

/** CSV exports of the lists (docs/exports.md): owns no table, reads through the lists' own services. */
@Module({
  imports: [SubscribersModule, BillingModule],
  controllers: [ExportsController],
  providers: [ExportsService],
})
export class ExportsModule {}
