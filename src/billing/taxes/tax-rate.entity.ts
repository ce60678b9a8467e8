import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../../gateway';
import { formatPercentage } from './tax-computation';

/** A percentage as the API shows it: a decimal string with four decimals ("21.0000"), whatever the driver answers. */
const percentage = {
  to: (value: string | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : formatPercentage(String(value))),
};

/**
 * A tax rate lines are taxed at (docs/billing.md, "Taxes"). Once an invoice used it (`first_used_at`), what it
 * computes never changes: it is archived (active false) and replaced, not edited.
 */
@Entity('tax_rates')
@Index('ix_tax_rates_tenant_created', ['tenantId', 'createdAt', 'id'])
@Check('chk_tax_rates_percentage', `"percentage" >= 0 AND "percentage" <= 100`)
@Check('chk_tax_rates_country', `"country" IS NULL OR "country" ~ '^[A-Z]{2}$'`)
export class TaxRate {
  @ForeignKey(() => Tenant, { name: 'fk_tax_rates_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  /** What invoices print for it ("VAT 21%"). */
  @Column('text')
  name: string;

  /** Percent, 0–100, four decimals ("21.0000"). */
  @Column('numeric', { precision: 8, scale: 4, transformer: percentage })
  percentage: string;

  /** The prices it applies to include it (a line's rates are all inclusive or all exclusive). */
  @Column('boolean', { default: false })
  inclusive: boolean;

  /** Applied on top of the line's other taxes rather than on the net alone. */
  @Column('boolean', { default: false })
  compound: boolean;

  /** ISO 3166-1 alpha-2, upper case; null: not said. */
  @Column('text', { nullable: true })
  country: string | null;

  @Column('text', { nullable: true })
  region: string | null;

  @Column('text', { nullable: true })
  description: string | null;

  /** false: archived; a tax_rate_ids list written from now on may not name it. */
  @Column('boolean', { default: true })
  active: boolean;

  /** When an invoice first applied it (set by invoicing through markUsed); null: never used, still editable. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  firstUsedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
