import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { SubscriberImportsService } from './subscriber-imports.service';
import { SubscribersController } from './subscribers.controller';
import { SubscribersRepository } from './subscribers.repository';
import { SubscribersService } from './subscribers.service';
import { SubscriberSearchRepository } from './subscriber-search.repository';
import { SubscribersPurge } from './subscribers-purge';
import { SearchTextStatistics } from './search-text-sample';

@Module({
  imports: [EventsModule],
  controllers: [SubscribersController],
  providers: [
    SubscribersService,
    SubscriberImportsService,
    SubscribersRepository,
    SubscriberSearchRepository,
    SearchTextStatistics,
    SubscribersPurge,
  ],
  exports: [SubscribersService, SubscriberImportsService, SubscribersPurge],
})
export class SubscribersModule {}
