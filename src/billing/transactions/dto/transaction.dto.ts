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
import { IsTimestamp } from '../../../common/validation/is-date-only';
import { IsMetadata } from '../../../common/validation/is-metadata';
import { IsTrimmedText, Trim } from '../../../common/validation/text';
import type { Metadata } from '../../../common/metadata';
import {
  TRANSACTION_KINDS,
  TRANSACTION_SOURCES,
  TransactionKind,
  TransactionSource,
} from '../transaction.entity';
import { ApiMetadata, ApiMoney } from '../../../common/swagger/api-types';
import { ApiRequestForms } from '../../../common/swagger/request-forms';
import { Optional } from '../../../common/validation/optional';
import { OneOrMoreOf } from '../../../common/validation/comma-list';

@ApiSchema({ description: 'A payment, credit, debit or refund to record.' })
export class CreateTransactionDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber it is for.' })
  @IsTrimmedText(64)
  subscriber_id: string;

  @ApiProperty({
    enum: TRANSACTION_KINDS,
    example: TransactionKind.Payment,
    description: 'payment and credit lower the balance (and can be allocated); debit and refund raise it.',
  })
  @IsIn(TRANSACTION_KINDS, { message: `kind must be one of ${TRANSACTION_KINDS.join(', ')}` })
  kind: TransactionKind;

  @ApiProperty({
    enum: TRANSACTION_SOURCES,
    example: TransactionSource.External,
    description: 'external: recorded from a payment system or bank; adjustment: an operator correction.',
  })
  @IsIn(TRANSACTION_SOURCES, { message: `source must be one of ${TRANSACTION_SOURCES.join(', ')}` })
  source: TransactionSource;

  @ApiMoney({ example: 4999, description: 'Positive integer minor units.', minimum: 1 })
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  amount: number;

  @ApiProperty({ example: 'USD', description: 'ISO 4217 code of `amount`.' })
  @IsCurrency()
  currency: string;

  @ApiPropertyOptional({ example: 'stripe:ch_3Nf…', description: 'Unique per tenant; a second one is 409.' })
  @Optional()
  @IsTrimmedText(200)
  external_id?: string;

  @ApiPropertyOptional({ example: 'INV-42' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(200)
  reference?: string;

  @ApiPropertyOptional({ example: 'November payment' })
  @Optional()
  @IsString()
  @MaxLength(500)
  description?: string;

  @ApiPropertyOptional({ example: 'card', description: 'How the money moved: card, bank_transfer, cash, …' })
  @Optional()
  @IsTrimmedText(50)
  method?: string;

  @ApiPropertyOptional({
    example: '2026-11-20T15:04:05.000Z',
    description: 'When it happened; defaults to now.',
  })
  @Optional()
  @IsTimestamp()
  occurred_at?: string;

  @ApiPropertyOptional({
    example: 'txn_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'Required for, and only for, refunds.',
  })
  @Optional()
  @IsTrimmedText(64)
  refund_of?: string;

  @ApiMetadata({ example: { gateway: 'stripe' }, required: false })
  @Optional()
  @IsMetadata()
  metadata?: Metadata;

  @ApiPropertyOptional({
    example: false,
    description:
      "Payments and credits only. true: applied at once to the subscriber's open and partially paid invoices in this currency, oldest due date first (then invoice number), and the answer's `allocations` lists what was applied; false: left unallocated for an operator's POST /transactions/{id}/allocate (dunning still counts it as received; with the profile's auto_apply on, an invoice issued before it is allocated takes it). Default: the `auto_apply` of the subscriber's billing profile (its own, else the tenant's default; true with neither).",
  })
  @Optional()
  @IsBoolean()
  auto_apply?: boolean;
}

@ApiSchema({ description: 'One line of an explicit allocation: an invoice and the amount to apply to it.' })
export class AllocationItemDto {
  @ApiProperty({
    example: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'An open or partially paid invoice.',
  })
  @IsTrimmedText(64)
  invoice_id: string;

  @ApiMoney({
    example: 2500,
    minimum: 1,
    description: "In minor units; at most the invoice's amount_due.",
  })
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  amount: number;
}

/** Exactly one of three forms: explicit invoices, the balance, or a strategy. */
@ApiSchema({ description: 'Where a payment or credit goes: exactly one of three forms.' })
@ApiRequestForms([
  {
    name: 'AllocateToInvoices',
    description: 'Explicit amounts to named invoices of the same subscriber and currency.',
    properties: ['allocations'],
  },
  {
    name: 'AllocateToBalance',
    description: "An amount to the subscriber's balance (a credit toward later invoices), not to an invoice.",
    properties: ['target', 'amount'],
  },
  {
    name: 'AllocateByStrategy',
    description: 'The server chooses the invoices: open ones, oldest due first, until the money runs out.',
    properties: ['strategy'],
  },
])
export class AllocateDto {
  @ApiPropertyOptional({
    type: [AllocationItemDto],
    description:
      'The invoices to pay and how much of each: at most 100 lines; lines naming the same invoice add up.',
  })
  @Optional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => AllocationItemDto)
  allocations?: AllocationItemDto[];

  @ApiPropertyOptional({
    enum: ['balance'],
    description: 'With `amount`: apply to the balance, not to an invoice.',
  })
  @Optional()
  @IsIn(['balance'], { message: 'target must be balance' })
  target?: 'balance';

  @ApiMoney({
    example: 1000,
    minimum: 1,
    required: false,
    description: 'With `target`: the amount to put on the balance, in minor units of the payment currency.',
  })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  amount?: number;

  @ApiPropertyOptional({
    enum: ['oldest_first'],
    description:
      'Open invoices of the same subscriber and currency, oldest due first; the rest stays unallocated.',
  })
  @Optional()
  @IsIn(['oldest_first'], { message: 'strategy must be oldest_first' })
  strategy?: 'oldest_first';
}

export class ListTransactionsQueryDto extends PageQueryDto {
  @ApiPropertyOptional() @Optional() @Trim() @IsString() @MaxLength(64) subscriber_id?: string;

  @OneOrMoreOf(TRANSACTION_KINDS)
  kind?: TransactionKind[];

  @OneOrMoreOf(TRANSACTION_SOURCES)
  source?: TransactionSource[];

  @ApiPropertyOptional() @Optional() @Trim() @IsString() @MaxLength(200) external_id?: string;

  @ApiPropertyOptional({ description: 'occurred_at at or after (ISO 8601).' })
  @Optional()
  @IsTimestamp()
  occurred_gte?: string;

  @ApiPropertyOptional({ description: 'occurred_at before (ISO 8601).' })
  @Optional()
  @IsTimestamp()
  occurred_lt?: string;
}
