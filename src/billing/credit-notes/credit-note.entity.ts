import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { bigintMoney } from '../../common/money';
import { Tenant } from '../../gateway';
import { Subscriber } from '../../subscribers';
import { Invoice } from '../invoices/invoice.entity';
import type { TaxSummaryRow } from '../taxes/tax-computation';
import type { CreditNoteLine } from './credit-note-lines';

/**
 * A credit note (issue 29 item 7): a numbered document that credits part or all of a finalised invoice, taxed like the
 * lines it reverses. Its value is a credit transaction (`creditTransactionId`): allocated to the invoice while it is
 * owed, else the subscriber's credit (auto-apply), or, with a refund, paid back out of a payment of the invoice.
 */
@Entity('credit_notes')
@Index('uq_credit_notes_tenant_number', ['tenantId', 'number'], { unique: true })
@Index('ix_credit_notes_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_credit_notes_invoice', ['tenantId', 'invoiceId', 'createdAt', 'id'])
@Check(
  'chk_credit_notes_amounts',
  `"total" > 0 AND "tax_amount" <= "total" AND "applied_to_invoice" >= 0 AND "applied_to_invoice" <= "total" AND ("refunded" IS NULL OR ("refunded" > 0 AND "refunded" <= "total"))`,
)
@Check('chk_credit_notes_sequence', `"sequence" > 0`)
export class CreditNote {
  @ForeignKey(() => Tenant, { name: 'fk_credit_notes_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  /** From the tenant's credit note series (`CN-2026-000001`). */
  @Column('text')
  number: string;

  @Column('integer')
  sequence: number;

  @ForeignKey(() => Invoice, { name: 'fk_credit_notes_invoice' })
  @Column('text')
  invoiceId: string;

  @ForeignKey(() => Subscriber, { name: 'fk_credit_notes_subscriber' })
  @Column('text')
  subscriberId: string;

  @Column('text')
  currency: string;

  @Column('text')
  reason: string;

  @Column('jsonb')
  lines: CreditNoteLine[];

  @Column('bigint', { transformer: bigintMoney })
  taxAmount: number;

  @Column('jsonb')
  taxes: TaxSummaryRow[];

  /** Tax included. */
  @Column('bigint', { transformer: bigintMoney })
  total: number;

  /** The credit transaction that carries its value. */
  @Column('text')
  creditTransactionId: string;

  /** What of it lowered what the invoice still owed when it was issued. */
  @Column('bigint', { transformer: bigintMoney })
  appliedToInvoice: number;

  /** The refund paid back out of `refundOf`, when one was asked; null otherwise. */
  @Column('text', { nullable: true })
  refundTransactionId: string | null;

  @Column('text', { nullable: true })
  refundOf: string | null;

  @Column('bigint', { nullable: true, transformer: bigintMoney })
  refunded: number | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
