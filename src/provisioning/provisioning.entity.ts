import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { bigintMoney } from '../common/money';
import { Tenant } from '../gateway';
import { OrderAction, OrderStatus, ServiceStatus } from './service-status';

const IN = (values: string[]) => values.map((value) => `'${value}'`).join(', ');

@Entity('service_plans')
@Index('ix_service_plans_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('uq_service_plans_name', ['tenantId', 'name'], { unique: true })
// The key the services' composite foreign key points at (a service's plan is its tenant's).
@Index('uq_service_plans_tenant_id', ['tenantId', 'id'], { unique: true })
@Check('chk_service_plans_speeds', `"download_kbps" > 0 AND "upload_kbps" > 0`)
@Check('chk_service_plans_price', `"price" >= 0`)
@Check('chk_service_plans_billing_period', `"billing_period" IN ('monthly', 'quarterly', 'yearly')`)
export class ServicePlan {
  @ForeignKey(() => Tenant, { name: 'fk_service_plans_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  name: string;

  @Column('integer')
  downloadKbps: number;

  @Column('integer')
  uploadKbps: number;

  @Column('bigint', { transformer: bigintMoney })
  price: number;

  @Column('text')
  currency: string;

  @Column('text')
  billingPeriod: string;

  @Column('boolean')
  active: boolean;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

@Entity('services')
@Index('ix_services_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_services_tenant_subscriber_created', ['tenantId', 'subscriberId', 'createdAt', 'id'])
@Index('ix_services_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
@Index('ix_services_tenant_plan_created', ['tenantId', 'planId', 'createdAt', 'id'])
@Index('ix_services_tenant_username', ['tenantId', 'pppoeUsername'])
@Index('uq_services_tenant_id', ['tenantId', 'id'], { unique: true })
// A login and an address belong to one live service of the tenant; a terminated service frees them.
@Index('uq_services_pppoe_username', ['tenantId', 'pppoeUsername'], {
  unique: true,
  where: `"status" <> 'terminated'`,
})
@Index('uq_services_static_ipv4', ['tenantId', 'staticIpv4'], {
  unique: true,
  where: `"status" <> 'terminated' AND "static_ipv4" IS NOT NULL`,
})
@ForeignKey('subscribers', ['tenantId', 'subscriberId'], ['tenantId', 'id'], {
  name: 'fk_services_subscriber',
})
@ForeignKey('service_plans', ['tenantId', 'planId'], ['tenantId', 'id'], { name: 'fk_services_plan' })
@Check('chk_services_status', `"status" IN (${IN(Object.values(ServiceStatus))})`)
export class Service {
  @ForeignKey(() => Tenant, { name: 'fk_services_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  subscriberId: string;

  @Column('text')
  planId: string;

  @Column('text')
  status: ServiceStatus;

  @Column('text')
  pppoeUsername: string;

  /** What the NAS sends: `<tenant slug>/<pppoe_username>` (docs/network.md). */
  @Column('text')
  radiusUsername: string;

  /** Write-only: read by the network driver alone, never by an answer, a log line or an event. */
  @Column('text')
  pppoePassword: string;

  @Column('text', { nullable: true })
  staticIpv4: string | null;

  @Column('text', { nullable: true })
  cpeMac: string | null;

  @Column('text', { nullable: true })
  installationAddress: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  activatedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  terminatedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

@Entity('provisioning_orders')
@Index('ix_provisioning_orders_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_provisioning_orders_tenant_service_created', ['tenantId', 'serviceId', 'createdAt', 'id'])
@Index('ix_provisioning_orders_tenant_subscriber_created', ['tenantId', 'subscriberId', 'createdAt', 'id'])
@Index('ix_provisioning_orders_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
@Index('ix_provisioning_orders_tenant_action_created', ['tenantId', 'action', 'createdAt', 'id'])
// One open order per service: a service's orders are applied one after the other, in the order they were taken.
@Index('uq_provisioning_orders_open_per_service', ['serviceId'], {
  unique: true,
  where: `"status" IN ('acknowledged', 'in_progress')`,
})
// The worker's claim walks only the open orders, by due time.
@Index('ix_provisioning_orders_claimable', ['nextAttemptAt'], {
  where: `"status" IN ('acknowledged', 'in_progress')`,
})
@ForeignKey('services', ['tenantId', 'serviceId'], ['tenantId', 'id'], {
  name: 'fk_provisioning_orders_service',
})
@Check('chk_provisioning_orders_status', `"status" IN (${IN(Object.values(OrderStatus))})`)
@Check('chk_provisioning_orders_action', `"action" IN (${IN(Object.values(OrderAction))})`)
@Check('chk_provisioning_orders_attempts', `"attempts" >= 0`)
export class ProvisioningOrder {
  @ForeignKey(() => Tenant, { name: 'fk_provisioning_orders_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  serviceId: string;

  @Column('text')
  subscriberId: string;

  @Column('text')
  action: OrderAction;

  @Column('text')
  status: OrderStatus;

  /** The plan the service is on once the order completes (change_plan: the new one). */
  @Column('text')
  planId: string;

  /** modify: the fields the network must see. */
  @Column('text', { array: true, nullable: true })
  changes: string[] | null;

  @Column('text', { nullable: true })
  reason: string | null;

  @Column('integer')
  attempts: number;

  @Column('text', { nullable: true })
  lastError: string | null;

  /** When the worker may take it (again): now at creation, later after a transient failure. */
  @Column({ type: 'timestamptz', precision: 3 })
  nextAttemptAt: Date;

  /** The claim: whose it is and until when; a claim that ran out is taken up again. */
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
