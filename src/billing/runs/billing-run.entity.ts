import type { Actor } from '../../common/request-context';
import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { bigintMoney } from '../../common/money';
import { Tenant } from '../../gateway';
import type { InvoiceLine } from '../invoices/invoice.entity';
import type { AdvanceCharge } from './plan-days';

export enum BillingRunStatus {
  Running = 'running',
  Completed = 'completed',
  Failed = 'failed',
}

export const BILLING_RUN_STATUSES = Object.values(BillingRunStatus);

export enum BillingRunTrigger {
  Api = 'api',
  Schedule = 'schedule',
}

export interface RunAmount {
  currency: string;
  amount: number;
}

export interface RunError {
  subscriber_id: string;
  reason: string;
}

/** A bill run: the subscribers due on `as_of`, invoiced for the period starting that day, with its progress. */
@Entity('billing_runs')
@Index('ix_billing_runs_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_billing_runs_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
// The scheduler's: one scheduled run per tenant and day, however many instances try.
@Index('uq_billing_runs_scheduled_day', ['tenantId', 'asOf'], {
  unique: true,
  where: `"trigger" = 'schedule'`,
})
// The worker's claim walks the runs still running.
@Index('ix_billing_runs_claimable', ['leaseUntil'], { where: `"status" = 'running'` })
@Check('chk_billing_runs_status', `"status" IN ('running', 'completed', 'failed')`)
@Check('chk_billing_runs_trigger', `"trigger" IN ('api', 'schedule')`)
@Check(
  'chk_billing_runs_counts',
  `"subscribers_due" >= 0 AND "subscribers_billed" >= 0 AND "invoices_created" >= 0 AND "credits_created" >= 0`,
)
export class BillingRun {
  @ForeignKey(() => Tenant, { name: 'fk_billing_runs_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  /** YYYY-MM-DD: the billing day and the first day of the period billed. */
  @Column('date')
  asOf: string;

  @Column('boolean')
  dryRun: boolean;

  @Column('text')
  trigger: BillingRunTrigger;

  @Column('text')
  status: BillingRunStatus;

  @Column('integer')
  subscribersDue: number;

  @Column('integer')
  subscribersBilled: number;

  @Column('integer')
  invoicesCreated: number;

  @Column('integer')
  creditsCreated: number;

  /** Invoiced per currency, by currency. */
  @Column('jsonb')
  amountTotal: RunAmount[];

  @Column('jsonb')
  errors: RunError[];

  /** Who started it: the token, or the scheduler (system); its invoices' events name the same actor. */
  @Column('jsonb')
  actor: Actor;

  @Column('text', { nullable: true })
  requestId: string | null;

  /** The claim of the instance carrying it out; a run whose claim ran out is taken up by another. */
  @Column('text', { nullable: true })
  leaseId: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  leaseUntil: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  completedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/**
 * A subscriber's billed period: the key that makes billing exactly once (one row per subscriber and period start,
 * claimed by the batch that bills it), and what was charged in advance per service, the base of the next run's
 * proration.
 */
@Entity('billing_periods')
@ForeignKey('subscribers', ['tenantId', 'subscriberId'], ['tenantId', 'id'], {
  name: 'fk_billing_periods_subscriber',
})
@Index('ix_billing_periods_run', ['runId'])
@Check('chk_billing_periods_range', `"period_end" > "period_start"`)
export class BillingPeriod {
  @ForeignKey(() => Tenant, { name: 'fk_billing_periods_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  subscriberId: string;

  @PrimaryColumn('date')
  periodStart: string;

  @Column('date')
  periodEnd: string;

  @ForeignKey(() => BillingRun, { name: 'fk_billing_periods_run' })
  @Column('text')
  runId: string;

  /** The invoice issued for the period; null when its lines netted below zero (a credit) or to nothing. */
  @Column('text', { nullable: true })
  invoiceId: string | null;

  /** The credit transaction issued instead of an invoice when the lines netted below zero. */
  @Column('text', { nullable: true })
  creditId: string | null;

  /** [{service_id, plan_id, amount}]: charged in advance for the period. */
  @Column('jsonb')
  charges: { service_id: string; plan_id: string; amount: number }[];

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

/**
 * How far a service is billed: the first day no charge covers yet, and the advance charges whose true-up is still to
 * come (docs/billing.md, "Billed-through dates"). Written by the bill run and at a service's termination.
 */
@Entity('service_billing')
@Index('ix_service_billing_subscriber', ['tenantId', 'subscriberId'])
export class ServiceBilling {
  @ForeignKey(() => Tenant, { name: 'fk_service_billing_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  serviceId: string;

  @Column('text')
  subscriberId: string;

  /** YYYY-MM-DD: every day before it is charged; null while the service was never billed. */
  @Column('date', { nullable: true })
  billedUntil: string | null;

  @Column('jsonb')
  openCharges: AdvanceCharge[];

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/** What a run issued (or, dry, would issue) to one subscriber: its lines and total, or why it could not. */
@Entity('billing_run_items')
@Index('uq_billing_run_items_subscriber', ['runId', 'subscriberId'], { unique: true })
@Index('ix_billing_run_items_run_created', ['tenantId', 'runId', 'createdAt', 'id'])
export class BillingRunItem {
  @ForeignKey(() => Tenant, { name: 'fk_billing_run_items_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @ForeignKey(() => BillingRun, { name: 'fk_billing_run_items_run' })
  @Column('text')
  runId: string;

  @Column('text')
  subscriberId: string;

  @Column('text')
  currency: string;

  @Column('jsonb')
  lines: InvoiceLine[];

  /** The lines' sum: below zero, a credit was (or would be) issued instead of an invoice. */
  @Column('bigint', { transformer: bigintMoney })
  total: number;

  @Column('text', { nullable: true })
  invoiceId: string | null;

  @Column('text', { nullable: true })
  creditId: string | null;

  @Column('text', { nullable: true })
  error: string | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
