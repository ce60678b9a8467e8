import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { IsTrimmedText } from '../../common/validation/text';
import { REASON_REQUIRED, TICKET_STATUSES, TicketStatus } from '../ticket-status';
import { Optional } from '../../common/validation/optional';

@ApiSchema({ description: "A ticket's move in its workflow, with an optional reason." })
export class ChangeTicketStatusDto {
  @ApiProperty({
    enum: TICKET_STATUSES,
    example: TicketStatus.Open,
    description: 'The state to move to; a move the workflow (docs/tickets.md) does not allow is 409.',
  })
  @IsIn(TICKET_STATUSES, { message: `status must be one of ${TICKET_STATUSES.join(', ')}` })
  status: TicketStatus;

  @ApiPropertyOptional({
    example: 'Technician dispatched',
    type: String,
    maxLength: 500,
    description: `Required when moving to ${REASON_REQUIRED.join(' or ')}; kept in the status history.`,
  })
  @Optional()
  @IsTrimmedText(500)
  reason?: string | null;
}
