import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, ValidateNested } from 'class-validator';
import { IsFreeText, IsTrimmedText } from '../../common/validation/text';
import { Optional } from '../../common/validation/optional';
import { NOTIFICATION_KIND_SPECS, NOTIFICATION_KINDS, type NotificationKind } from '../kinds';
import type { NotificationTemplateRecord } from '../notification.entity';
import { DEFAULT_TEMPLATES } from '../templates/default-templates';
import { MAX_SUBJECT_LENGTH } from '../templates/template-renderer';

/** What a template part may hold as sent; templateProblems holds the subject to MAX_SUBJECT_LENGTH after that. */
export const TEMPLATE_LIMITS = { subject: 1000, text: 100_000, html: 100_000 } as const;

const ENGINE =
  'Mustache, logic-less: `{{name}}` places a variable, `{{#name}}…{{/name}}` shows a part only when it is set (or ' +
  '`{{^name}}…{{/name}}` when it is not), `{{! …}}` is a comment; no partials.';

const SUBJECT_EXAMPLE = 'Invoice {{invoice.number}} from {{tenant.name}}';
const TEXT_EXAMPLE =
  'Dear {{subscriber.name}},\n\nYour invoice {{invoice.number}} of {{invoice.total}} is due on {{invoice.due_date}}.\n\n{{tenant.name}}\n';
const HTML_EXAMPLE =
  '<p>Dear {{subscriber.name}},</p>\n<p>Your invoice <strong>{{invoice.number}}</strong> of {{invoice.total}} is due on {{invoice.due_date}}.</p>\n<p>{{tenant.name}}</p>\n';

@ApiSchema({
  description:
    "A tenant's template of one kind of notification: subject, text and HTML, each checked against the kind's " +
    'variables before it is saved.',
})
export class NotificationTemplateBodyDto {
  @ApiProperty({
    example: SUBJECT_EXAMPLE,
    maxLength: TEMPLATE_LIMITS.subject,
    description: `${ENGINE} One line; at most ${MAX_SUBJECT_LENGTH} characters once it is a template that passes the checks. Values are placed as they are, line breaks removed. \`{{{name}}}\` is refused.`,
  })
  @IsFreeText(TEMPLATE_LIMITS.subject, { required: true })
  subject: string;

  @ApiProperty({
    example: TEXT_EXAMPLE,
    maxLength: TEMPLATE_LIMITS.text,
    description: `The plain-text part. ${ENGINE} Values are placed as they are.`,
  })
  @IsFreeText(TEMPLATE_LIMITS.text, { required: true })
  text: string;

  @ApiProperty({
    example: HTML_EXAMPLE,
    maxLength: TEMPLATE_LIMITS.html,
    description: `The HTML part. ${ENGINE} Every value is HTML-escaped; \`{{{name}}}\` and \`{{& name}}\` (unescaped) are refused.`,
  })
  @IsFreeText(TEMPLATE_LIMITS.html, { required: true })
  html: string;
}

@ApiSchema({
  description:
    "The template a kind of notification is sent with: the tenant's own (custom true) or the shipped default.",
})
export class NotificationTemplateDto {
  @ApiProperty({
    enum: NOTIFICATION_KINDS,
    example: 'invoice_issued',
    description: 'The kind of notification it is sent for (docs/notifications.md).',
  })
  kind: string;
  @ApiProperty({ example: SUBJECT_EXAMPLE, maxLength: TEMPLATE_LIMITS.subject }) subject: string;
  @ApiProperty({ example: TEXT_EXAMPLE, maxLength: TEMPLATE_LIMITS.text }) text: string;
  @ApiProperty({ example: HTML_EXAMPLE, maxLength: TEMPLATE_LIMITS.html }) html: string;
  @ApiProperty({
    example: true,
    description: "true: the tenant's own template; false: the default shipped with the server.",
  })
  custom: boolean;
  @ApiProperty({
    type: 'array',
    items: { type: 'string', maxLength: 64 },
    example: [...NOTIFICATION_KIND_SPECS.invoice_issued.variables],
    description:
      'The variables templates of this kind may name (docs/notifications.md describes each); any other is refused.',
  })
  variables: string[];
  @ApiProperty({
    nullable: true,
    type: String,
    example: '2026-11-21T10:00:00.000Z',
    description: 'When the tenant last saved it; null for the default.',
  })
  updated_at: string | null;

  /** The tenant's own template of `kind` when it has one (`own`), else the shipped default. */
  static of(kind: NotificationKind, own: NotificationTemplateRecord | null): NotificationTemplateDto {
    const template = own ?? DEFAULT_TEMPLATES[kind];
    return {
      kind,
      subject: template.subject,
      text: template.text,
      html: template.html,
      custom: own !== null,
      variables: [...NOTIFICATION_KIND_SPECS[kind].variables],
      updated_at: own ? own.updatedAt.toISOString() : null,
    };
  }
}

@ApiSchema({
  description: 'The record to render a template against, and optionally a template not saved yet.',
})
export class PreviewNotificationTemplateDto {
  @ApiProperty({
    example: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    maxLength: 64,
    description:
      'The record the notification is about: an invoice id (invoice_issued, invoice_reminder), a transaction id of a ' +
      'payment (payment_received), a credit note id (credit_note_issued), a subscriber id (suspended_for_non_payment, ' +
      'service_restored), a service id (service_activated) or a ticket id (ticket_reply: its latest public reply ' +
      "that is not the subscriber's own). Its latest event that sends this kind is rendered.",
  })
  @IsTrimmedText(64)
  record_id: string;

  @ApiPropertyOptional({
    type: NotificationTemplateBodyDto,
    description:
      "A template to try instead of the one in use (the tenant's own or the default), checked as a save checks it.",
  })
  @Optional()
  @IsObject({ message: 'template must be an object' })
  @ValidateNested()
  @Type(() => NotificationTemplateBodyDto)
  template?: NotificationTemplateBodyDto;
}

@ApiSchema({ description: 'Who a notification would be sent to.' })
export class NotificationRecipientDto {
  @ApiProperty({ example: 'Jane Doe', maxLength: 200 }) name: string;
  @ApiProperty({ example: 'jane@example.com', maxLength: 254 }) address: string;
}

@ApiSchema({ description: 'A notification as it would be sent, rendered without sending anything.' })
export class NotificationPreviewDto {
  @ApiProperty({
    enum: NOTIFICATION_KINDS,
    example: 'invoice_issued',
    description: 'The kind of notification rendered (docs/notifications.md).',
  })
  kind: string;
  @ApiProperty({
    type: NotificationRecipientDto,
    nullable: true,
    description:
      'The subscriber it would go to; null when the subscriber has no email (nothing would be sent).',
  })
  to: NotificationRecipientDto | null;
  @ApiProperty({ example: 'Invoice INV-2026-000042 from Example ISP' }) subject: string;
  @ApiProperty({
    example:
      'Dear Jane Doe,\n\nYour invoice INV-2026-000042 of $49.99 is due on December 15, 2026.\n\nExample ISP\n',
  })
  text: string;
  @ApiProperty({
    example:
      '<p>Dear Jane Doe,</p>\n<p>Your invoice <strong>INV-2026-000042</strong> of $49.99 is due on December 15, 2026.</p>\n<p>Example ISP</p>\n',
  })
  html: string;
  @ApiProperty({
    type: 'array',
    items: { type: 'string', maxLength: 200 },
    example: ['INV-2026-000042.pdf'],
    description: 'The file names of what would be attached: the PDF of an invoice or a credit note.',
  })
  attachments: string[];
}
