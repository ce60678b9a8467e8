import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsIn, Matches, registerDecorator } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination';
import { Optional, OptionalNullable } from '../../../common/validation/optional';
import { IsFreeText, IsTrimmedText } from '../../../common/validation/text';
import { percentageMillionths } from '../tax-computation';
import type { TaxRate } from '../tax-rate.entity';

/** "21", "21.5", "21.0000", "0", "100": 0 to 100, at most four decimals. */
const PERCENTAGE_PATTERN = '^\\d{1,3}(\\.\\d{1,4})?$';

/** Whether `value` is a percentage a tax rate may have: a decimal string from 0 to 100 with at most four decimals. */
export function isTaxPercentage(value: unknown): value is string {
  return typeof value === 'string' && percentageMillionths(value) !== null;
}

function IsTaxPercentage(): PropertyDecorator {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isTaxPercentage',
      target: object.constructor,
      propertyName: String(propertyName),
      options: {
        message: `${String(propertyName)} must be a decimal string from 0 to 100 with at most four decimals (e.g. "21" or "9.975")`,
      },
      validator: { validate: isTaxPercentage },
    });
}

/** ISO 3166-1 alpha-2 in upper case: two letters a country code may be (the list itself changes; the form does not). */
const COUNTRY = /^[A-Z]{2}$/;

const NAME = { example: 'VAT 21%', maxLength: 200, description: 'What invoices print for the tax.' };
const PERCENTAGE = {
  example: '21',
  pattern: PERCENTAGE_PATTERN,
  maxLength: 8,
  description:
    'Percent, a decimal string from 0 to 100 with at most four decimals ("21", "9.975", "21.0000"); answered with four decimals.',
};
const INCLUSIVE =
  'true: the prices it applies to include the tax (it is taken out of them); false (default): it is added on top. All the rates of one list are one or the other.';
const COMPOUND =
  "true: applied on top of the line's other taxes (on the net plus them); false (default): on the net alone.";
const COUNTRY_DESCRIPTION =
  'ISO 3166-1 alpha-2 country code in upper case, for your filings; not used to pick rates.';
const REGION_DESCRIPTION = 'A state, province or region, for your filings.';
const ACTIVE =
  'false: archived; no tax_rate_ids list written from now on may name it. A rate in use is archived and replaced rather than changed.';
const IN_USE =
  'Once an invoice applied the rate its name, percentage, inclusive, compound, country and region are fixed (409 tax_rate_in_use): archive it (active false) and create a new one.';

@ApiSchema({ description: 'A new tax rate.' })
export class CreateTaxRateDto {
  @ApiProperty(NAME)
  @IsTrimmedText(200)
  name: string;

  @ApiProperty(PERCENTAGE)
  @IsTaxPercentage()
  percentage: string;

  @ApiPropertyOptional({ example: false, default: false, description: INCLUSIVE })
  @Optional()
  @IsBoolean()
  inclusive?: boolean;

  @ApiPropertyOptional({ example: false, default: false, description: COMPOUND })
  @Optional()
  @IsBoolean()
  compound?: boolean;

  @ApiPropertyOptional({ example: 'NL', pattern: '^[A-Z]{2}$', description: COUNTRY_DESCRIPTION })
  @Optional()
  @Matches(COUNTRY, { message: 'country must be an ISO 3166-1 alpha-2 code in upper case, e.g. NL' })
  country?: string;

  @ApiPropertyOptional({ example: 'Noord-Holland', maxLength: 100, description: REGION_DESCRIPTION })
  @Optional()
  @IsTrimmedText(100)
  region?: string;

  @ApiPropertyOptional({ example: 'Standard rate', maxLength: 500 })
  @Optional()
  @IsFreeText(500)
  description?: string;

  @ApiPropertyOptional({ example: true, default: true, description: ACTIVE })
  @Optional()
  @IsBoolean()
  active?: boolean;
}

/** PATCH: only the fields sent change; null clears country, region or description. */
@ApiSchema({ description: `The tax rate fields to change; absent ones stay as they are. ${IN_USE}` })
export class UpdateTaxRateDto {
  @ApiPropertyOptional(NAME)
  @Optional()
  @IsTrimmedText(200)
  name?: string;

  @ApiPropertyOptional(PERCENTAGE)
  @Optional()
  @IsTaxPercentage()
  percentage?: string;

  @ApiPropertyOptional({ example: false, description: INCLUSIVE })
  @Optional()
  @IsBoolean()
  inclusive?: boolean;

  @ApiPropertyOptional({ example: false, description: COMPOUND })
  @Optional()
  @IsBoolean()
  compound?: boolean;

  @ApiPropertyOptional({
    example: 'NL',
    pattern: '^[A-Z]{2}$',
    nullable: true,
    type: String,
    description: COUNTRY_DESCRIPTION,
  })
  @OptionalNullable()
  @Matches(COUNTRY, { message: 'country must be an ISO 3166-1 alpha-2 code in upper case, e.g. NL' })
  country?: string | null;

  @ApiPropertyOptional({
    example: 'Noord-Holland',
    maxLength: 100,
    nullable: true,
    type: String,
    description: REGION_DESCRIPTION,
  })
  @OptionalNullable()
  @IsTrimmedText(100)
  region?: string | null;

  @ApiPropertyOptional({ example: 'Standard rate', maxLength: 500, nullable: true, type: String })
  @OptionalNullable()
  @IsFreeText(500)
  description?: string | null;

  @ApiPropertyOptional({ example: false, description: ACTIVE })
  @Optional()
  @IsBoolean()
  active?: boolean;
}

export class ListTaxRatesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'Only active (true) or archived (false) rates.',
  })
  @Optional()
  @IsIn(['true', 'false'], { message: 'active must be true or false' })
  active?: 'true' | 'false';
}

@ApiSchema({ description: `A tax rate invoice lines are taxed at. ${IN_USE}` })
export class TaxRateDto {
  @ApiProperty({ example: 'txr_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'VAT 21%', description: 'What invoices print for the tax.' }) name: string;
  @ApiProperty({
    example: '21.0000',
    pattern: '^\\d{1,3}\\.\\d{4}$',
    description: 'Percent, four decimals.',
  })
  percentage: string;
  @ApiProperty({ example: false, description: INCLUSIVE }) inclusive: boolean;
  @ApiProperty({ example: false, description: COMPOUND }) compound: boolean;
  @ApiProperty({ example: 'NL', nullable: true, type: String, description: COUNTRY_DESCRIPTION })
  country: string | null;
  @ApiProperty({ example: null, nullable: true, type: String, description: REGION_DESCRIPTION })
  region: string | null;
  @ApiProperty({ example: 'Standard rate', nullable: true, type: String }) description: string | null;
  @ApiProperty({ example: true, description: ACTIVE }) active: boolean;
  @ApiProperty({
    example: null,
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'When an invoice first applied the rate; from then on it is fixed. null: never used.',
  })
  first_used_at: string | null;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) updated_at: string;

  static from(rate: TaxRate): TaxRateDto {
    return {
      id: rate.id,
      name: rate.name,
      percentage: rate.percentage,
      inclusive: rate.inclusive,
      compound: rate.compound,
      country: rate.country,
      region: rate.region,
      description: rate.description,
      active: rate.active,
      first_used_at: rate.firstUsedAt?.toISOString() ?? null,
      created_at: rate.createdAt.toISOString(),
      updated_at: rate.updatedAt.toISOString(),
    };
  }
}
