import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { paginate, type PageQueryDto } from '../../common/pagination';
import { lockForUpdate } from '../../database/lock-for-update';
import { TaxRate } from './tax-rate.entity';

/** The tax rate columns a write changes (the entity's property names). */
export type TaxRateColumn = keyof TaxRate;

/** A rate as validation and invoicing read it: what a line is taxed with, and whether it is still active. */
export interface ApplicableTaxRate {
  id: string;
  name: string;
  /** Four decimals, "21.0000". */
  percentage: string;
  inclusive: boolean;
  compound: boolean;
  active: boolean;
}

/** The only place the tax_rates table is read and written. */
@Injectable()
export class TaxRatesRepository {
  async insert(manager: EntityManager, rate: TaxRate): Promise<void> {
    await manager.insert(TaxRate, rate);
  }

  /** Writes `columns` of the in-memory rate to its row. */
  async update(manager: EntityManager, rate: TaxRate, columns: readonly TaxRateColumn[]): Promise<void> {
    const changes = Object.fromEntries(columns.map((column) => [column, rate[column]]));
    await manager.update(TaxRate, { tenantId: rate.tenantId, id: rate.id }, changes);
  }

  async getById(manager: EntityManager, tenantId: string, id: string): Promise<TaxRate> {
    const rate = await manager.findOneBy(TaxRate, { tenantId, id });
    if (!rate) {
      throw ApiError.notFound('tax rate', id);
    }
    return rate;
  }

  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<TaxRate> {
    return lockForUpdate(manager, TaxRate, tenantId, id, 'tax rate');
  }

  page(
    manager: EntityManager,
    tenantId: string,
    active: boolean | undefined,
    query: PageQueryDto,
  ): Promise<Page<TaxRate>> {
    const qb = manager
      .getRepository(TaxRate)
      .createQueryBuilder('rate')
      .where('rate.tenantId = :tenantId', { tenantId });
    if (active !== undefined) {
      qb.andWhere('rate.active = :active', { active });
    }
    return paginate(qb, query);
  }

  /**
   * The tenant's rates of `ids`, in the order asked; an id the tenant has no rate for is left out, an archived rate
   * is answered with `active: false` (validation refuses it; invoicing decides what a list naming it means).
   */
  async activeByIds(
    manager: EntityManager,
    tenantId: string,
    ids: readonly string[],
  ): Promise<ApplicableTaxRate[]> {
    if (ids.length === 0) {
      return [];
    }
    const rates = await manager
      .getRepository(TaxRate)
      .createQueryBuilder('rate')
      .where('rate.tenantId = :tenantId AND rate.id = ANY(:ids)', { tenantId, ids: [...new Set(ids)] })
      .getMany();
    const byId = new Map(rates.map((rate) => [rate.id, rate]));
    return ids.flatMap((id) => {
      const rate = byId.get(id);
      return rate
        ? [
            {
              id: rate.id,
              name: rate.name,
              percentage: rate.percentage,
              inclusive: rate.inclusive,
              compound: rate.compound,
              active: rate.active,
            },
          ]
        : [];
    });
  }

  /**
   * Marks the rates used by an invoice, in the invoicing transaction: from then on what they compute cannot change
   * (PATCH answers 409 tax_rate_in_use). The first use only; later ones leave the row alone. Call it before reading
   * the rates (activeByIds) in that transaction: its row lock waits for a PATCH in progress, so the invoice reads the
   * rate as that PATCH left it, and a later PATCH sees the rate in use.
   */
  async markUsed(manager: EntityManager, tenantId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) {
      return;
    }
    await manager.query(
      `UPDATE tax_rates SET first_used_at = now()
        WHERE tenant_id = $1 AND id = ANY($2::text[]) AND first_used_at IS NULL`,
      [tenantId, [...new Set(ids)]],
    );
  }

  /** Deletes every tax_rates row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM tax_rates WHERE tenant_id = $1', [tenantId]);
  }
}
