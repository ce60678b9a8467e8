import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsIn, ValidateIf } from 'class-validator';
import { IsFreeText, IsTrimmedText } from '../../common/validation/text';
import { COMMENT_AUTHOR_TYPES, CommentAuthorType } from '../ticket-status';
import { Optional } from '../../common/validation/optional';

/** A defaulted field may be left out, not sent as null. */
const present = (_object: object, value: unknown) => value !== undefined;

@ApiSchema({ description: 'A new comment on a ticket.' })
export class CreateCommentDto {
  @ApiProperty({
    example: 'A technician will visit between 14:00 and 16:00 today.',
    minLength: 1,
    maxLength: 10000,
  })
  @IsFreeText(10000, { required: true })
  body: string;

  @ApiProperty({
    example: true,
    description:
      'Public comments are what a customer portal may show; internal ones (false) never leave the API, not even ' +
      'in events or webhooks.',
  })
  @IsBoolean({ message: 'public must be a boolean' })
  public: boolean;

  @ApiPropertyOptional({ example: 'noc.jane', maxLength: 200 })
  @Optional()
  @IsTrimmedText(200)
  author?: string;

  @ApiPropertyOptional({
    enum: COMMENT_AUTHOR_TYPES,
    default: CommentAuthorType.Agent,
    description:
      "A subscriber's comment is public; a public one on a pending_customer or resolved ticket reopens it.",
  })
  @ValidateIf(present)
  @IsIn(COMMENT_AUTHOR_TYPES, { message: `author_type must be one of ${COMMENT_AUTHOR_TYPES.join(', ')}` })
  author_type: CommentAuthorType = CommentAuthorType.Agent;
}
