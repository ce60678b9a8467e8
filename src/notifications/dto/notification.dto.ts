import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { ApiInteger } from '../../common/swagger/api-types';
import { Optional } from '../../common/validation/optional';
import { NOTIFICATION_KINDS } from '../kinds';
import {
  Notification,
  NotificationAttempt,
  NOTIFICATION_STATUSES,
  NotificationStatus,
  SKIP_REASONS,
} from '../notification.entity';
import { OneOrMoreOf } from '../../common/validation/comma-list';

export class ListNotificationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'Only those of this subscriber.',
  })
  @Optional()
  @IsString()
  @MaxLength(64)
  subscriber_id?: string;

  @OneOrMoreOf(NOTIFICATION_KINDS, { description: 'Only those of one of these kinds.' })
  kind?: string[];

  @OneOrMoreOf(NOTIFICATION_STATUSES, { description: 'Only those in one of these states.' })
  status?: NotificationStatus[];
}

@ApiSchema({ description: 'One try at sending a notification, and what the mail server answered.' })
export class NotificationAttemptDto {
  @ApiInteger({ example: 1, minimum: 1 }) attempt: number;
  @ApiProperty({
    enum: ['sent', 'temporary', 'permanent', 'refused'],
    example: 'temporary',
    description:
      'sent: the server took it; temporary: a 4xx, a timeout or no connection (tried again); permanent: a 5xx ' +
      '(not tried again); refused: a message that can never be sent (an address that is not one mailbox).',
  })
  outcome: string;
  @ApiProperty({
    example: 451,
    nullable: true,
    type: 'integer',
    description: "The server's reply code; null when none.",
  })
  smtp_code: number | null;
  @ApiProperty({
    example: '451 4.3.0 Try again later',
    nullable: true,
    type: String,
    maxLength: 600,
    description: 'What the server (or the network) answered, up to 500 characters.',
  })
  response: string | null;
  @ApiInteger({ example: 120, minimum: 0 }) duration_ms: number;
  @ApiProperty({ nullable: true, type: String, description: 'When it is tried again; null when it is not.' })
  next_attempt_at: string | null;
  @ApiProperty({ example: '2026-11-21T10:00:01.000Z' }) created_at: string;

  static from(attempt: NotificationAttempt): NotificationAttemptDto {
    return {
      attempt: attempt.attempt,
      outcome: attempt.outcome,
      smtp_code: attempt.smtpCode,
      response: attempt.response,
      duration_ms: attempt.durationMs,
      next_attempt_at: attempt.nextAttemptAt?.toISOString() ?? null,
      created_at: attempt.createdAt.toISOString(),
    };
  }
}

@ApiSchema({ description: 'A message to a subscriber, caused by an event: queued, sent, failed or skipped.' })
export class NotificationDto {
  @ApiProperty({ example: 'ntf_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({
    enum: NOTIFICATION_KINDS,
    example: 'invoice_issued',
    description: 'What it tells the subscriber (docs/notifications.md lists the kinds and their triggers).',
  })
  kind: string;
  @ApiProperty({
    example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description:
      'Who it is for; null until known (a ticket reply on a ticket without a subscriber stays null).',
  })
  subscriber_id: string | null;
  @ApiProperty({ example: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The event that caused it.' })
  event_id: string;
  @ApiProperty({ example: 'invoice.finalized' }) event_type: string;
  @ApiProperty({
    enum: NOTIFICATION_STATUSES,
    example: 'sent',
    description:
      'queued: waiting to be sent (again); sent: the mail server took it; failed: refused for good (5xx), or every ' +
      'retry failed; skipped: nothing was sent, `reason` says why.',
  })
  status: string;
  @ApiProperty({
    nullable: true,
    type: String,
    maxLength: 600,
    example: null,
    description:
      `skipped: one of ${SKIP_REASONS.join(', ')}. failed: the server's answer (or why the message could not be ` +
      "built). queued after a failed attempt: that attempt's answer. Otherwise null.",
  })
  reason: string | null;
  @ApiProperty({
    example: 'jane@example.com',
    nullable: true,
    type: String,
    maxLength: 320,
    description: 'The address it went (or was to go) to; null until read.',
  })
  recipient: string | null;
  @ApiProperty({
    example: 'Invoice INV-2026-000042 from Example ISP',
    nullable: true,
    type: String,
    maxLength: 1000,
  })
  subject: string | null;
  @ApiProperty({
    example: '<ntf_01JD3Z6W3R4T5Y6U7I8O9P0QAB@example.com>',
    nullable: true,
    type: String,
    maxLength: 300,
    description: 'Its Message-ID: the same on every attempt.',
  })
  message_id: string | null;
  @ApiInteger({ example: 1, minimum: 0, description: 'Attempts made so far.' }) attempts: number;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When it is (tried again) due; null when it is not.',
  })
  next_attempt_at: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'When the server took it.' })
  sent_at: string | null;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;
  @ApiProperty({ example: '2026-11-21T10:00:01.000Z' }) updated_at: string;

  static from(notification: Notification): NotificationDto {
    return {
      id: notification.id,
      kind: notification.kind,
      subscriber_id: notification.subscriberId,
      event_id: notification.eventId,
      event_type: notification.eventType,
      status: notification.status,
      reason: notification.reason,
      recipient: notification.recipient,
      subject: notification.subject,
      message_id: notification.messageId,
      attempts: notification.attempts,
      next_attempt_at: notification.nextAttemptAt?.toISOString() ?? null,
      sent_at: notification.sentAt?.toISOString() ?? null,
      created_at: notification.createdAt.toISOString(),
      updated_at: notification.updatedAt.toISOString(),
    };
  }
}

@ApiSchema({ description: 'A notification with every attempt at sending it, oldest first.' })
export class NotificationDetailDto extends NotificationDto {
  @ApiProperty({ type: [NotificationAttemptDto] }) attempt_log: NotificationAttemptDto[];

  static withAttempts(notification: Notification, attempts: NotificationAttempt[]): NotificationDetailDto {
    return { ...NotificationDto.from(notification), attempt_log: attempts.map(NotificationAttemptDto.from) };
  }
}
