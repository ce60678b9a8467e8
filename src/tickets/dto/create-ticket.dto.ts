import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, ValidateIf } from 'class-validator';
import { ApiMetadata } from '../../common/swagger/api-types';
import { IsMetadata } from '../../common/validation/is-metadata';
import { IsFreeText, IsTrimmedText } from '../../common/validation/text';
import { TICKET_PRIORITIES, TICKET_TYPES, TicketPriority, TicketType } from '../ticket-status';
import { IsTags } from './ticket-fields';
import { Optional } from '../../common/validation/optional';

/** A defaulted field may be left out, not sent as null. */
const present = (_object: object, value: unknown) => value !== undefined;

@ApiSchema({ description: 'A new support ticket.' })
export class CreateTicketDto {
  @ApiProperty({ example: 'No internet since this morning', minLength: 1, maxLength: 200 })
  @IsTrimmedText(200)
  subject: string;

  @ApiPropertyOptional({
    example: 'The ONT shows a red LOS light; the customer already restarted it.',
    maxLength: 20000,
  })
  @Optional()
  @IsFreeText(20000)
  description?: string;

  @ApiPropertyOptional({
    enum: TICKET_TYPES,
    default: TicketType.Question,
    example: TicketType.Incident,
    description: 'What kind of request it is.',
  })
  @ValidateIf(present)
  @IsIn(TICKET_TYPES, { message: `type must be one of ${TICKET_TYPES.join(', ')}` })
  type: TicketType = TicketType.Question;

  @ApiPropertyOptional({
    enum: TICKET_PRIORITIES,
    default: TicketPriority.Normal,
    example: TicketPriority.High,
    description: 'Sets due_at from the tenant SLA (GET /ticket-settings).',
  })
  @ValidateIf(present)
  @IsIn(TICKET_PRIORITIES, { message: `priority must be one of ${TICKET_PRIORITIES.join(', ')}` })
  priority: TicketPriority = TicketPriority.Normal;

  @ApiPropertyOptional({
    example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'A subscriber of this tenant (422 invalid_reference otherwise).',
  })
  @Optional()
  @IsTrimmedText(64)
  subscriber_id?: string;

  @ApiPropertyOptional({
    example: 'noc.jane',
    maxLength: 200,
    description: "The operator's user name in their own system.",
  })
  @Optional()
  @IsTrimmedText(200)
  assignee?: string;

  @Optional()
  @IsTags()
  tags?: string[];

  @ApiPropertyOptional({
    example: 'helpdesk-48213',
    description: 'Your id for this ticket; unique per tenant (409 duplicate_ticket).',
  })
  @Optional()
  @IsTrimmedText(200)
  external_id?: string;

  @ApiMetadata({ example: { channel: 'phone' }, required: false })
  @Optional()
  @IsMetadata()
  metadata?: Record<string, string | number | boolean | null>;
}
