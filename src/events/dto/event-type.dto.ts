import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { EVENT_TYPES, EventType } from '../event-types';

@ApiSchema({ description: 'An event type the service emits, with what it means.' })
export class EventTypeDto {
  @ApiProperty({
    example: 'subscriber.created',
    enum: Object.keys(EVENT_TYPES),
    description: 'The event type, as events and webhook payloads name it.',
  })
  type: EventType;

  @ApiProperty({ example: EVENT_TYPES['subscriber.created'] })
  description: string;

  /** The whole catalogue, in its order. */
  static all(): EventTypeDto[] {
    return (Object.entries(EVENT_TYPES) as [EventType, string][]).map(([type, description]) => ({
      type,
      description,
    }));
  }
}
