import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ApiMoney } from '../../common/swagger/api-types';
import { IsCurrency } from '../../common/validation/is-currency';
import { IsDateOnly } from '../../common/validation/is-date-only';
import { Optional } from '../../common/validation/optional';

export class StatementQueryDto {
  @ApiPropertyOptional({
    example: '2026-11-01',
    description: 'First day (UTC, YYYY-MM-DD) the statement lists; default: the day of the first entry.',
  })
  @Optional()
  @IsDateOnly()
  from?: string;

  @ApiPropertyOptional({
    example: '2026-11-30',
    description: 'Last day it lists, inclusive; default: today.',
  })
  @Optional()
  @IsDateOnly()
  to?: string;

  @ApiPropertyOptional({
    example: 'EUR',
    description:
      "The account's currency; default: the subscriber's billing profile's (else the only one it has).",
  })
  @Optional()
  @IsCurrency()
  currency?: string;
}

export const STATEMENT_KINDS = [
  'invoice',
  'invoice_voided',
  'payment',
  'credit',
  'credit_note',
  'debit',
  'refund',
  'write_off',
] as const;
export type StatementKind = (typeof STATEMENT_KINDS)[number];

@ApiSchema({
  description: 'One line of a statement: a ledger entry with what it changed and the running balance.',
})
export class StatementEntryDto {
  @ApiProperty({ example: '2026-11-01T00:30:00.000Z', description: 'When it entered the ledger.' })
  date: string;
  @ApiProperty({
    enum: STATEMENT_KINDS,
    description:
      'What the entry records: an invoice (or its void), a payment, a credit (credit_note when a credit note carries it), a debit, a refund or a write-off.',
  })
  kind: StatementKind;
  @ApiProperty({
    example: 'INV-2026-000042',
    description: "The document's number (invoice, credit note), or the payment's reference or id.",
  })
  reference: string;
  @ApiProperty({ example: 'Invoice INV-2026-000042' }) description: string;
  @ApiProperty({ example: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The invoice or transaction.' })
  source_id: string;
  @ApiMoney({ example: 6049, description: 'What it added to what is owed (0: none).' }) debit: number;
  @ApiMoney({ example: 0, description: 'What it took off (0: none).' }) credit: number;
  @ApiMoney({ example: 6049, signed: true, description: 'What is owed after it (negative: in credit).' })
  balance: number;
}

@ApiSchema({
  description:
    "A subscriber's account over a period in one currency: the balance before it, every ledger entry in it in order with the running balance, the balance after it.",
})
export class StatementDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) subscriber_id: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({
    example: '2026-11-01',
    nullable: true,
    type: String,
    description: 'null: from the first entry.',
  })
  from: string | null;
  @ApiProperty({ example: '2026-11-30' }) to: string;
  @ApiMoney({ example: 0, signed: true, description: 'What was owed before `from`.' })
  opening_balance: number;
  @ApiProperty({ type: [StatementEntryDto] }) entries: StatementEntryDto[];
  @ApiMoney({ example: 6049, description: 'Σ of the entries’ debits.' }) total_debits: number;
  @ApiMoney({ example: 0, description: 'Σ of the entries’ credits.' }) total_credits: number;
  @ApiMoney({
    example: 6049,
    signed: true,
    description:
      'opening_balance + debits − credits: what was owed at the end of `to` (the ledger’s balance then).',
  })
  closing_balance: number;
}
