import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { Trim } from '../../common/validation/text';
import { Optional } from '../../common/validation/optional';

export class ListEventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'An exact type, or a prefix ending in `.*`.', example: 'subscriber.*' })
  @Optional()
  @IsString()
  @MaxLength(100)
  @Matches(/^[a-z_]+(\.[a-z_]+)*(\.\*)?$/, {
    message: 'type must be a dotted event type or a prefix ending in .*',
  })
  type?: string;

  @ApiPropertyOptional({
    description: 'Only events about this record.',
    example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
  })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  subject_id?: string;
}
