import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength, MinLength } from 'class-validator';
import { OneOrMoreOf } from '../../common/validation/comma-list';
import { PageQueryDto } from '../../common/pagination';
import { Trim } from '../../common/validation/text';
import {
  TICKET_PRIORITIES,
  TICKET_STATUSES,
  TICKET_TYPES,
  TicketPriority,
  TicketStatus,
  TicketType,
} from '../ticket-status';
import { Optional } from '../../common/validation/optional';

export class ListTicketsQueryDto extends PageQueryDto {
  @OneOrMoreOf(TICKET_STATUSES, { example: ['new', 'open'] })
  status?: TicketStatus[];

  @OneOrMoreOf(TICKET_PRIORITIES, { example: ['high', 'urgent'] })
  priority?: TicketPriority[];

  @OneOrMoreOf(TICKET_TYPES, { example: ['incident'] })
  type?: TicketType[];

  @ApiPropertyOptional({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  subscriber_id?: string;

  @ApiPropertyOptional({ example: 'noc.jane', description: 'Exact match.' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(200)
  assignee?: string;

  @ApiPropertyOptional({ example: 'outage', description: 'Tickets carrying this tag (case-insensitive).' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(50)
  tag?: string;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description:
      'due_at has passed and the ticket is not resolved, closed or cancelled (or, with false, not so).',
  })
  @Optional()
  @IsIn(['true', 'false'], { message: 'overdue must be true or false' })
  overdue?: 'true' | 'false';

  @ApiPropertyOptional({
    example: 'los light',
    minLength: 1,
    maxLength: 200,
    description: 'Case-insensitive substring of the subject or the description (% and _ are literal).',
  })
  @Optional()
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  q?: string;
}

export class ListCommentsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'true: only public comments (what a customer portal may show); false: only internal ones.',
  })
  @Optional()
  @IsIn(['true', 'false'], { message: 'public must be true or false' })
  public?: 'true' | 'false';
}

/** GET /subscribers/{id}/tickets: the filters of GET /tickets but subscriber_id, which the path gives. */
export class ListSubscriberTicketsQueryDto extends OmitType(ListTicketsQueryDto, [
  'subscriber_id',
] as const) {}
