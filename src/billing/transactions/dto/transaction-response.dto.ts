import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { AllocationDto } from './allocation.dto';
import { Allocation, Transaction, TRANSACTION_KINDS, TRANSACTION_SOURCES } from '../transaction.entity';
import type { Metadata } from '../../../common/metadata';
import { ApiMetadata, ApiMoney } from '../../../common/swagger/api-types';

@ApiSchema({
  description: 'Money recorded for a subscriber (payment, credit, debit or refund), with its allocations.',
})
export class TransactionDto {
  @ApiProperty({ example: 'txn_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) subscriber_id: string;
  @ApiProperty({ enum: TRANSACTION_KINDS }) kind: string;
  @ApiProperty({ enum: TRANSACTION_SOURCES }) source: string;
  @ApiMoney({ example: 4999 }) amount: number;
  @ApiProperty({ example: 'USD' }) currency: string;
  @ApiProperty({ nullable: true, type: String }) external_id: string | null;
  @ApiProperty({ nullable: true, type: String }) reference: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String }) method: string | null;
  @ApiProperty({ example: '2026-11-20T15:04:05.000Z' }) occurred_at: string;
  @ApiProperty({ nullable: true, type: String }) refund_of: string | null;
  @ApiMetadata({ example: { gateway: 'stripe' } }) metadata: Metadata;
  @ApiMoney({ example: 2500 }) allocated_amount: number;
  @ApiMoney({ example: 2499, description: 'amount − allocated − refunded.' }) unallocated_amount: number;
  @ApiMoney({ example: 0 }) refunded_amount: number;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;
  @ApiProperty({ type: [AllocationDto], required: false, description: 'On GET one and on allocate.' })
  allocations?: AllocationDto[];

  static from(transaction: Transaction, allocations?: Allocation[]): TransactionDto {
    return {
      id: transaction.id,
      subscriber_id: transaction.subscriberId,
      kind: transaction.kind,
      source: transaction.source,
      amount: transaction.amount,
      currency: transaction.currency,
      external_id: transaction.externalId,
      reference: transaction.reference,
      description: transaction.description,
      method: transaction.method,
      occurred_at: transaction.occurredAt.toISOString(),
      refund_of: transaction.refundOf,
      metadata: transaction.metadata,
      allocated_amount: transaction.allocatedAmount,
      unallocated_amount: transaction.unallocatedAmount,
      refunded_amount: transaction.refundedAmount,
      created_at: transaction.createdAt.toISOString(),
      ...(allocations ? { allocations: allocations.map(AllocationDto.from) } : {}),
    };
  }
}
