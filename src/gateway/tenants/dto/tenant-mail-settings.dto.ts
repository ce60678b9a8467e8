import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  registerDecorator,
} from 'class-validator';
import { parseMailbox } from '../../../config/mailbox';
import { SMTP_TLS_MODES, type SmtpTlsMode } from '../../../config/smtp-settings';
import { NOTIFICATION_KINDS, type NotificationKind } from '../../../common/notification-kinds';
import { Optional, OptionalNullable } from '../../../common/validation/optional';
import { isMailHost } from '../tenant-mail-settings';
import { IsLine, ONE_LINE } from './tenant-settings-fields';

const MAX_HOST = 253;
const MAX_USER = 254;
const MAX_PASSWORD = 1000;
const MAX_MAILBOX = 320;
/** A password may hold any character but a line break or NUL (it goes into an SMTP AUTH command). */
const PASSWORD = /^[^\r\n\0]*$/;

const TLS_DESCRIPTION =
  'none: never encrypted (STARTTLS is not used even when offered); starttls: a plain connection upgraded, failing when the server cannot; tls: TLS from the first byte (SMTPS, usually port 465).';
const MAILBOX_DESCRIPTION = 'One mailbox: billing@example.com or Example ISP <billing@example.com>.';

/**
 * Why a value is not one mailbox, or null. A line break anywhere is refused, even at an end parseMailbox would trim:
 * the value is stored as sent and goes into a header.
 */
function mailboxProblem(value: unknown): string | null {
  if (typeof value !== 'string') {
    return 'is empty';
  }
  if (/[\r\n]/.test(value)) {
    return 'contains a line break';
  }
  const parsed = parseMailbox(value);
  return 'problem' in parsed ? parsed.problem : null;
}

/** One mailbox (src/config/mailbox.ts's grammar: no line break, no second address, no group). */
function IsMailbox() {
  return applyDecorators(IsString(), MaxLength(MAX_MAILBOX), (object: object, property: string | symbol) =>
    registerDecorator({
      name: 'isMailbox',
      target: object.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => mailboxProblem(value) === null,
        defaultMessage: (args) => {
          const problem = mailboxProblem(args?.value) ?? 'is invalid';
          return `${String(property)} must be ${MAILBOX_DESCRIPTION.slice(0, -1).toLowerCase()} (it ${problem})`;
        },
      },
    }),
  );
}

function IsMailHost() {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value)),
    IsString(),
    MaxLength(MAX_HOST),
    (object: object, property: string | symbol) =>
      registerDecorator({
        name: 'isMailHost',
        target: object.constructor,
        propertyName: String(property),
        options: {
          message: `${String(property)} must be a host name (ASCII, an IDN in its xn-- form) or an IP address, IPv6 without brackets`,
        },
        validator: { validate: isMailHost },
      }),
  );
}

/**
 * PATCH's `mail`: merged field by field into the stored server (null clears a field, `mail: null` all of it). The
 * password is write-only: left out it stays, null clears it.
 */
@ApiSchema({ description: "The tenant's own mail server to change; absent fields stay as they are." })
export class MailSettingsUpdateDto {
  @ApiPropertyOptional({
    example: 'smtp.acme-fiber.example',
    maxLength: MAX_HOST,
    nullable: true,
    type: String,
  })
  @OptionalNullable()
  @IsMailHost()
  host?: string | null;

  @ApiPropertyOptional({ example: 587, minimum: 1, maximum: 65535, nullable: true, type: Number })
  @OptionalNullable()
  @IsInt({ message: 'port must be a whole number between 1 and 65535' })
  @Min(1, { message: 'port must be a whole number between 1 and 65535' })
  @Max(65535, { message: 'port must be a whole number between 1 and 65535' })
  port?: number | null;

  @ApiPropertyOptional({
    enum: SMTP_TLS_MODES,
    example: 'starttls',
    nullable: true,
    description: TLS_DESCRIPTION,
  })
  @OptionalNullable()
  @IsIn(SMTP_TLS_MODES, { message: `tls must be one of ${SMTP_TLS_MODES.join(', ')}` })
  tls?: SmtpTlsMode | null;

