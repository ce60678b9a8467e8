import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../../gateway';
import { bigintMoney } from '../../common/money';

/** How a late fee is reckoned: a fixed amount, or a percentage of the overdue amount. */
export enum LateFeeType {
  Fixed = 'fixed',
  Percentage = 'percentage',
}

export const LATE_FEE_TYPES = Object.values(LateFeeType);

/** A percentage as the API shows it: a decimal string with two decimals ("5.00"), whatever the driver answers. */
const percentage = {
  to: (value: string | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value).toFixed(2)),
};

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
// The late fee: none (every column empty, after_days 0), fixed or a percentage with optional caps (migration 1796200000300).
@Check(
  'chk_billing_profiles_late_fee',
  `("late_fee_after_days" BETWEEN 0 AND 365) AND (("late_fee_type" IS NULL AND "late_fee_amount" IS NULL AND "late_fee_percentage" IS NULL AND "late_fee_min_amount" IS NULL AND "late_fee_max_amount" IS NULL AND "late_fee_after_days" = 0) OR ("late_fee_type" = 'fixed' AND "late_fee_amount" BETWEEN 1 AND 9007199254740991 AND "late_fee_percentage" IS NULL AND "late_fee_min_amount" IS NULL AND "late_fee_max_amount" IS NULL) OR ("late_fee_type" = 'percentage' AND "late_fee_amount" IS NULL AND "late_fee_percentage" > 0 AND "late_fee_percentage" <= 100 AND ("late_fee_min_amount" IS NULL OR "late_fee_min_amount" BETWEEN 1 AND 9007199254740991) AND ("late_fee_max_amount" IS NULL OR "late_fee_max_amount" BETWEEN 1 AND 9007199254740991) AND ("late_fee_min_amount" IS NULL OR "late_fee_max_amount" IS NULL OR "late_fee_min_amount" <= "late_fee_max_amount")))`,
)
@Check(
  'chk_billing_profiles_reconnection_fee',
  `"reconnection_fee" IS NULL OR "reconnection_fee" BETWEEN 1 AND 9007199254740991`,
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

  /** The late fee's kind; null: no late fee (then every late_fee_* column is empty). */
  @Column('text', { nullable: true })
  lateFeeType: LateFeeType | null;

  /** A fixed late fee, in minor units of `currency`; null unless lateFeeType is fixed. */
  @Column('bigint', { nullable: true, transformer: bigintMoney })
  lateFeeAmount: number | null;

  /** A percentage late fee: percent of the overdue amount, two decimals ("5.00"); null unless percentage. */
  @Column('numeric', { precision: 5, scale: 2, nullable: true, transformer: percentage })
  lateFeePercentage: string | null;

  /** A percentage late fee's floor and ceiling, in minor units; null: none. */
  @Column('bigint', { nullable: true, transformer: bigintMoney })
  lateFeeMinAmount: number | null;

  @Column('bigint', { nullable: true, transformer: bigintMoney })
  lateFeeMaxAmount: number | null;

  /** The late fee is charged once today is past due_date + this many days (0: the day after the due date). */
  @Column('integer', { default: 0 })
  lateFeeAfterDays: number;

  /** Charged (a pending charge) when a non-payment suspension is lifted, in minor units; null: none. */
  @Column('bigint', { nullable: true, transformer: bigintMoney })
  reconnectionFee: number | null;

  /** A non-payment suspension is lifted only once the late fees and pending fee charges are paid too. */
  @Column('boolean', { default: false })
  feesBeforeRestoration: boolean;

  /**
   * The tax rates its subscribers' lines are taxed at by default (a plan's or a charge's own list overrides them);
   * empty: untaxed. At most 3, all inclusive or all exclusive (checked on write against tax_rates).
   */
  @Column('text', { array: true, default: '{}' })
  taxRateIds: string[];

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
