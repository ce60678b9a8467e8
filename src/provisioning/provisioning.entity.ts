import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { bigintMoney } from '../common/money';
import { Tenant } from '../gateway';
import {
  CAP_STATES,
  CapState,
  OrderAction,
  OrderStatus,
  ServiceStatus,
  type CapAction,
} from './service-status';

/** A bigint column read as a number (bytes: far below 2^53). */
const bigintNumber = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/** A cap and its action come together. */
export const PLAN_DATA_CAP_CHECK = `("data_cap_bytes" IS NULL AND "cap_action" IS NULL) OR ("data_cap_bytes" > 0 AND "cap_action" IN ('throttle', 'block'))`;
/** The throttle rates are the throttle action's, both of them. */
export const PLAN_THROTTLE_CHECK = `("throttle_download_kbps" IS NULL AND "throttle_upload_kbps" IS NULL AND "cap_action" IS DISTINCT FROM 'throttle') OR ("throttle_download_kbps" > 0 AND "throttle_upload_kbps" > 0 AND "cap_action" = 'throttle')`;
/** Burst: all five or none; a burst above the rate, a threshold at most the rate (MikroTik's queue semantics). */
export const PLAN_BURST_CHECK = `("burst_download_kbps" IS NULL AND "burst_upload_kbps" IS NULL AND "burst_threshold_download_kbps" IS NULL AND "burst_threshold_upload_kbps" IS NULL AND "burst_time_s" IS NULL) OR ("burst_download_kbps" > "download_kbps" AND "burst_upload_kbps" > "upload_kbps" AND "burst_threshold_download_kbps" BETWEEN 1 AND "download_kbps" AND "burst_threshold_upload_kbps" BETWEEN 1 AND "upload_kbps" AND "burst_time_s" > 0)`;

const IN = (values: readonly string[]) => values.map((value) => `'${value}'`).join(', ');

@Entity('service_plans')
@Index('ix_service_plans_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('uq_service_plans_name', ['tenantId', 'name'], { unique: true })
// The key the services' composite foreign key points at (a service's plan is its tenant's).
@Index('uq_service_plans_tenant_id', ['tenantId', 'id'], { unique: true })
@Check('chk_service_plans_speeds', `"download_kbps" > 0 AND "upload_kbps" > 0`)
@Check('chk_service_plans_price', `"price" >= 0`)
@Check('chk_service_plans_billing_period', `"billing_period" IN ('monthly', 'quarterly', 'yearly')`)
@Check('chk_service_plans_data_cap', PLAN_DATA_CAP_CHECK)
@Check('chk_service_plans_throttle', PLAN_THROTTLE_CHECK)
@Check('chk_service_plans_burst', PLAN_BURST_CHECK)
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

  /**
   * The tax rates (billing's `tax_rates`) its services' lines are taxed at; null: the billing profile's defaults;
   * empty: untaxed.
   */
  @Column('text', { array: true, nullable: true })
  taxRateIds: string[] | null;

  /** Bytes (down + up) a service may use per billing period before `capAction`; null: no cap (docs/network.md). */
  @Column('bigint', { nullable: true, transformer: bigintNumber })
  dataCapBytes: number | null;

  /** What reaching the cap does: `throttle` to the throttle rates, or `block` (reject and disconnect). */
  @Column('text', { nullable: true })
  capAction: CapAction | null;

  @Column('integer', { nullable: true })
  throttleDownloadKbps: number | null;

  @Column('integer', { nullable: true })
  throttleUploadKbps: number | null;

  /** MikroTik burst: the rates a session may reach while its average stays under the thresholds (all or none). */
  @Column('integer', { nullable: true })
  burstDownloadKbps: number | null;

  @Column('integer', { nullable: true })
  burstUploadKbps: number | null;

  @Column('integer', { nullable: true })
  burstThresholdDownloadKbps: number | null;

  @Column('integer', { nullable: true })
  burstThresholdUploadKbps: number | null;

  @Column('integer', { nullable: true })
  burstTimeS: number | null;
}

