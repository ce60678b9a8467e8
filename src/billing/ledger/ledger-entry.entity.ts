import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { bigintMoney } from '../../common/money';

export enum LedgerEntryType {
  Invoice = 'invoice',
  InvoiceVoided = 'invoice_voided',
  Payment = 'payment',
  Credit = 'credit',
  Debit = 'debit',
  Refund = 'refund',
}

/**
 * The subscriber's append-only account. `amount` is signed from the subscriber's side: positive raises what they owe
 * (invoices, debits, refunds), negative lowers it (payments, credits, voids). `balance_after` is the running balance
 * of that subscriber in that currency.
 */
@Entity('ledger_entries')
@Index('ix_ledger_subscriber_currency_created', ['tenantId', 'subscriberId', 'currency', 'createdAt', 'id'])
@Index('ix_ledger_subscriber_created', ['tenantId', 'subscriberId', 'createdAt', 'id'])
export class LedgerEntry {
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  subscriberId: string;

  @Column('text')
  currency: string;

  @Column('text')
  type: LedgerEntryType;

  @Column('bigint', { transformer: bigintMoney })
  amount: number;

  @Column('bigint', { transformer: bigintMoney })
  balanceAfter: number;

  /** The invoice or transaction this entry records. */
  @Column('text')
  sourceId: string;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

/** The current balance of a subscriber in one currency; the row lock that serialises ledger appends. */
@Entity('subscriber_balances')
export class SubscriberBalance {
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  subscriberId: string;

  @PrimaryColumn('text')
  currency: string;

  @Column('bigint', { transformer: bigintMoney })
  balance: number;
}
