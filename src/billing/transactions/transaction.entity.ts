import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { bigintMoney } from '../../common/money';
import type { Metadata } from '../../subscribers/subscriber.entity';

export enum TransactionKind {
  Payment = 'payment',
  Credit = 'credit',
  Debit = 'debit',
  Refund = 'refund',
}
export const TRANSACTION_KINDS = Object.values(TransactionKind);

/** Kinds that bring money in, and so can be allocated to invoices or the balance. */
export const ALLOCATABLE_KINDS = [TransactionKind.Payment, TransactionKind.Credit];

export enum TransactionSource {
  External = 'external',
  Adjustment = 'adjustment',
}
export const TRANSACTION_SOURCES = Object.values(TransactionSource);

@Entity('transactions')
@Index('ix_transactions_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_transactions_tenant_subscriber_created', ['tenantId', 'subscriberId', 'createdAt', 'id'])
@Index('ix_transactions_tenant_kind_created', ['tenantId', 'kind', 'createdAt', 'id'])
@Index('ix_transactions_tenant_source_created', ['tenantId', 'source', 'createdAt', 'id'])
@Index('ix_transactions_tenant_occurred', ['tenantId', 'occurredAt'])
@Index('uq_transactions_external_id', ['tenantId', 'externalId'], { unique: true })
export class Transaction {
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  subscriberId: string;

  @Column('text')
  kind: TransactionKind;

  @Column('text')
  source: TransactionSource;

  @Column('bigint', { transformer: bigintMoney })
  amount: number;

  @Column('text')
  currency: string;

  @Column('text', { nullable: true })
  externalId: string | null;

  @Column('text', { nullable: true })
  reference: string | null;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('text', { nullable: true })
  method: string | null;

  @Column({ type: 'timestamptz', precision: 3 })
  occurredAt: Date;

  /** For a refund: the payment it returns money from. */
  @Column('text', { nullable: true })
  refundOf: string | null;

  @Column('jsonb')
  metadata: Metadata;

  @Column('bigint', { transformer: bigintMoney })
  allocatedAmount: number;

  @Column('bigint', { transformer: bigintMoney })
  refundedAmount: number;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  /** What is left to allocate or refund. Debits and refunds are never allocated, so theirs is their amount. */
  get unallocatedAmount(): number {
    return this.amount - this.allocatedAmount - this.refundedAmount;
  }
}

/** A payment or credit applied to an invoice, or to the balance as a whole. Immutable once written. */
@Entity('allocations')
@Index('ix_allocations_transaction', ['tenantId', 'transactionId', 'createdAt'])
@Index('ix_allocations_invoice', ['tenantId', 'invoiceId', 'createdAt'])
export class Allocation {
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  transactionId: string;

  /** Null when the allocation targets the balance. */
  @Column('text', { nullable: true })
  invoiceId: string | null;

  @Column('text')
  subscriberId: string;

  @Column('bigint', { transformer: bigintMoney })
  amount: number;

  @Column('text')
  currency: string;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
