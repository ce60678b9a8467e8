import { Module } from '@nestjs/common';
import { EventTypesController } from './event-types.controller';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

@Module({
  controllers: [EventsController, EventTypesController],
  providers: [EventsService],
  exports: [EventsService],
})
export class EventsModule {}
