import type { Metadata } from '../../common/metadata';
import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Invoice } from '../invoices/invoice.entity';
import { Subscriber } from '../../subscribers';
import { Tenant } from '../../gateway';
import { bigintMoney } from '../../common/money';

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
// Money not yet applied, per account: what auto-apply and dunning look up (most transactions are fully applied).
@Index('ix_transactions_unallocated', ['tenantId', 'subscriberId', 'currency'], {
  where: `"kind" IN ('payment', 'credit') AND "amount" > "allocated_amount" + "refunded_amount"`,
})
// Aging (src/billing/reports): the refunds of a payment, and those made after its day.
@Index('ix_transactions_tenant_refund_of', ['tenantId', 'refundOf'], { where: `"refund_of" IS NOT NULL` })
@Check('chk_transactions_kind', `"kind" IN ('payment', 'credit', 'debit', 'refund')`)
@Check('chk_transactions_source', `"source" IN ('external', 'adjustment')`)
@Check(
  'chk_transactions_amounts',
  `"amount" > 0 AND "amount" <= 9007199254740991 AND "allocated_amount" >= 0 AND "refunded_amount" >= 0 AND "allocated_amount" + "refunded_amount" <= "amount"`,
)
@Check(
  'chk_transactions_allocatable',
  `("allocated_amount" = 0 OR "kind" IN ('payment', 'credit')) AND ("refunded_amount" = 0 OR "kind" = 'payment')`,
)
@Check('chk_transactions_refund_of', `("kind" = 'refund') = ("refund_of" IS NOT NULL)`)
export class Transaction {
  @ForeignKey(() => Tenant, { name: 'fk_transactions_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @ForeignKey(() => Subscriber, { name: 'fk_transactions_subscriber' })
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
  @ForeignKey(() => Transaction, { name: 'fk_transactions_refund_of' })
  @Column('text', { nullable: true })
  refundOf: string | null;

  @Column('jsonb')
  metadata: Metadata;

  @Column('bigint', { transformer: bigintMoney })
  allocatedAmount: number;

  @Column('bigint', { transformer: bigintMoney })
  refundedAmount: number;

  /**
   * False when the payment or credit was recorded with `auto_apply: false`: it is left for an allocation by hand, and
   * auto-apply never takes it (dunning still counts it as received). Not used for debits and refunds.
   */
  @Column('boolean', { default: true })
  autoApply: boolean;

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
// Aging (src/billing/reports): allocations made after its day, and those to the balance rather than an invoice.
@Index('ix_allocations_tenant_created', ['tenantId', 'createdAt'])
@Index('ix_allocations_tenant_to_balance', ['tenantId', 'transactionId'], { where: `"invoice_id" IS NULL` })
@Check('chk_allocations_amount', `"amount" > 0`)
export class Allocation {
  @ForeignKey(() => Tenant, { name: 'fk_allocations_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @ForeignKey(() => Transaction, { name: 'fk_allocations_transaction' })
  @Column('text')
  transactionId: string;

  /** Null when the allocation targets the balance. */
  @ForeignKey(() => Invoice, { name: 'fk_allocations_invoice' })
  @Column('text', { nullable: true })
  invoiceId: string | null;

  @ForeignKey(() => Subscriber, { name: 'fk_allocations_subscriber' })
  @Column('text')
  subscriberId: string;

  @Column('bigint', { transformer: bigintMoney })
  amount: number;

  @Column('text')
  currency: string;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
