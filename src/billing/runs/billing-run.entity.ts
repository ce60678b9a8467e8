import type { Actor } from '../../common/request-context';
import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../../gateway';

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
