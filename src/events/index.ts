// The events module's public surface: other modules import events only from here (docs/architecture.md).
// The entity first: a domain whose entity references EventRecord may be loaded while this file is still loading.
export { EventRecord } from './event.entity';
export { EVENT_TYPES, isEventPattern, type EventType } from './event-types';
export { eventRecord, patternsFor, type NewEvent } from './new-event';
export {
  eventCtes,
  EventsRepository,
  type EventCtes,
  type EventPlaceholders,
  type EventStatementShape,
  type LogEvent,
  type OutboxFanOut,
} from './events.repository';
export { EventsService, type DeliveriesQueuedListener } from './events.service';
export { EventsModule } from './events.module';
