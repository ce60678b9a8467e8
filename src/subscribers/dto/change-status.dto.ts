import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import { SUBSCRIBER_STATUSES, SubscriberStatus, SUSPENSION_REASONS } from '../subscriber-status';
import { Optional } from '../../common/validation/optional';

@ApiSchema({ description: "A subscriber's move to another status, with an optional reason." })
export class ChangeStatusDto {
  @ApiProperty({
    enum: SUBSCRIBER_STATUSES,
    example: SubscriberStatus.Suspended,
    description: 'The state to move to; a move the README\'s "Lifecycle" table does not allow is 409.',
  })
  @IsIn(SUBSCRIBER_STATUSES, { message: `status must be one of ${SUBSCRIBER_STATUSES.join(', ')}` })
  status: SubscriberStatus;

  @ApiPropertyOptional({
    example: 'non_payment',
    description: `Required when suspending: one of ${SUSPENSION_REASONS.join(', ')}. Otherwise a free-text note.`,
  })
  @Optional()
  @IsString()
  @Length(1, 500)
  reason?: string;
}
