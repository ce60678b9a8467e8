import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../../gateway';

export const POOL_KINDS = ['static', 'dynamic'] as const;
export type PoolKind = (typeof POOL_KINDS)[number];

/**
 * A tenant's block of addresses (docs/network.md, "IP pools"). A `static` pool is the API's to hand out: each service
 * given an address (IPv4) or a delegated prefix (IPv6) from it holds an ip_allocations row. A `dynamic` pool is the
 * NAS's: a service linked to it is answered `Framed-Pool` (IPv4) or `Delegated-IPv6-Prefix-Pool` (IPv6) with its
 * name, and the NAS picks the address.
 */
@Entity('ip_pools')
@Index('ix_ip_pools_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('uq_ip_pools_name', ['tenantId', 'name'], { unique: true })
// The key ip_allocations' composite foreign key points at (an allocation's pool is its tenant's).
@Index('uq_ip_pools_tenant_id', ['tenantId', 'id'], { unique: true })
@Check('chk_ip_pools_kind', `"kind" IN ('static', 'dynamic')`)
@Check('chk_ip_pools_family', `"family" IN (4, 6)`)
@Check('chk_ip_pools_cooldown', `"cooldown_s" >= 0`)
export class IpPool {
  @ForeignKey(() => Tenant, { name: 'fk_ip_pools_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  name: string;

  @Column('integer')
  family: 4 | 6;

  /** The network, canonical (`198.51.100.0/24`, `2001:db8:100::/40`). */
  @Column('text')
  cidr: string;

  @Column('text', { nullable: true })
  gateway: string | null;

  /** Ranges never handed out, canonical: `a`, `a-b` or `net/len`. */
  @Column('text', { array: true })
  excluded: string[];

  @Column('text')
  kind: PoolKind;

  /** IPv6: the length of each delegated prefix (48–64); IPv4: null. */
  @Column('integer', { nullable: true })
  delegatedPrefixLength: number | null;

  /** The NAS that serves this pool (informational; a dynamic pool's name must match the NAS's own pool). */
  @Column('text', { nullable: true })
  nasId: string | null;

  /** Seconds a released address waits before it is handed out again. */
  @Column('integer')
  cooldownS: number;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/**
 * An address (IPv4) or delegated prefix (IPv6) of a static pool held by a service, or cooling after its release until
 * `available_at`. The primary key (pool, address) is what keeps two services from ever holding one address: a second
 * allocation of it finds the row and takes it only once its cooldown has passed.
 */
@Entity('ip_allocations')
@Index('ix_ip_allocations_tenant_service', ['tenantId', 'serviceId'])
@ForeignKey('ip_pools', ['tenantId', 'poolId'], ['tenantId', 'id'], {
  name: 'fk_ip_allocations_pool',
  onDelete: 'CASCADE',
})
export class IpAllocation {
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  poolId: string;

  /** Canonical: `198.51.100.7` or `2001:db8:100:100::/56`. */
  @PrimaryColumn('text')
  address: string;

  @Column('text')
  serviceId: string;

  @Column({ type: 'timestamptz', precision: 3 })
  allocatedAt: Date;

  /** When its service let it go (terminated, or given another); null while held. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  releasedAt: Date | null;

  /** When it may be handed out again: releasedAt plus the pool's cooldown. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  availableAt: Date | null;
}
