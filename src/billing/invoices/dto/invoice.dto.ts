import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { MAX_AMOUNT } from '../../../common/money';
import { PageQueryDto } from '../../../common/pagination';
import { IsCurrency } from '../../../common/validation/is-currency';
import { IsDateOnly } from '../../../common/validation/is-date-only';
import { IsFreeText, IsTrimmedText, Trim } from '../../../common/validation/text';
import { INVOICE_STATUSES, InvoiceStatus } from '../invoice.entity';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';
import { Optional } from '../../../common/validation/optional';
import { TaxRateIdsProperty } from '../../../common/validation/tax-rate-ids';
import { OneOrMoreOf } from '../../../common/validation/comma-list';

@ApiSchema({ description: 'One line of a new invoice.' })
export class InvoiceLineInputDto {
  @ApiProperty({ example: 'Fiber 500 — November' })
  @IsFreeText(500, { required: true })
  description: string;

  @ApiInteger({ example: 1, minimum: 1, maximum: 1_000_000, description: 'How many units are billed.' })
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  quantity: number;

  @ApiMoney({ example: 4999, description: 'Integer minor units (4999 = 49.99).', minimum: 0 })
  @IsInt()
  @Min(0)
  @Max(MAX_AMOUNT)
  unit_amount: number;

  @TaxRateIdsProperty({
    nullable: false,
    description:
      "The rates this line is taxed at, instead of the billing profile's defaults ([]: untaxed). Ignored for a tax-exempt subscriber.",
  })
  tax_rate_ids?: string[];
}

@ApiSchema({
  description: 'A new invoice: its subscriber, currency, lines and due date; open unless `draft`.',
})
export class CreateInvoiceDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber to bill.' })
  @IsTrimmedText(64)
  subscriber_id: string;

  @ApiProperty({ example: 'USD', description: 'ISO 4217 code of every amount on the invoice.' })
  @IsCurrency()
  currency: string;

  @ApiProperty({ example: '2026-12-15', description: 'YYYY-MM-DD.' })
  @IsDateOnly()
  due_date: string;

  @ApiProperty({ type: [InvoiceLineInputDto] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => InvoiceLineInputDto)
  lines: InvoiceLineInputDto[];

  @ApiPropertyOptional({
    example: false,
    description: 'true: create as draft; POST /invoices/{id}/finalize opens it.',
  })
  @Optional()
  @IsBoolean()
  draft?: boolean;
}

@ApiSchema({ description: 'Why an invoice is voided (optional).' })
export class VoidInvoiceDto {
  @ApiPropertyOptional({
    example: 'wrong currency',
    maxLength: 500,
    description:
      'Why the invoice is voided: kept on the invoice (`void_reason`) and in the `invoice.voided` event.',
  })
  @Optional()
  @IsFreeText(500, { required: true })
  reason?: string;
}

@ApiSchema({ description: 'Why what an invoice still asks is written off.' })
export class WriteOffInvoiceDto {
  @ApiProperty({
    example: 'customer moved away; collection agency gave up',
    minLength: 1,
    maxLength: 500,
    description:
      'Why the amount due is written off as uncollectable: kept on the invoice (`write_off_reason`) and in `invoice.written_off`.',
  })
  @IsFreeText(500, { required: true })
  reason: string;
}

export class ListInvoicesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  subscriber_id?: string;

  @OneOrMoreOf(INVOICE_STATUSES)
  status?: InvoiceStatus[];

  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'true: open or partially paid and past due.' })
  @Optional()
  @IsIn(['true', 'false'], { message: 'overdue must be true or false' })
  overdue?: 'true' | 'false';
}
