import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ServicePlansRepository } from '../../provisioning';
import { subscribersTable } from '../../subscribers';
import { subscriberProfileOn } from '../profiles/billing-profiles.repository';
import type { SubscriberTaxes } from './invoice-taxes';
import type { TaxRateInfo } from './tax-computation';

/**
 * What the tax computation reads (InvoiceTaxes): subscribers' exemption and their profile's default rates, plans' and
 * charges' own lists, and the rates; set-wise, one statement each for a bill run's batch. Subscribers are joined
 * through subscribers' subscribersTable, plans read through provisioning's ServicePlansRepository.
 */
@Injectable()
export class TaxContextRepository {
  constructor(private readonly servicePlans: ServicePlansRepository) {}

  /** Each subscriber's exemption and its profile's default rates (no profile: no defaults). */
  async subscribers(
    manager: EntityManager,
    tenantId: string,
    subscriberIds: readonly string[],
  ): Promise<Map<string, SubscriberTaxes>> {
    if (subscriberIds.length === 0) {
      return new Map();
    }
    const rows: { id: string; tax_exempt: boolean; defaults: string[] | null }[] = await manager.query(
      `SELECT s.id, s.tax_exempt, p.tax_rate_ids AS defaults
         FROM ${subscribersTable('s')} LEFT JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
        WHERE s.tenant_id = $1 AND s.id = ANY($2::text[])`,
      [tenantId, subscriberIds],
    );
    return new Map(rows.map((row) => [row.id, { exempt: row.tax_exempt, defaults: row.defaults ?? [] }]));
  }

  /** The plans' own rate lists (null: the profile's defaults apply): provisioning's, read through its repository. */
  plans(
    manager: EntityManager,
    tenantId: string,
    planIds: readonly string[],
  ): Promise<Map<string, string[] | null>> {
    return this.servicePlans.taxRateIds(manager, tenantId, planIds);
  }

  /** The charges' own rate lists (null: the profile's defaults apply). */
  async charges(
    manager: EntityManager,
    tenantId: string,
    chargeIds: readonly string[],
  ): Promise<Map<string, string[] | null>> {
    if (chargeIds.length === 0) {
      return new Map();
    }
    const rows: { id: string; tax_rate_ids: string[] | null }[] = await manager.query(
      `SELECT id, tax_rate_ids FROM charges WHERE tenant_id = $1 AND id = ANY($2::text[])`,
      [tenantId, chargeIds],
    );
    return new Map(rows.map((row) => [row.id, row.tax_rate_ids]));
  }

  /**
   * The rates with these ids, as lines apply them, share-locked until the issuing transaction ends: a PATCH of one
   * (which locks it for update) waits, then finds it used (tax_rate_in_use), so an invoice never carries a percentage
   * its rate no longer has. A rate archived after it was named in a list still applies until
   * the list changes: an ISP stops a rate by naming another, never by leaving a line silently untaxed. `lock: false`
   * reads them without the lock: a bill run's batch computing ahead of its turn, which reads them again locked before
   * it writes and computes again if one changed (BatchBiller).
   */
  async rates(
    manager: EntityManager,
    tenantId: string,
    ids: readonly string[],
    lock = true,
  ): Promise<Map<string, TaxRateInfo>> {
    if (ids.length === 0) {
      return new Map();
    }
    const rows: { id: string; name: string; percentage: string; inclusive: boolean; compound: boolean }[] =
      await manager.query(
        `SELECT id, name, percentage::text AS percentage, inclusive, compound
           FROM tax_rates WHERE tenant_id = $1 AND id = ANY($2::text[])${lock ? ' FOR SHARE' : ''}`,
        [tenantId, ids],
      );
    return new Map(rows.map((row) => [row.id, row]));
  }
}
