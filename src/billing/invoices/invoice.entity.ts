import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Subscriber } from '../../subscribers';
import { Tenant } from '../../gateway';
import { bigintMoney } from '../../common/money';

export enum InvoiceStatus {
  Draft = 'draft',
  Open = 'open',
  PartiallyPaid = 'partially_paid',
  Paid = 'paid',
  Void = 'void',
}

export const INVOICE_STATUSES = Object.values(InvoiceStatus);

/** Statuses in which an invoice takes allocations and counts as owed. */
export const PAYABLE_STATUSES = [InvoiceStatus.Open, InvoiceStatus.PartiallyPaid];

export interface InvoiceLine {
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
}

@Entity('invoices')
@Index('ix_invoices_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_invoices_tenant_subscriber_status', ['tenantId', 'subscriberId', 'status', 'dueDate'])
@Index('ix_invoices_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
@Index('ix_invoices_tenant_payable_due', ['tenantId', 'dueDate'], {
  where: `"status" IN ('open', 'partially_paid')`,
})
@Index('uq_invoices_tenant_number', ['tenantId', 'number'], { unique: true })
@Check('chk_invoices_status', `"status" IN ('draft', 'open', 'partially_paid', 'paid', 'void')`)
@Check('chk_invoices_number', `"number" > 0`)
@Check('chk_invoices_amounts', `"total" >= 0 AND "amount_paid" >= 0 AND "amount_paid" <= "total"`)
@Check(
  'chk_invoices_paid_by_status',
  `("status" IN ('draft', 'open', 'void') AND "amount_paid" = 0) OR ("status" = 'partially_paid' AND "amount_paid" > 0 AND "amount_paid" < "total") OR ("status" = 'paid' AND "amount_paid" = "total")`,
)
@Check('chk_invoices_paid_at', `("status" = 'paid') = ("paid_at" IS NOT NULL)`)
@Check('chk_invoices_voided_at', `("status" = 'void') = ("voided_at" IS NOT NULL)`)
// A SQL function of the migration: every line is quantity > 0 × unit_amount ≥ 0 = amount, and they sum to total.
@Check('chk_invoices_lines', `isp_invoice_lines_valid("lines", "total")`)
export class Invoice {
  @ForeignKey(() => Tenant, { name: 'fk_invoices_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  /** Sequential per tenant. */
  @Column('integer')
  number: number;

  @ForeignKey(() => Subscriber, { name: 'fk_invoices_subscriber' })
  @Column('text')
  subscriberId: string;

  @Column('text')
  currency: string;

  @Column('text')
  status: InvoiceStatus;

  @Column('jsonb')
  lines: InvoiceLine[];

  @Column('bigint', { transformer: bigintMoney })
  total: number;

  @Column('bigint', { transformer: bigintMoney })
  amountPaid: number;

  /** YYYY-MM-DD */
  @Column('date')
  dueDate: string;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  finalizedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  paidAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  voidedAt: Date | null;

  /** Why it was voided, as the caller said (POST /invoices/{id}/void); null when no reason was given. */
  @Column('text', { nullable: true })
  voidReason: string | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;

  get amountDue(): number {
    return this.total - this.amountPaid;
  }
}

/** The next invoice number of each tenant, taken under a row lock so numbers never repeat or skip. */
@Entity('invoice_counters')
@Check('chk_invoice_counters_last_number', `"last_number" > 0`)
export class InvoiceCounter {
  @ForeignKey(() => Tenant, { name: 'fk_invoice_counters_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @Column('integer')
  lastNumber: number;
}
