import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsString, Length, MaxLength } from 'class-validator';
import { Trim } from '../../common/validation/text';
import { OptionalNullable } from '../../common/validation/optional';

/** The sub-fields of a postal address (line1, city, state, postal_code); each trimmed, at most 200 characters. */
@ApiSchema({ description: 'A postal address; every part optional.' })
export class AddressDto {
  @ApiPropertyOptional({ example: '12 Fibre Lane', nullable: true, type: String })
  @OptionalNullable()
  @Trim(200)
  @IsString()
  @MaxLength(200)
  line1?: string | null;

  @ApiPropertyOptional({ example: 'Springfield', nullable: true, type: String })
  @OptionalNullable()
  @Trim(200)
  @IsString()
  @MaxLength(200)
  city?: string | null;

  @ApiPropertyOptional({ example: 'IL', nullable: true, type: String })
  @OptionalNullable()
  @Trim(200)
  @IsString()
  @MaxLength(200)
  state?: string | null;

  @ApiPropertyOptional({ example: '62701', nullable: true, type: String })
  @OptionalNullable()
  @Trim(200)
  @IsString()
  @Length(0, 200)
  postal_code?: string | null;
}

/** E.164: a plus, a country code, at most 15 digits in all. */
export const E164 = /^\+[1-9]\d{1,14}$/;

export const TAX_EXEMPT_DESCRIPTION =
  'true: the subscriber is not taxed (its invoices show the reason and tax_id instead); needs tax_exempt_reason. Default false.';
export const TAX_EXEMPT_REASON_DESCRIPTION =
  'Why the subscriber is tax exempt (a certificate, a status), shown on its invoices; required with tax_exempt true, refused without it.';
export const TAX_ID_DESCRIPTION = 'The subscriber’s VAT or tax number, shown on its invoices.';
