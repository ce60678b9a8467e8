import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { SubscribersModule } from '../subscribers';
import { TicketCommentsRepository } from './ticket-comments.repository';
import { TicketCommentsService } from './ticket-comments.service';
import { TicketSettingsController } from './ticket-settings.controller';
import { TicketSettingsRepository } from './ticket-settings.repository';
import { TicketSettingsService } from './ticket-settings.service';
import { TicketsController } from './tickets.controller';
import { TicketsRepository } from './tickets.repository';
import { TicketsPurge } from './tickets-purge';
import { TicketsService } from './tickets.service';

@Module({
  imports: [EventsModule, SubscribersModule],
  controllers: [TicketsController, TicketSettingsController],
  providers: [
    TicketsService,
    TicketCommentsService,
    TicketSettingsService,
    TicketsRepository,
    TicketCommentsRepository,
    TicketSettingsRepository,
    TicketsPurge,
  ],
  exports: [TicketsService, TicketsPurge],
})
export class TicketsModule {}
