import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { bigintMoney } from '../../common/money';
import { Tenant } from '../../gateway';

const bigintBytes = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/**
 * One billing period of a capped service as the data cap worker saw it: when it warned (80 %) and when the cap was
 * reached, so each is said once per period (docs/network.md, "Data caps").
 */
@Entity('service_usage_periods')
@ForeignKey('services', ['tenantId', 'serviceId'], ['tenantId', 'id'], {
  name: 'fk_service_usage_periods_service',
})
@Check('chk_service_usage_periods_range', `"period_end" > "period_start"`)
export class ServiceUsagePeriod {
  @ForeignKey(() => Tenant, { name: 'fk_service_usage_periods_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  serviceId: string;

  /** The first day of the period (UTC), on the subscriber's billing-day grid. */
  @PrimaryColumn('date')
  periodStart: string;

  /** The day after its last. */
  @Column('date')
  periodEnd: string;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  warnedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  reachedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

/** Bytes bought for one billing period of a service, charged once through billing's pending charges. */
@Entity('service_top_ups')
@Index('ix_service_top_ups_service_period', ['tenantId', 'serviceId', 'periodStart'])
@ForeignKey('services', ['tenantId', 'serviceId'], ['tenantId', 'id'], {
  name: 'fk_service_top_ups_service',
})
@Check('chk_service_top_ups_bytes', `"bytes" > 0`)
@Check('chk_service_top_ups_price', `"price" >= 0`)
export class ServiceTopUp {
  @ForeignKey(() => Tenant, { name: 'fk_service_top_ups_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  serviceId: string;

  @Column('text')
  subscriberId: string;

  @Column('bigint', { transformer: bigintBytes })
  bytes: number;

  @Column('bigint', { transformer: bigintMoney })
  price: number;

  @Column('text')
  currency: string;

  @Column('text')
  description: string;

  /** The billing period the bytes are for. */
  @Column('date')
  periodStart: string;

  @Column('date')
  periodEnd: string;

  /** Billing's pending charge for the price; null when free (price 0). */
  @Column('text', { nullable: true })
  chargeId: string | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
