import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, registerDecorator } from 'class-validator';
import { Optional } from '../../common/validation/optional';
import { alwaysSent, NOTIFICATION_KIND_SPECS, NOTIFICATION_KINDS, type NotificationKind } from '../kinds';
import type { NotificationPreference } from '../notification.entity';

/**
 * The kinds a subscriber cannot switch off, in the order of NOTIFICATION_KINDS: legal notices, and the portal's sign-in
 * mail (kinds.ts alwaysSent).
 */
export const LEGAL_NOTICE_KINDS: readonly NotificationKind[] = NOTIFICATION_KINDS.filter(alwaysSent);

/** The message a PATCH switching such a kind off is refused with (422 validation_failed, field = the kind). */
export function legalNoticeMessage(kind: NotificationKind): string {
  const what = NOTIFICATION_KIND_SPECS[kind].legalNotice ? 'a legal notice' : 'portal sign-in mail';
  return `${kind} is ${what}: it is always sent and cannot be switched off (send true, or leave it out).`;
}

function isLegalNotice(kind: NotificationKind): boolean {
  return alwaysSent(kind);
}

function kindDescription(kind: NotificationKind): string {
  const spec = NOTIFICATION_KIND_SPECS[kind];
  return isLegalNotice(kind)
    ? `${spec.description} Always true: it cannot be switched off.`
    : `${spec.description} Whether the subscriber wants it (default true).`;
}

/** A legal notice's switch may only be true: false is refused, naming the kind. */
function IsNotSwitchedOff(kind: NotificationKind): PropertyDecorator {
  return (object: object, property: string | symbol) =>
    registerDecorator({
      name: 'isNotSwitchedOff',
      target: object.constructor,
      propertyName: String(property),
      options: { message: legalNoticeMessage(kind) },
      validator: { validate: (value: unknown) => value !== false },
    });
}

/** Whether the subscriber is sent each kind of notification (every kind true until switched off). */
@ApiSchema({
  description:
    'Whether the subscriber is sent each kind of notification; legal notices are always true. The tenant may still ' +
    'switch a kind off for all its subscribers (notifications in GET /tenant/settings).',
})
export class SubscriberNotificationSwitchesDto implements Record<NotificationKind, boolean> {
  invoice_issued: boolean;
  payment_received: boolean;
  credit_note_issued: boolean;
  invoice_reminder: boolean;
  suspended_for_non_payment: boolean;
  service_restored: boolean;
  service_activated: boolean;
  ticket_reply: boolean;
  portal_invite: boolean;
  portal_sign_in_code: boolean;
}

/**
 * PATCH's body: each kind sent is switched on (true) or off (false); a kind left out stays. A legal notice may be sent
 * true (nothing changes) but not false. Properties are added per kind below, from the one list of kinds.
 */
@ApiSchema({
  description:
    'The kinds to switch on (true) or off (false) for the subscriber; absent kinds stay. Legal notices ' +
    `(${LEGAL_NOTICE_KINDS.join(', ')}) cannot be switched off: false is refused (422 validation_failed).`,
})
export class UpdateNotificationPreferencesDto implements Partial<Record<NotificationKind, boolean>> {}

/** A subscriber's notification preferences (GET/PATCH /subscribers/{id}/notification-preferences). */
@ApiSchema({
  description:
    'Which kinds of notification the subscriber is sent: every kind is on until switched off, and legal notices ' +
    '(legal_notices) cannot be.',
})
export class NotificationPreferencesDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  subscriber_id: string;

  @ApiProperty({ type: SubscriberNotificationSwitchesDto })
  preferences: SubscriberNotificationSwitchesDto;

  @ApiProperty({
    enum: NOTIFICATION_KINDS,
    isArray: true,
    maxItems: NOTIFICATION_KINDS.length,
    uniqueItems: true,
    example: [...LEGAL_NOTICE_KINDS],
    description:
      'The kinds that cannot be switched off: documents the issuer has to deliver, and the portal sign-in mail.',
  })
  legal_notices: NotificationKind[];

  @ApiProperty({
    nullable: true,
    type: String,
    example: '2026-11-21T10:00:00.000Z',
    description: 'When a kind was last switched; null while the subscriber never changed one.',
  })
  updated_at: string | null;

  /** The answer from the rows stored (a kind without one is on; a legal notice is on whatever its row says). */
  static from(subscriberId: string, rows: readonly NotificationPreference[]): NotificationPreferencesDto {
    const stored = new Map(rows.map((row) => [row.kind, row.enabled]));
    const latest = rows.reduce<Date | null>(
      (at, row) => (at === null || row.updatedAt > at ? row.updatedAt : at),
      null,
    );
    return {
      subscriber_id: subscriberId,
      preferences: Object.fromEntries(
        NOTIFICATION_KINDS.map((kind) => [kind, isLegalNotice(kind) || (stored.get(kind) ?? true)]),
      ) as unknown as SubscriberNotificationSwitchesDto,
      legal_notices: [...LEGAL_NOTICE_KINDS],
      updated_at: latest?.toISOString() ?? null,
    };
  }
}

// One property per kind, from the one list (src/common/notification-kinds.ts), so a new kind shows up at once.
for (const kind of NOTIFICATION_KINDS) {
  const legal = isLegalNotice(kind);
  applyDecorators(
    ApiPropertyOptional({
      type: Boolean,
      example: legal ? true : kind !== 'payment_received',
      description: legal
        ? `${NOTIFICATION_KIND_SPECS[kind].description} Always sent: true is accepted (nothing changes), false is refused.`
        : `${NOTIFICATION_KIND_SPECS[kind].description} true: send it; false: do not.`,
    }),
    Optional(),
    IsBoolean({ message: `${kind} must be true or false` }),
    ...(legal ? [IsNotSwitchedOff(kind)] : []),
  )(UpdateNotificationPreferencesDto.prototype, kind);
  ApiProperty({ type: Boolean, example: true, description: kindDescription(kind) })(
    SubscriberNotificationSwitchesDto.prototype,
    kind,
  );
}
