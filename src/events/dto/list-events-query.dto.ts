import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsString, MaxLength } from 'class-validator';
import { CommaList, IsEachMatching } from '../../common/validation/comma-list';
import { PageQueryDto } from '../../common/pagination';
import { Trim } from '../../common/validation/text';
import { Optional } from '../../common/validation/optional';

export class ListEventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    isArray: true,
    type: String,
    description:
      'An exact type, or a prefix ending in `.*`; or several, comma-separated (events of any of them).',
    example: ['subscriber.*', 'invoice.paid'],
  })
  @Optional()
  @CommaList()
  @ArrayMaxSize(20)
  @IsEachMatching(/^[a-z_]+(\.[a-z_]+)*(\.\*)?$/, 'a dotted event type or a prefix ending in .*')
  type?: string[];

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
