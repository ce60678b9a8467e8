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
  /** What was still due was written off as uncollectable (POST /invoices/{id}/write-off): owed no more. */
  WrittenOff = 'written_off',
}

export const INVOICE_STATUSES = Object.values(InvoiceStatus);

/** Statuses in which an invoice takes allocations and counts as owed. */
export const PAYABLE_STATUSES = [InvoiceStatus.Open, InvoiceStatus.PartiallyPaid];

export interface InvoiceLine {
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  /** The service a plan, proration or credit line bills (bill runs and pending charges of a service). */
  service_id?: string;
  /** The plan the line prices. */
  plan_id?: string;
  /** The pending charge the line invoices. */
  charge_id?: string;
  /** The first and last day (inclusive) the line bills. */
  period_start?: string;
  period_end?: string;
}

@Entity('invoices')
@Index('ix_invoices_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_invoices_tenant_subscriber_status', ['tenantId', 'subscriberId', 'status', 'dueDate'])
@Index('ix_invoices_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
@Index('ix_invoices_tenant_payable_due', ['tenantId', 'dueDate', 'id'], {
  where: `"status" IN ('open', 'partially_paid')`,
})
@Index('uq_invoices_tenant_number', ['tenantId', 'number'], { unique: true })
@Check(
  'chk_invoices_status',
  `"status" IN ('draft', 'open', 'partially_paid', 'paid', 'void', 'written_off')`,
)
@Check('chk_invoices_number', `"number" > 0`)
@Check('chk_invoices_amounts', `"total" >= 0 AND "amount_paid" >= 0 AND "amount_paid" <= "total"`)
@Check(
  'chk_invoices_paid_by_status',
  `("status" IN ('draft', 'open', 'void') AND "amount_paid" = 0) OR ("status" = 'partially_paid' AND "amount_paid" > 0 AND "amount_paid" < "total") OR ("status" = 'paid' AND "amount_paid" = "total") OR ("status" = 'written_off' AND "amount_paid" < "total")`,
)
@Check('chk_invoices_paid_at', `("status" = 'paid') = ("paid_at" IS NOT NULL)`)
@Check('chk_invoices_voided_at', `("status" = 'void') = ("voided_at" IS NOT NULL)`)
@Check(
  'chk_invoices_written_off',
  `("status" = 'written_off') = ("written_off_at" IS NOT NULL) AND ("status" = 'written_off') = ("write_off_reason" IS NOT NULL) AND ("status" = 'written_off') = ("amount_written_off" IS NOT NULL) AND ("amount_written_off" IS NULL OR "amount_written_off" = "total" - "amount_paid")`,
)
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

  /** When what was due was written off (POST /invoices/{id}/write-off); null unless written_off. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  writtenOffAt: Date | null;

  /** Why it was written off, as the caller said; null unless written_off. */
  @Column('text', { nullable: true })
  writeOffReason: string | null;

  /** The amount due at the write-off (total − amount_paid then); null unless written_off. */
  @Column('bigint', { nullable: true, transformer: bigintMoney })
  amountWrittenOff: number | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;

  /** What is still owed: total − amount_paid; 0 once written off (the write-off closed it: amount_written_off). */
  get amountDue(): number {
    return this.status === InvoiceStatus.WrittenOff ? 0 : this.total - this.amountPaid;
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
