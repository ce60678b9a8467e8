import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Subscriber } from '../../subscribers';
import { Tenant } from '../../gateway';
import { bigintMoney } from '../../common/money';

export enum LedgerEntryType {
  Invoice = 'invoice',
  InvoiceVoided = 'invoice_voided',
  Payment = 'payment',
  Credit = 'credit',
  Debit = 'debit',
  Refund = 'refund',
  /** What an invoice still asked, written off as uncollectable (POST /invoices/{id}/write-off): lowers the balance. */
  WriteOff = 'write_off',
}

/**
 * The subscriber's append-only account. `amount` is signed from the subscriber's side: positive raises what they owe
 * (invoices, debits, refunds), negative lowers it (payments, credits, voids, write-offs). `balance_after` is the
 * running balance of that subscriber in that currency.
 */
@Entity('ledger_entries')
@Index('ix_ledger_subscriber_currency_created', ['tenantId', 'subscriberId', 'currency', 'createdAt', 'id'])
@Index('ix_ledger_subscriber_created', ['tenantId', 'subscriberId', 'createdAt', 'id'])
@Check(
  'chk_ledger_entries_type',
  `"type" IN ('invoice', 'invoice_voided', 'payment', 'credit', 'debit', 'refund', 'write_off')`,
)
@Check('chk_ledger_entries_amount', `"amount" <> 0 AND abs("amount") <= 9007199254740991`)
@Check('chk_ledger_entries_balance', `abs("balance_after") <= 9007199254740991`)
export class LedgerEntry {
  @ForeignKey(() => Tenant, { name: 'fk_ledger_entries_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @ForeignKey(() => Subscriber, { name: 'fk_ledger_entries_subscriber' })
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
@Check('chk_subscriber_balances_balance', `abs("balance") <= 9007199254740991`)
export class SubscriberBalance {
  @ForeignKey(() => Tenant, { name: 'fk_subscriber_balances_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @ForeignKey(() => Subscriber, { name: 'fk_subscriber_balances_subscriber' })
  @PrimaryColumn('text')
  subscriberId: string;

  @PrimaryColumn('text')
  currency: string;

  @Column('bigint', { transformer: bigintMoney })
  balance: number;
}
