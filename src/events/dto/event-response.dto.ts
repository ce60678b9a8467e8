import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { EventRecord } from '../event.entity';
import { EVENT_TYPES } from '../event-types';

@ApiSchema({
  description:
    'Who made a change: a token, the system, the command line, an automation rule, or a subscriber in the portal.',
})
class ActorDto {
  @ApiProperty({
    enum: ['token', 'system', 'cli', 'automation', 'subscriber'],
    description:
      'token: an API call; automation: a rule; system: the server itself; cli: an operator command; subscriber: ' +
      'the subscriber itself, through a portal session (docs/portal.md).',
  })
  type: string;

  @ApiProperty({
    nullable: true,
    type: String,
    example: 'tok_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description:
      'The token id (type token), the rule id (type automation) or the subscriber id (type subscriber); null otherwise.',
  })
  id: string | null;
}

@ApiSchema({
  name: 'EventData',
  description:
    'What an event carries: `object`, the record after the change, and per type the keys that describe the change ' +
    '(`changed_fields`, `from`/`to`/`reason`, …; the webhook payloads in `webhooks` type them per event type).',
})
class EventDataDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The record as its own endpoint returns it (a subscriber, an invoice, …).',
  })
  object: object;
}

@ApiSchema({
  name: 'Event',
  description: 'One entry of the audit log: a change to a record, who made it, and the record after it.',
})
export class EventResponseDto {
  @ApiProperty({ example: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({
    enum: Object.keys(EVENT_TYPES),
    example: 'subscriber.created',
    description: 'What happened.',
  })
  type: string;

  @ApiProperty({
    nullable: true,
    type: String,
    example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The id of the record changed (its prefix names its kind); null when the event has none.',
  })
  subject_id: string | null;

  @ApiProperty({
    type: EventDataDto,
    description: '`object` is the record after the change; other keys describe the change.',
    example: { object: { id: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', status: 'active' } },
  })
  data: { object: object; [key: string]: unknown };

  @ApiProperty({
    nullable: true,
    type: String,
    example: 'req_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description:
      'The X-Request-ID of the API call that caused it; null for background work (rules, workers).',
  })
  request_id: string | null;

  @ApiProperty({ type: ActorDto, description: 'Who made the change.' })
  actor: ActorDto;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  static from(event: EventRecord): EventResponseDto {
    return {
      id: event.id,
      type: event.type,
      subject_id: event.subjectId,
      data: event.data,
      request_id: event.requestId,
      actor: event.actor,
      created_at: event.createdAt.toISOString(),
    };
  }
}
