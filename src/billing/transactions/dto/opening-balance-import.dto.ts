import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { MAX_AMOUNT } from '../../../common/money';
import { ApiMoney } from '../../../common/swagger/api-types';
import { IsCurrency } from '../../../common/validation/is-currency';
import { IsDateOnly } from '../../../common/validation/is-date-only';
import { Optional } from '../../../common/validation/optional';
import { IsTrimmedText } from '../../../common/validation/text';

/**
 * A row of an `opening_balances` import (docs/imports.md): what a subscriber imported earlier owes (or is owed) when
 * it arrives from another system. One per subscriber and currency: the import matches rows by the two.
 */
@ApiSchema({ description: 'A row of an opening_balances import: the balance a subscriber brings along.' })
export class ImportOpeningBalanceDto {
  @ApiProperty({
    example: 'crm-000123',
    description: 'The external_id of the subscriber (imported earlier).',
  })
  @IsTrimmedText(200)
  subscriber_external_id: string;

  @ApiMoney({
    signed: true,
    example: 4999,
    description:
      'Integer minor units: positive, the subscriber owes it; negative, a credit; 0, nothing to post.',
  })
  @IsInt()
  @Min(-MAX_AMOUNT)
  @Max(MAX_AMOUNT)
  amount: number;

  @ApiProperty({ example: 'USD', description: "ISO 4217: the subscriber's billing currency." })
  @IsCurrency()
  currency: string;

  @ApiPropertyOptional({ example: 'Balance carried over from Splynx', maxLength: 500 })
  @Optional()
  @IsString()
  @MaxLength(500)
  description?: string;

  @ApiPropertyOptional({
    example: '2026-10-31',
    description: 'The day it was owed as of (YYYY-MM-DD); default today.',
  })
  @Optional()
  @IsDateOnly()
  date?: string;
}