  @ApiPropertyOptional({
    example: 'billing@acme-fiber.example',
    maxLength: MAX_USER,
    nullable: true,
    type: String,
    description: 'The SMTP login; with password, or neither.',
  })
  @OptionalNullable()
  @IsLine(MAX_USER)
  user?: string | null;

  @ApiPropertyOptional({
    example: 'correct horse battery staple',
    maxLength: MAX_PASSWORD,
    nullable: true,
    type: String,
    writeOnly: true,
    description:
      'Write-only: never answered (password_set says whether one is stored), never in an event or a log line. Left out, the stored one stays; null clears it.',
  })
  @OptionalNullable()
  @IsString({ message: 'password must be a string' })
  @MinLength(1, { message: 'password must not be empty' })
  @MaxLength(MAX_PASSWORD, { message: `password must be at most ${MAX_PASSWORD} characters` })
  @Matches(PASSWORD, { message: 'password must not hold a line break or a NUL character' })
  password?: string | null;

  @ApiPropertyOptional({
    example: 'Acme Fiber <billing@acme-fiber.example>',
    maxLength: MAX_MAILBOX,
    nullable: true,
    type: String,
    description: `The From of every message. ${MAILBOX_DESCRIPTION}`,
  })
  @OptionalNullable()
  @IsMailbox()
  from?: string | null;

  @ApiPropertyOptional({
    example: 'support@acme-fiber.example',
    maxLength: MAX_MAILBOX,
    nullable: true,
    type: String,
    description: `Where replies go; none when null. ${MAILBOX_DESCRIPTION}`,
  })
  @OptionalNullable()
  @IsMailbox()
  reply_to?: string | null;
}

@ApiSchema({
  description:
    "The tenant's own mail server; the password is never answered, password_set says whether one is stored.",
})
export class MailSettingsDto {
  @ApiProperty({ example: 'smtp.acme-fiber.example', maxLength: MAX_HOST }) host: string;
  @ApiProperty({ example: 587, minimum: 1, maximum: 65535, type: 'integer' }) port: number;
  @ApiProperty({ enum: SMTP_TLS_MODES, example: 'starttls', description: TLS_DESCRIPTION }) tls: SmtpTlsMode;
  @ApiProperty({
    example: 'billing@acme-fiber.example',
    maxLength: MAX_USER,
    nullable: true,
    type: String,
    pattern: ONE_LINE.source,
  })
  user: string | null;
  @ApiProperty({ example: true, description: 'Whether a password is stored (it is never answered).' })
  password_set: boolean;
  @ApiProperty({ example: 'Acme Fiber <billing@acme-fiber.example>', maxLength: MAX_MAILBOX })
  from: string;
  @ApiProperty({
    example: 'support@acme-fiber.example',
    maxLength: MAX_MAILBOX,
    nullable: true,
    type: String,
  })
  reply_to: string | null;
}

const SWITCH_DESCRIPTION = (kind: NotificationKind) =>
  `Whether the tenant sends ${kind} notifications at all (default true). A subscriber's own preferences come on top.`;

/** PATCH's `notifications`: the kinds sent are switched one by one; a kind left out stays. */
@ApiSchema({
  description: 'The kinds of notification to switch on (true) or off (false); absent kinds stay.',
})
export class NotificationSwitchesUpdateDto implements Partial<Record<NotificationKind, boolean>> {}

/** Whether the tenant sends each kind of notification (all true until switched off). */
@ApiSchema({ description: 'Whether the tenant sends each kind of notification to its subscribers.' })
export class NotificationSwitchesDto implements Record<NotificationKind, boolean> {
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

// One property per kind, from the one list (src/common/notification-kinds.ts), so a new kind is switchable at once.
for (const kind of NOTIFICATION_KINDS) {
  applyDecorators(
    ApiPropertyOptional({
      type: Boolean,
      example: kind !== 'payment_received',
      description: SWITCH_DESCRIPTION(kind),
    }),
    Optional(),
    IsBoolean({ message: `${kind} must be true or false` }),
  )(NotificationSwitchesUpdateDto.prototype, kind);
  ApiProperty({ type: Boolean, example: true, description: SWITCH_DESCRIPTION(kind) })(
    NotificationSwitchesDto.prototype,
    kind,
  );
}
