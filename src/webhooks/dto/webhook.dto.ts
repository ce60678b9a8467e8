import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsString,
  IsUrl,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { Trim } from '../../common/validation/text';
import { Webhook, WebhookAttempt } from '../webhook.entity';
import { IsEventPatterns } from './event-patterns';
import { ApiInteger } from '../../common/swagger/api-types';
import { Optional, OptionalNullable } from '../../common/validation/optional';

@ApiSchema({ description: 'A new webhook subscription: where to send and which events.' })
export class CreateWebhookDto {
  @ApiProperty({
    example: 'https://example.com/hooks/isp',
    description:
      'Where each event is POSTed, signed; https and a public address unless the server allows otherwise.',
  })
  @Trim()
  @IsString()
  @MaxLength(2048)
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'url must be an http(s) URL' },
  )
  url: string;

  @ApiProperty({
    example: ['subscriber.*', 'invoice.paid'],
    description:
      'Known event types (GET /api/v1/event-types), `prefix.*` of a known prefix, or `*` for all; anything else ' +
      'is 422 naming the entry (`events.1`).',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @IsEventPatterns()
  events: string[];

  @ApiPropertyOptional({ example: 'CRM sync' })
  @Optional()
  @IsString()
  @MaxLength(500)
  description?: string;

  @ApiPropertyOptional({ example: true, default: true, description: 'false: no event is delivered to it.' })
  @Optional()
  @IsBoolean()
  enabled?: boolean;
}

@ApiSchema({ description: 'The webhook fields to change; absent ones stay as they are.' })
export class UpdateWebhookDto {
  @ApiPropertyOptional({ example: 'https://example.com/hooks/isp' })
  @ValidateIf((_o, value) => value !== undefined)
  @Trim()
  @IsString()
  @MaxLength(2048)
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'url must be an http(s) URL' },
  )
  url?: string;

  @ApiPropertyOptional({ example: ['*'], description: 'As on registration; replaces the list.' })
  @ValidateIf((_o, value) => value !== undefined)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @IsEventPatterns()
  events?: string[];

  @ApiPropertyOptional({ example: 'CRM sync', nullable: true, type: String })
  @OptionalNullable()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({
    example: true,
    description: 'true re-enables a subscription disabled after failures.',
  })
  @ValidateIf((_o, value) => value !== undefined)
  @IsBoolean()
  enabled?: boolean;
}

@ApiSchema({
  description: 'A webhook subscription: where events are sent and which ones (never its secret).',
})
export class WebhookDto {
  @ApiProperty({ example: 'whk_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'https://crm.example.net/hooks/isp', description: 'Where each event is POSTed.' })
  url: string;
  @ApiProperty({
    example: ['subscriber.*'],
    description: 'Event types or patterns (`subscriber.*`, `*`) it receives.',
  })
  events: string[];
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({
    example: true,
    description: 'false: nothing is delivered (turned off by PATCH, or by the service; see disabled_reason).',
  })
  enabled: boolean;
  @ApiProperty({ nullable: true, type: String, example: null, description: 'Why the service disabled it.' })
  disabled_reason: string | null;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) updated_at: string;

  static from(webhook: Webhook): WebhookDto {
    return {
      id: webhook.id,
      url: webhook.url,
      events: webhook.events,
      description: webhook.description,
      enabled: webhook.enabled,
      disabled_reason: webhook.disabledReason,
      created_at: webhook.createdAt.toISOString(),
      updated_at: webhook.updatedAt.toISOString(),
    };
  }
}

@ApiSchema({ description: 'A webhook subscription with its signing secret, shown in this answer only.' })
export class WebhookWithSecretDto extends WebhookDto {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    nullable: true,
    type: String,
    description:
      'Shown in this response only. An idempotent replay of a registration answers null here (the secret is ' +
      'never stored with the key): call rotate-secret for a new one.',
  })
  secret: string | null;

  static override from(webhook: Webhook): WebhookWithSecretDto {
    const answer: WebhookWithSecretDto = { ...WebhookDto.from(webhook), secret: webhook.secret };
    // Not enumerable, so never serialised: the form an idempotency key stores and replays (RedactedOnReplay).
    Object.defineProperty(answer, 'replayForm', { value: () => ({ ...answer, secret: null }) });
    return answer;
  }
}

@ApiSchema({ description: 'The test event queued for a webhook.' })
export class WebhookTestDto {
  @ApiProperty({ example: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The test event (webhook.test).' })
  event_id: string;
  @ApiProperty({ example: 'dlv_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'Its delivery to this webhook.' })
  delivery_id: string;
}

@ApiSchema({
  description: 'One attempt to deliver an event to a webhook: the answer or error, and the next try.',
})
export class WebhookAttemptDto {
  @ApiProperty({ example: 'att_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'dlv_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The delivery it belongs to.' })
  delivery_id: string;
  @ApiProperty({ example: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The event sent.' })
  event_id: string;
  @ApiProperty({ example: 'subscriber.created' }) event_type: string;
  @ApiInteger({ example: 1, minimum: 1, description: 'Which try of the delivery this was, from 1.' })
  attempt: number;
  @ApiInteger({
    example: 500,
    nullable: true,
    description: "The receiver's HTTP status; null when no answer came (see error).",
  })
  status_code: number | null;
  @ApiInteger({ example: 42, minimum: 0, description: 'How long the request took, in milliseconds.' })
  duration_ms: number;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'Why no answer came (timeout, connection refused); null when the receiver answered.',
  })
  error: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'First KiB of the answer.' }) response_body:
    string | null;
  @ApiProperty({ nullable: true, type: String, description: 'When the next try is due; null when none is.' })
  next_attempt_at: string | null;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;

  static from(attempt: WebhookAttempt): WebhookAttemptDto {
    return {
      id: attempt.id,
      delivery_id: attempt.deliveryId,
      event_id: attempt.eventId,
      event_type: attempt.eventType,
      attempt: attempt.attempt,
      status_code: attempt.statusCode,
      duration_ms: attempt.durationMs,
      error: attempt.error,
      response_body: attempt.responseBody,
      next_attempt_at: attempt.nextAttemptAt?.toISOString() ?? null,
      created_at: attempt.createdAt.toISOString(),
    };
  }
}

@ApiSchema({ description: 'A delivery queued again after it failed.' })
export class RedeliveryDto {
  @ApiProperty({ example: 'dlv_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The new delivery.' }) id: string;
  @ApiProperty({ example: 'whk_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The webhook it goes to.' })
  webhook_id: string;
  @ApiProperty({ example: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The event sent again.' })
  event_id: string;
  @ApiProperty({ example: 'pending', description: 'pending: queued for its first attempt.' }) status: string;
}
