import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../../gateway';

/** A finance configuration subscribers are billed under. */
@Entity('billing_profiles')
@Index('ix_billing_profiles_tenant_created', ['tenantId', 'createdAt', 'id'])
// The target of subscribers' (tenant_id, billing_profile_id) foreign key: a subscriber's profile is its tenant's.
@Index('uq_billing_profiles_tenant_id', ['tenantId', 'id'], { unique: true })
// One default per tenant: what subscribers without a profile of their own are billed through.
@Index('uq_billing_profiles_default', ['tenantId'], { unique: true, where: `"is_default"` })
@Check(
  'chk_billing_profiles_terms',
  `"billing_day" BETWEEN 1 AND 28 AND "payment_terms_days" >= 0 AND ("auto_suspend_after_days" IS NULL OR "auto_suspend_after_days" >= 1)`,
)
// Uniqueness of the offsets is the DTO's (a CHECK cannot compare an array's elements with each other).
@Check(
  'chk_billing_profiles_reminder_offsets',
  `cardinality("reminder_offsets") <= 10 AND -60 <= ALL("reminder_offsets") AND 365 >= ALL("reminder_offsets")`,
)
export class BillingProfile {
  @ForeignKey(() => Tenant, { name: 'fk_billing_profiles_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  name: string;

  /** ISO 4217, upper case. */
  @Column('text')
  currency: string;

  /** Day of the month invoices are issued, 1–28 so every month has it. */
  @Column('integer')
  billingDay: number;

  @Column('integer')
  paymentTermsDays: number;

  /** Days past due after which the subscriber is suspended for non-payment; null: never. */
  @Column('integer', { nullable: true })
  autoSuspendAfterDays: number | null;

  /** The tenant's default profile: subscribers without one bill through it. */
  @Column('boolean', { default: false })
  isDefault: boolean;

  /**
   * Payments and credits are applied on receipt to open invoices, oldest due first, and what is left to each invoice
   * issued (docs/billing.md, auto-apply); false: they wait for POST /transactions/{id}/allocate.
   */
  @Column('boolean', { default: true })
  autoApply: boolean;

  /** Days relative to the due date (negative: before) an `invoice.reminder` is sent on; empty: none. */
  @Column('integer', { array: true, default: '{}' })
  reminderOffsets: number[];

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
