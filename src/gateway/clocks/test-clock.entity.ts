import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../tenants/tenant.entity';

export enum TestClockStatus {
  Ready = 'ready',
  Advancing = 'advancing',
  InternalFailure = 'internal_failure',
}

export const TEST_CLOCK_STATUSES = Object.values(TestClockStatus);

/**
 * A test clock (docs/test-clocks.md): the time of one test tenant, made with it and bound to it for life (a live
 * tenant never has one), owned by the tenant that created it. `frozen_time` moves only forward, day by day while an
 * advance runs (its progress: a resumed advance goes on from there to `advance_to`).
 */
@Entity('test_clocks')
@Check('chk_test_clocks_status', `"status" IN ('ready', 'advancing', 'internal_failure')`)
@Index('ix_test_clocks_owner', ['ownerTenantId', 'createdAt', 'id'])
@Index('ix_test_clocks_advancing', ['leaseUntil'], { where: `"status" = 'advancing'` })
export class TestClock {
  @PrimaryColumn('text')
  id: string;

  /** The test tenant whose time this is. */
  @ForeignKey(() => Tenant, { name: 'fk_test_clocks_tenant' })
  @Index('uq_test_clocks_tenant', { unique: true })
  @Column('text')
  tenantId: string;

  /** The tenant that made the clock: the only one that sees, advances and deletes it. */
  @ForeignKey(() => Tenant, { name: 'fk_test_clocks_owner' })
  @Column('text')
  ownerTenantId: string;

  @Column('text')
  name: string;

  @Column({ type: 'timestamptz', precision: 3 })
  frozenTime: Date;

  @Column('text')
  status: TestClockStatus;

  /** Where the advance under way goes; null when none is. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  advanceTo: Date | null;

  @Column('uuid', { nullable: true })
  leaseId: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