@Entity('services')
@Index('ix_services_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_services_tenant_subscriber_created', ['tenantId', 'subscriberId', 'createdAt', 'id'])
@Index('ix_services_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
@Index('ix_services_tenant_plan_created', ['tenantId', 'planId', 'createdAt', 'id'])
@Index('ix_services_tenant_username', ['tenantId', 'pppoeUsername'])
// GET /subscribers?q= by a PPPoE username (trigram GIN over lower(pppoe_username)): in its migration only.
@Index('ix_services_pppoe_username_trgm', { synchronize: false })
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
// An imported service's id in the system it came from: an import matches its rows by it (docs/imports.md).
@Index('uq_services_external_id', ['tenantId', 'externalId'], {
  unique: true,
  where: `"external_id" IS NOT NULL`,
})
@ForeignKey('subscribers', ['tenantId', 'subscriberId'], ['tenantId', 'id'], {
  name: 'fk_services_subscriber',
})
@ForeignKey('service_plans', ['tenantId', 'planId'], ['tenantId', 'id'], { name: 'fk_services_plan' })
@Check('chk_services_status', `"status" IN (${IN(Object.values(ServiceStatus))})`)
@Check('chk_services_cap_state', `"cap_state" IN (${IN(CAP_STATES)})`)
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

  /** Its id in the system it was imported from (a services import); null for a service created by the API. */
  @Column('text', { nullable: true })
  externalId: string | null;

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

  /** The IPv4 pool its static address came from, or the dynamic pool the NAS gives it one from (Framed-Pool). */
  @Column('text', { nullable: true })
  ipPoolId: string | null;

  /** The IPv6 pool its delegated prefix came from, or the dynamic one the NAS delegates from. */
  @Column('text', { nullable: true })
  ipv6PoolId: string | null;

  /** Its delegated IPv6 prefix (`2001:db8:100:100::/56`), from a static IPv6 pool: Delegated-IPv6-Prefix. */
  @Column('text', { nullable: true })
  delegatedIpv6Prefix: string | null;

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

  /**
   * What the network applies for the plan's data cap (docs/network.md, "Data caps"): `normal`, `throttled` (the plan's
   * throttle rates) or `blocked`; moved only by the cap_* orders the data cap worker opens.
   */
  @Column('text', { default: CapState.Normal })
  capState: CapState;
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

  /** suspend and terminate: what the NAS of the service's open sessions answered the Disconnect-Request. */
  @Column('text', { nullable: true })
  disconnect: SessionOutcome | null;

  /** change_plan: what the NAS of the service's open sessions answered the CoA-Request with the new rate. */
  @Column('text', { nullable: true })
  coa: SessionOutcome | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/**
 * What reaching a service's open sessions came to (RFC 5176): every NAS acknowledged (`acked`), one refused (`nak`),
 * one never answered after the retries (`timeout`), a session's NAS is not in the registry (`unknown_nas`), or the
 * service had no open session (`no_session`). The worst outcome of the sessions is the order's.
 */
export enum SessionOutcome {
  Acked = 'acked',
  Nak = 'nak',
  Timeout = 'timeout',
  UnknownNas = 'unknown_nas',
  NoSession = 'no_session',
}

/** The kinds of NAS the registry knows (FreeRADIUS's nas.type, used by its checkrad). */
export const NAS_TYPES = ['mikrotik', 'cisco', 'juniper', 'huawei', 'other'] as const;
export type NasType = (typeof NAS_TYPES)[number];

/**
 * A router that asks RADIUS (a NAS) and takes Disconnect/CoA requests, registered by a tenant. Its row in FreeRADIUS's
 * `nas` table (by `ip`, so one tenant per address) makes FreeRADIUS accept its requests; its secret signs the
 * Disconnect and CoA requests sent to it. The secret is write-only.
 */
@Entity('nas_devices')
@Index('ix_nas_devices_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('uq_nas_devices_ip', ['ip'], { unique: true })
@Check('chk_nas_devices_type', `"type" IN (${IN(NAS_TYPES)})`)
@Check('chk_nas_devices_coa_port', `"coa_port" BETWEEN 1 AND 65535`)
export class NasDevice {
  @ForeignKey(() => Tenant, { name: 'fk_nas_devices_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  name: string;

  /** Its address as FreeRADIUS sees the requests come (and where Disconnect/CoA requests go), normalised. */
  @Column('text')
  ip: string;

  @Column('text')
  secret: string;

  @Column('text')
  type: NasType;

  @Column('integer')
  coaPort: number;

  @Column('text', { nullable: true })
  description: string | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
