import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { EventsModule, EventsService } from '../events';
import { DELIVERIES_FAN_OUT } from './webhook-deliveries.repository';

/** Hands the event writer the deliveries every event queues in its own statement (the transactional outbox). */
@Injectable()
export class WebhooksOutbox implements OnModuleInit {
  constructor(private readonly events: EventsService) {}

  onModuleInit(): void {
    this.events.useFanOut(DELIVERIES_FAN_OUT);
  }
}

/**
 * The outbox fan-out alone, without the API or the worker: WebhooksModule imports it, and so may a process that
 * writes events but delivers none (the CLI), so its events still queue their deliveries for the server's worker.
 */
@Module({ imports: [EventsModule], providers: [WebhooksOutbox] })
export class WebhooksOutboxModule {}
