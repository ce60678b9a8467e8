import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { LedgerEntry, LedgerEntryType } from '../ledger-entry.entity';
import { ApiMoney } from '../../../common/swagger/api-types';

@ApiSchema({ description: 'What a subscriber owes (positive) or has in credit (negative) in one currency.' })
export class CurrencyBalanceDto {
  @ApiProperty({ example: 'USD' }) currency: string;
  @ApiMoney({
    signed: true,
    example: 2499,
    description: 'What the subscriber owes; negative is credit in their favour.',
  })
  balance: number;
  @ApiMoney({ example: 2499, description: 'Sum of amount_due over open and partially paid invoices.' })
  open_invoices_due: number;
  @ApiMoney({ example: 0, description: 'Payments and credits not yet allocated or refunded.' })
  unallocated_credit: number;
}

@ApiSchema({ description: "A subscriber's balance, one figure per currency." })
export class SubscriberBalanceDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber.' })
  subscriber_id: string;
  @ApiProperty({ type: [CurrencyBalanceDto] }) balances: CurrencyBalanceDto[];
}

@ApiSchema({ description: "One entry of a subscriber's ledger, with the balance after it." })
export class LedgerEntryDto {
  @ApiProperty({ example: 'led_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({
    enum: Object.values(LedgerEntryType),
    description: 'What posted it: an invoice issued, voided or written off, or a transaction of that kind.',
  })
  type: string;
  @ApiProperty({ example: 'USD' }) currency: string;
  @ApiMoney({ signed: true, example: 4999, description: 'Signed: positive raises what the subscriber owes.' })
  amount: number;
  @ApiMoney({
    signed: true,
    example: 4999,
    description: 'The running balance in this currency once this entry is posted (negative: credit).',
  })
  balance_after: number;
  @ApiProperty({
    example: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description:
      'The invoice (invoice, invoice_voided, write_off) or transaction (the other types) that posted it.',
  })
  source_id: string;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;

  static from(entry: LedgerEntry): LedgerEntryDto {
    return {
      id: entry.id,
      type: entry.type,
      currency: entry.currency,
      amount: entry.amount,
      balance_after: entry.balanceAfter,
      source_id: entry.sourceId,
      created_at: entry.createdAt.toISOString(),
    };
  }
}
