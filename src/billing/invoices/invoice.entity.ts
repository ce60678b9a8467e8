import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Subscriber } from '../../subscribers';
import { Tenant } from '../../gateway';
import { bigintMoney } from '../../common/money';
import type { LineTax, TaxSummaryRow } from '../taxes/tax-computation';

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
  /**
   * The rates the line is taxed at (its own on a manual invoice line; else its charge's, its plan's or the billing
   * profile's defaults; none for an exempt subscriber). Absent on lines issued before taxes existed.
   */
  tax_rate_ids?: string[];
  /** The line's amount without tax: `amount` when priced exclusive, less its taxes when priced inclusive. */
  net_amount?: number;
  /** Σ of `taxes`. */
  tax_amount?: number;
  taxes?: LineTax[];
}

/** A line's net: its net_amount, or its amount on a line issued before taxes existed. */
export function lineNet(line: InvoiceLine): number {
  return line.net_amount ?? line.amount;
}

/** What a line costs the customer: its net and its taxes. */
export function lineGross(line: InvoiceLine): number {
  return lineNet(line) + (line.tax_amount ?? 0);
}

@Entity('invoices')
@Index('ix_invoices_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_invoices_tenant_subscriber_status', ['tenantId', 'subscriberId', 'status', 'dueDate'])
@Index('ix_invoices_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
// The dunning sweeps' index (src/billing/collections/collections.repository.ts): its rows are PAYABLE_STATUSES'.
@Index('ix_invoices_tenant_payable_due', ['tenantId', 'dueDate', 'id'], {
  where: `"status" IN (${PAYABLE_STATUSES.map((status) => `'${status}'`).join(', ')})`,
})
// The reports' reads (src/billing/reports): revenue by the day of issue; aging's invoices settled after its day.
@Index('ix_invoices_tenant_finalized', ['tenantId', 'finalizedAt'], { where: `"finalized_at" IS NOT NULL` })
@Index('ix_invoices_tenant_paid', ['tenantId', 'paidAt'], { where: `"paid_at" IS NOT NULL` })
@Index('ix_invoices_tenant_voided', ['tenantId', 'voidedAt'], { where: `"voided_at" IS NOT NULL` })
@Index('ix_invoices_tenant_written_off', ['tenantId', 'writtenOffAt'], {
  where: `"written_off_at" IS NOT NULL`,
})
@Index('uq_invoices_tenant_number', ['tenantId', 'number'], { unique: true, where: `"number" IS NOT NULL` })
@Check(
  'chk_invoices_status',
  `"status" IN ('draft', 'open', 'partially_paid', 'paid', 'void', 'written_off')`,
)
@Check('chk_invoices_sequence', `"sequence" > 0`)
@Check(
  'chk_invoices_numbered',
  `("status" IN ('draft', 'void') OR "number" IS NOT NULL) AND ("number" IS NULL) = ("sequence" IS NULL)`,
)
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
// A SQL function of the migrations: every line is quantity > 0 × unit_amount = amount, split into a net and taxes that
// add up to it (net = amount when priced exclusive, net + tax = amount when inclusive), and the lines' nets and taxes
// sum to total.
@Check('chk_invoices_lines', `isp_invoice_lines_valid("lines", "total")`)
export class Invoice {
  @ForeignKey(() => Tenant, { name: 'fk_invoices_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  /**
   * The document number from the tenant's invoice series (`INV-2026-000042`), given when the invoice is issued: null
   * while a draft, so a draft that is never issued leaves no gap.
   */
  @Column('text', { nullable: true })
  number: string | null;

  /** The number's place in its series (restarting each year when the series does); null while a draft. */
  @Column('integer', { nullable: true })
  sequence: number | null;

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

  /** Σ of the lines' taxes; the subtotal (Σ of the nets) is total − taxAmount. */
  @Column('bigint', { transformer: bigintMoney })
  taxAmount: number;

  /** One row per rate: what it taxed and the tax, over the lines. */
  @Column('jsonb')
  taxes: TaxSummaryRow[];

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
