import { ApiProperty } from '@nestjs/swagger';
import { EventRecord } from '../event.entity';

class ActorDto {
  @ApiProperty({ enum: ['token', 'system', 'cli', 'automation'] })
  type: string;

  @ApiProperty({ nullable: true, type: String, example: 'tok_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string | null;
}

export class EventResponseDto {
  @ApiProperty({ example: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'subscriber.created' })
  type: string;

  @ApiProperty({ nullable: true, type: String, example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  subject_id: string | null;

  @ApiProperty({
    type: 'object',
    description: '`object` is the record after the change; other keys describe the change.',
    example: { object: { id: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', status: 'active' } },
    required: ['object'],
    properties: {
      object: {
        type: 'object',
        additionalProperties: true,
        description: 'The record as its own endpoint returns it (a subscriber, an invoice, …).',
      },
    },
    additionalProperties: true,
  })
  data: { object: object; [key: string]: unknown };

  @ApiProperty({ nullable: true, type: String, example: 'req_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  request_id: string | null;

  @ApiProperty({ type: ActorDto })
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
