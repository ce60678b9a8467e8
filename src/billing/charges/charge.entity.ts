import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { bigintMoney } from '../../common/money';
import { Tenant } from '../../gateway';

export enum ChargeStatus {
  Pending = 'pending',
  Invoiced = 'invoiced',
}

/** Where a charge came from: the API, a debit transaction, a service's termination, or a collections fee. */
export enum ChargeSource {
  Api = 'api',
  Debit = 'debit',
  Termination = 'termination',
  LateFee = 'late_fee',
  ReconnectionFee = 'reconnection_fee',
  /** A service's data cap top-up (POST /services/{id}/top-ups); source_id is the top-up. */
  TopUp = 'top_up',
}

export const CHARGE_SOURCES = Object.values(ChargeSource);

/**
 * A pending invoice item: a one-off amount (or, from a termination, a credit for prepaid days) that the next invoice
 * issued to the subscriber in its currency carries as a line, then marks invoiced.
 */
@Entity('charges')
@ForeignKey('subscribers', ['tenantId', 'subscriberId'], ['tenantId', 'id'], {
  name: 'fk_charges_subscriber',
})
@Index('ix_charges_tenant_subscriber_status', ['tenantId', 'subscriberId', 'status', 'createdAt', 'id'])
// A debit, a late fee (per invoice) and a reconnection fee (per lifted suspension) make one charge each, however
// often the rule or the request is retried.
@Index('uq_charges_source', ['tenantId', 'source', 'sourceId'], {
  unique: true,
  where: `"source" IN ('debit', 'late_fee', 'reconnection_fee')`,
})
@Check('chk_charges_status', `"status" IN ('pending', 'invoiced')`)
@Check(
  'chk_charges_source',
  `"source" IN ('api', 'debit', 'termination', 'late_fee', 'reconnection_fee', 'top_up')`,
)
@Check('chk_charges_amount', `"quantity" > 0 AND "amount" = "quantity" * "unit_amount"`)
@Check('chk_charges_invoiced', `("status" = 'invoiced') = ("invoiced_at" IS NOT NULL)`)
export class Charge {
  @ForeignKey(() => Tenant, { name: 'fk_charges_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  subscriberId: string;

  @Column('text', { nullable: true })
  serviceId: string | null;

  @Column('text')
  description: string;

  @Column('integer')
  quantity: number;

  /** Per unit, in minor units; negative only on a termination's credit. */
  @Column('bigint', { transformer: bigintMoney })
  unitAmount: number;

  @Column('bigint', { transformer: bigintMoney })
  amount: number;

  @Column('text')
  currency: string;

  @Column('text')
  status: ChargeStatus;

  @Column('text')
  source: ChargeSource;

  /** The debit transaction, terminated service, or invoice (late fee) the charge came from. */
  @Column('text', { nullable: true })
  sourceId: string | null;

  /** The first and last day (inclusive) a termination's line covers; null otherwise. */
  @Column('date', { nullable: true })
  periodStart: string | null;

  @Column('date', { nullable: true })
  periodEnd: string | null;

  /** The invoice that carried it, or the credit issued when the lines it went with netted below zero. */
  @Column('text', { nullable: true })
  invoiceId: string | null;

  @Column('text', { nullable: true })
  creditId: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  invoicedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  /** The tax rates its line is taxed at; null: the billing profile's defaults; empty: untaxed. */
  @Column('text', { array: true, nullable: true })
  taxRateIds: string[] | null;
}
