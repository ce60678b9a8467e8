import { MAX_DOCUMENT_NUMBER_LENGTH } from '../../../common/numbering-format';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsInt,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { MAX_AMOUNT } from '../../../common/money';
import { PageQueryDto } from '../../../common/pagination';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';
import { Optional } from '../../../common/validation/optional';
import { IsFreeText, IsTrimmedText } from '../../../common/validation/text';
import { InvoiceLineDto, lineDto, TaxSummaryRowDto } from '../../invoices/dto/invoice-response.dto';
import type { CreditNote } from '../credit-note.entity';
import type { CreditNoteLine } from '../credit-note-lines';

@ApiSchema({
  description: 'An invoice line to credit: all of what is left of it, or an amount of it (tax included).',
})
export class CreditNoteLineInputDto {
  @ApiInteger({ example: 0, minimum: 0, description: "The line's index in the invoice's `lines` (0-based)." })
  @IsInt()
  @Min(0)
  @Max(10_000)
  line: number;

  @ApiMoney({
    required: false,
    minimum: 1,
    example: 1210,
    description:
      'Tax included, as the invoice shows the line; default: what is left of it to credit. Taxed like the line, at the rates it was issued with.',
  })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  amount?: number;
}

@ApiSchema({
  description:
    'A credit note against a finalised invoice: `lines` (some of its lines, each whole or an amount of it) or `amount` (spread over its lines in proportion to what is left of each), tax included.',
})
export class CreateCreditNoteDto {
  @ApiProperty({
    example: 'Outage 3-5 December',
    maxLength: 500,
    description: 'Why; printed on the document.',
  })
  @IsFreeText(500, { required: true })
  reason: string;

  @ApiPropertyOptional({ type: [CreditNoteLineInputDto], description: 'Send this or `amount`.' })
  @Optional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => CreditNoteLineInputDto)
  lines?: CreditNoteLineInputDto[];

  @ApiMoney({
    required: false,
    minimum: 1,
    example: 1000,
    description: 'Tax included; send this or `lines`. At most what was invoiced less earlier credit notes.',
  })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  amount?: number;

  @ApiPropertyOptional({
    example: false,
    description:
      "true: pay the credit back out of `payment_id` (a payment that paid this invoice) as a refund; default false: it lowers what the invoice still owes, and the rest is the subscriber's credit (auto-apply spends it on the next invoice).",
  })
  @Optional()
  @IsBoolean()
  refund?: boolean;

  @ApiPropertyOptional({
    example: 'txn_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    maxLength: 64,
    description: 'With `refund: true`: the payment, allocated to this invoice, the money goes back through.',
  })
  @Optional()
  @IsTrimmedText(64)
  payment_id?: string;
}

export class ListCreditNotesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ example: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: "Only this invoice's." })
  @Optional()
  @IsTrimmedText(64)
  invoice_id?: string;

  @ApiPropertyOptional({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: "Only this subscriber's." })
  @Optional()
  @IsTrimmedText(64)
  subscriber_id?: string;
}

@ApiSchema({
  description: 'A line of a credit note: the part of an invoice line it credits, taxed like that line.',
})
export class CreditNoteLineDto extends InvoiceLineDto {
  @ApiInteger({
    example: 0,
    minimum: 0,
    description: "The invoice line it credits (index in the invoice's lines).",
  })
  invoice_line: number;
}

@ApiSchema({
  description:
    'A numbered credit note: what of an invoice it credits (lines, taxes, total, tax included) and where the value went.',
})
export class CreditNoteDto {
  @ApiProperty({ example: 'cn_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({
    example: 'CN-2026-000001',
    maxLength: MAX_DOCUMENT_NUMBER_LENGTH,
    description: "From the tenant's credit note series.",
  })
  number: string;
  @ApiInteger({ example: 1, minimum: 1, description: "The number's place in its series, gapless." })
  sequence: number;
  @ApiProperty({ example: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) invoice_id: string;
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) subscriber_id: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ example: 'Outage 3-5 December' }) reason: string;
  @ApiProperty({ type: [CreditNoteLineDto] }) lines: CreditNoteLineDto[];
  @ApiMoney({ example: 1000, description: 'Σ of the lines’ nets.' }) subtotal: number;
  @ApiProperty({ type: [TaxSummaryRowDto] }) taxes: TaxSummaryRowDto[];
  @ApiMoney({ example: 210, description: 'Σ of the taxes.' }) tax_amount: number;
  @ApiMoney({ example: 1210, description: 'subtotal + tax_amount: what it credits.' }) total: number;
  @ApiProperty({
    example: 'txn_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The credit transaction that carries its value (GET /transactions/{id}).',
  })
  credit_transaction_id: string;
  @ApiMoney({
    example: 1210,
    description:
      'What of it lowered what the invoice still owed when it was issued (the rest is credit or refund).',
  })
  applied_to_invoice: number;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'The refund transaction, if asked.',
  })
  refund_transaction_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'The payment the refund went back through; null without a refund.',
  })
  refund_of: string | null;
  @ApiProperty({ example: '2026-12-05T10:00:00.000Z' }) created_at: string;

  static from(note: CreditNote): CreditNoteDto {
    return {
      id: note.id,
      number: note.number,
      sequence: note.sequence,
      invoice_id: note.invoiceId,
      subscriber_id: note.subscriberId,
      currency: note.currency,
      reason: note.reason,
      lines: note.lines.map((line: CreditNoteLine) => ({
        ...lineDto(line),
        invoice_line: line.invoice_line,
      })),
      subtotal: note.total - note.taxAmount,
      taxes: note.taxes,
      tax_amount: note.taxAmount,
      total: note.total,
      credit_transaction_id: note.creditTransactionId,
      applied_to_invoice: note.appliedToInvoice,
      refund_transaction_id: note.refundTransactionId,
      refund_of: note.refundOf,
      created_at: note.createdAt.toISOString(),
    };
  }
}
