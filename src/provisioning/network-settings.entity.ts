import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../gateway';

/**
 * A tenant's network settings (issue 33): what a suspended login gets (`reject`, or `walled_garden`: accepted into a
 * restricted profile), and the walled garden's address list, Filter-Id and payment page. One row per tenant, made by
 * its first PATCH /network-settings; without one the defaults apply (NetworkSettingsService). `version` counts the
 * changes, `applied_version` the last one the network received (NetworkSettingsWorker): a row with
 * `version > applied_version` is the worker's to carry out, under a lease (`lease_until`, by the database's clock).
 */
@Entity('network_settings')
@Check('chk_network_settings_mode', `"suspension_mode" IN ('reject', 'walled_garden')`)
@Check(
  'chk_network_settings_walled_garden',
  `"suspension_mode" <> 'walled_garden' OR "payment_page_url" IS NOT NULL`,
)
@Index('ix_network_settings_pending', ['tenantId'], { where: `"version" > "applied_version"` })
export class NetworkSettings {
  @ForeignKey(() => Tenant, { name: 'fk_network_settings_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  /** reject or walled_garden (docs/network.md). */
  @Column('text')
  suspensionMode: string;

  /** https: where the NAS's walled garden sends a suspended subscriber's web traffic. */
  @Column('text', { nullable: true })
  paymentPageUrl: string | null;

  @Column('text')
  walledGardenAddressList: string;

  @Column('text')
  walledGardenFilterId: string;

  @Column('integer')
  version: number;

  @Column('integer')
  appliedVersion: number;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  leaseUntil: Date | null;

  /** When the network last received these settings (null: never needed to). */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  appliedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
