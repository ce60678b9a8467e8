import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Allocation } from '../transaction.entity';
import { ApiMoney } from '../../../common/swagger/api-types';

/** A payment or credit applied to an invoice or the balance, as invoices and transactions both show it. */
@ApiSchema({
  description: 'Part of a payment or credit applied to one invoice or to the balance; immutable once made.',
})
export class AllocationDto {
  @ApiProperty({ example: 'alc_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'txn_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The payment or credit applied.' })
  transaction_id: string;
  @ApiProperty({
    example: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description: 'The invoice paid; null when applied to the balance.',
  })
  invoice_id: string | null;
  @ApiProperty({
    enum: ['invoice', 'balance'],
    description: 'invoice: applied to `invoice_id`; balance: a credit toward later invoices.',
  })
  target: 'invoice' | 'balance';
  @ApiMoney({ example: 2500, description: 'The amount applied, in minor units of `currency`.' })
  amount: number;
  @ApiProperty({ example: 'USD', description: 'ISO 4217; that of the transaction (and the invoice).' })
  currency: string;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;

  static from(allocation: Allocation): AllocationDto {
    return {
      id: allocation.id,
      transaction_id: allocation.transactionId,
      invoice_id: allocation.invoiceId,
      target: allocation.invoiceId ? 'invoice' : 'balance',
      amount: allocation.amount,
      currency: allocation.currency,
      created_at: allocation.createdAt.toISOString(),
    };
  }
}
