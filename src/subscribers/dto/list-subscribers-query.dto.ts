import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { Trim } from '../../common/validation/text';
import { SUBSCRIBER_STATUSES, SubscriberStatus } from '../subscriber-status';
import { Optional } from '../../common/validation/optional';
import { OneOrMoreOf } from '../../common/validation/comma-list';
import { IsPhoneFilter } from './phone-filter';

export class ListSubscribersQueryDto extends PageQueryDto {
  @OneOrMoreOf(SUBSCRIBER_STATUSES, { example: ['active', 'suspended'] })
  status?: SubscriberStatus[];

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

  @ApiPropertyOptional({
    example: '+1 415 555 0123',
    description:
      'Exact match of the phone, written in any international form: spaces, dashes, dots and parentheses are ' +
      'dropped and a leading 00 read as +, so `+1 (415) 555-0123` finds `+14155550123`.',
  })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(40)
  @IsPhoneFilter()
  phone?: string;

  @ApiPropertyOptional({
    example: 'ada lovelace',
    minLength: 3,
    maxLength: 200,
    description:
      "Search: the subscribers whose name, email, phone, external id, address or a live service's PPPoE username " +
      'contains this text (case-insensitive; % and _ are literal; a phone number in any form), best match first. ' +
      'Combines with the other filters; pages with its own cursors (README, "Search").',
  })
  @Optional()
  @Trim()
  @IsString()
  @MinLength(3, { message: 'q must be at least 3 characters: shorter text matches too much to rank' })
  @MaxLength(200)
  q?: string;
}
