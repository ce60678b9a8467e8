import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { EventsModule, EventsService } from '../../events';
import { NOTIFICATIONS_FAN_OUT } from '../notifications.repository';

/** Hands the event writer the notifications events cause, written in the event's statement (the outbox). */
@Injectable()
export class NotificationsOutbox implements OnModuleInit {
  constructor(private readonly events: EventsService) {}

  onModuleInit(): void {
    this.events.useFanOut(NOTIFICATIONS_FAN_OUT);
  }
}

/**
 * The fan-out alone, without the API or the worker: NotificationsModule imports it, and so does a process that writes
 * events but sends nothing (the CLI), so its events still queue their notifications for the server's worker.
 */
@Module({ imports: [EventsModule], providers: [NotificationsOutbox] })
export class NotificationsOutboxModule {}
