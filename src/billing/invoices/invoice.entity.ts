import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
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
export class Invoice {
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  /** Sequential per tenant. */
  @Column('integer')
  number: number;

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
export class InvoiceCounter {
  @PrimaryColumn('text')
  tenantId: string;

  @Column('integer')
  lastNumber: number;
}
