import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { Trim } from '../../common/validation/text';
import { SUBSCRIBER_STATUSES, SubscriberStatus } from '../subscriber-status';
import { Optional } from '../../common/validation/optional';

export class ListSubscribersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: SUBSCRIBER_STATUSES })
  @Optional()
  @IsIn(SUBSCRIBER_STATUSES, { message: `status must be one of ${SUBSCRIBER_STATUSES.join(', ')}` })
  status?: SubscriberStatus;

  @ApiPropertyOptional({ example: 'crm-000123' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(200)
  external_id?: string;

  @ApiPropertyOptional({ example: 'ada@example.net', description: 'Case-insensitive exact match.' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(254)
  email?: string;
}
