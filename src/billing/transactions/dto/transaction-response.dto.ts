import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { AllocationDto } from './allocation.dto';
import {
  ALLOCATABLE_KINDS,
  Allocation,
  Transaction,
  TRANSACTION_KINDS,
  TRANSACTION_SOURCES,
} from '../transaction.entity';
import type { Metadata } from '../../../common/metadata';
import { ApiMetadata, ApiMoney } from '../../../common/swagger/api-types';

@ApiSchema({
  description: 'Money recorded for a subscriber (payment, credit, debit or refund), with its allocations.',
})
export class TransactionDto {
  @ApiProperty({ example: 'txn_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber it is for.' })
  subscriber_id: string;
  @ApiProperty({
    enum: TRANSACTION_KINDS,
    description: 'payment and credit lower the balance (and can be allocated); debit and refund raise it.',
  })
  kind: string;
  @ApiProperty({
    enum: TRANSACTION_SOURCES,
    description: 'external: recorded from a payment system or bank; adjustment: an operator correction.',
  })
  source: string;
  @ApiMoney({
    example: 4999,
    description: 'Positive, in minor units of `currency`; `kind` gives its direction.',
  })
  amount: number;
  @ApiProperty({ example: 'USD', description: 'ISO 4217 code of every amount of this transaction.' })
  currency: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      "The payment system's id (unique per tenant, so a retry cannot record it twice); null: none.",
  })
  external_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Free-form reference as sent (a bank reference).',
  })
  reference: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'How the money moved (card, cash, …), as sent.' })
  method: string | null;
  @ApiProperty({
    example: '2026-11-20T15:04:05.000Z',
    description: 'When the money moved, as sent (default: when it was recorded).',
  })
  occurred_at: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'On a refund: the payment it refunds; else null.',
  })
  refund_of: string | null;
  @ApiMetadata({ example: { gateway: 'stripe' } }) metadata: Metadata;
  @ApiMoney({ example: 2500, description: 'Sum of its allocations to invoices and the balance.' })
  allocated_amount: number;
  @ApiMoney({
    example: 2499,
    nullable: true,
    description:
      'On a payment or credit: amount − allocated − refunded, what is left to apply. null on a debit (it becomes a pending charge the next invoice carries) or a refund: they are not applied.',
  })
  unallocated_amount: number | null;
  @ApiMoney({ example: 0, description: 'On a payment: the sum of the refunds naming it; else 0.' })
  refunded_amount: number;
  @ApiProperty({
    example: true,
    description:
      "On a payment or credit: false when it was recorded with `auto_apply: false`, left for an allocation by hand (auto-apply never takes it; dunning still counts it as received); true: auto-apply applies it on receipt and to invoices issued later, as its subscriber's billing profile's auto_apply says. false on a debit or a refund.",
  })
  auto_apply: boolean;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;
  @ApiProperty({
    type: [AllocationDto],
    required: false,
    description:
      'On GET one and on allocate; on POST /transactions of a payment or credit, what auto-apply applied (empty when nothing).',
  })
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
      unallocated_amount: ALLOCATABLE_KINDS.includes(transaction.kind) ? transaction.unallocatedAmount : null,
      refunded_amount: transaction.refundedAmount,
      auto_apply: ALLOCATABLE_KINDS.includes(transaction.kind) && transaction.autoApply !== false,
      created_at: transaction.createdAt.toISOString(),
      ...(allocations ? { allocations: allocations.map(AllocationDto.from) } : {}),
    };
  }
}
