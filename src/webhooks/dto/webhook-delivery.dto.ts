import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { DeliveryStatus, WebhookDelivery } from '../webhook.entity';
import { ApiInteger } from '../../common/swagger/api-types';
import { OneOrMoreOf } from '../../common/validation/comma-list';

const DELIVERY_STATUSES = Object.values(DeliveryStatus);

export class ListDeliveriesQueryDto extends PageQueryDto {
  @ApiProperty({
    example: 'whk_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The subscription whose deliveries.',
  })
  @IsString()
  @MaxLength(64)
  webhook_id: string;

  @OneOrMoreOf(DELIVERY_STATUSES, { description: 'Only deliveries in one of these states.' })
  status?: DeliveryStatus[];
}

/** One event owed to one subscription, and where it stands. */
@ApiSchema({ description: 'An event queued for one webhook, with its state and attempts.' })
export class WebhookDeliveryDto {
  @ApiProperty({ example: 'dlv_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'whk_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The webhook it goes to.' })
  webhook_id: string;
  @ApiProperty({ example: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The event it carries.' })
  event_id: string;
  @ApiProperty({ example: 'subscriber.created' }) event_type: string;
  @ApiProperty({
    enum: DELIVERY_STATUSES,
    example: 'pending',
    description:
      'pending: waiting for its next attempt; succeeded; failed: retries exhausted or 410; cancelled: its ' +
      'subscription was disabled before it went out (re-enabling does not resume it; redeliver sends it again).',
  })
  status: string;
  @ApiInteger({ example: 1, minimum: 0, description: 'Attempts made so far.' }) attempts: number;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When the next attempt is due; null when none is.',
  })
  next_attempt_at: string | null;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) updated_at: string;

  static from(delivery: WebhookDelivery): WebhookDeliveryDto {
    return {
      id: delivery.id,
      webhook_id: delivery.webhookId,
      event_id: delivery.eventId,
      event_type: delivery.eventType,
      status: delivery.status,
      attempts: delivery.attempts,
      next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
      created_at: delivery.createdAt.toISOString(),
      updated_at: delivery.updatedAt.toISOString(),
    };
  }
}
