import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, ValidateIf } from 'class-validator';
import { ApiMetadata } from '../../common/swagger/api-types';
import { IsMetadata } from '../../common/validation/is-metadata';
import { IsFreeText, IsTrimmedText } from '../../common/validation/text';
import { TICKET_PRIORITIES, TICKET_TYPES, TicketPriority, TicketType } from '../ticket-status';
import { IsTags } from './ticket-fields';
import { OptionalNullable } from '../../common/validation/optional';

const present = (_object: object, value: unknown) => value !== undefined;

/** PATCH: only the fields sent change; null clears description and assignee; metadata merges. Not status. */
@ApiSchema({ description: 'The ticket fields to change; absent ones stay as they are.' })
export class UpdateTicketDto {
  @ApiPropertyOptional({ example: 'No internet since this morning (whole street)' })
  @ValidateIf(present)
  @IsTrimmedText(200)
  subject?: string;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 20000 })
  @OptionalNullable()
  @IsFreeText(20000)
  description?: string | null;

  @ApiPropertyOptional({ enum: TICKET_TYPES, description: 'What kind of request it is.' })
  @ValidateIf(present)
  @IsIn(TICKET_TYPES, { message: `type must be one of ${TICKET_TYPES.join(', ')}` })
  type?: TicketType;

  @ApiPropertyOptional({
    enum: TICKET_PRIORITIES,
    example: TicketPriority.Urgent,
    description: "A change recomputes due_at from the ticket's created_at and the current SLA.",
  })
  @ValidateIf(present)
  @IsIn(TICKET_PRIORITIES, { message: `priority must be one of ${TICKET_PRIORITIES.join(', ')}` })
  priority?: TicketPriority;

  @ApiPropertyOptional({
    example: 'noc.omar',
    nullable: true,
    type: String,
    description: "The operator's user name in their own system; null unassigns.",
  })
  @OptionalNullable()
  @IsTrimmedText(200)
  assignee?: string | null;

  @ValidateIf(present)
  @IsTags()
  tags?: string[];

  @ApiMetadata({
    example: { channel: 'phone', escalated: true },
    required: false,
    nullable: true,
    description: 'Merges into the stored metadata; a null value deletes its key, null clears all.',
  })
  @OptionalNullable()
  @IsMetadata()
  metadata?: Record<string, string | number | boolean | null> | null;
}
