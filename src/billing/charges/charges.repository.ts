import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../../common/pagination';
import { recordsetInsert } from '../../database/entity-columns';
import { Charge, ChargeStatus } from './charge.entity';

const INSERT_CHARGES = recordsetInsert(Charge, 'charges');

/** Which charges an invoice or a bill run's credit carried. */
export interface ChargeBilling {
  chargeIds: string[];
  invoiceId: string | null;
  creditId: string | null;
}

/** The only place the charges table is read and written. */
@Injectable()
export class ChargesRepository {
  /** Inserts the charges; a source already charged (a retried fee or debit) is left as it is. */
  async insertMany(manager: EntityManager, charges: Charge[]): Promise<void> {
    if (charges.length > 0) {
      await manager.query(INSERT_CHARGES.sql, INSERT_CHARGES.params(charges));
    }
  }

  /** Inserts one charge; false when its source (a debit, an invoice's late fee…) was charged already. */
  async insertOnce(manager: EntityManager, charge: Charge): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `${INSERT_CHARGES.sql} ON CONFLICT DO NOTHING RETURNING 1`,
      INSERT_CHARGES.params([charge]),
    );
    return rows.length === 1;
  }

  /** The pending charges of these subscribers in `currency` (null: any), oldest first. */
  pendingOf(
    manager: EntityManager,
    tenantId: string,
    subscriberIds: string[],
    currency: string | null = null,
  ): Promise<Charge[]> {
    if (subscriberIds.length === 0) {
      return Promise.resolve([]);
    }
    return manager.find(Charge, {
      where: {
        tenantId,
        subscriberId: In(subscriberIds),
        status: ChargeStatus.Pending,
        ...(currency ? { currency } : {}),
      },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  page(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    statuses: ChargeStatus[],
    query: PageQueryDto,
  ): Promise<Page<Charge>> {
    const qb = manager
      .getRepository(Charge)
      .createQueryBuilder('charge')
      .where(
        'charge.tenantId = :tenantId AND charge.subscriberId = :subscriberId AND charge.status IN (:...statuses)',
        {
          tenantId,
          subscriberId,
          statuses,
        },
      );
    return paginate(qb, query);
  }

  /** The subscriber's charge, row-locked; null when there is none. */
  findForUpdate(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    id: string,
  ): Promise<Charge | null> {
    return manager.findOne(Charge, {
      where: { tenantId, subscriberId, id },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async delete(manager: EntityManager, tenantId: string, id: string): Promise<void> {
    await manager.delete(Charge, { tenantId, id });
  }

  /** Marks charges invoiced by the invoice (or credit) that carried them, one statement. */
  async markInvoiced(
    manager: EntityManager,
    tenantId: string,
    billed: ChargeBilling[],
    at: Date,
  ): Promise<void> {
    const rows = billed.flatMap((each) =>
      each.chargeIds.map((id) => ({ id, invoice_id: each.invoiceId, credit_id: each.creditId })),
    );
    if (rows.length === 0) {
      return;
    }
    await manager.query(
      `UPDATE charges c SET status = 'invoiced', invoice_id = x.invoice_id, credit_id = x.credit_id, invoiced_at = $3
         FROM jsonb_to_recordset($2::jsonb) AS x(id text, invoice_id text, credit_id text)
        WHERE c.tenant_id = $1 AND c.id = x.id AND c.status = 'pending'`,
      [tenantId, JSON.stringify(rows), at],
    );
  }

  /** Deletes every charges row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM charges WHERE tenant_id = $1', [tenantId]);
  }
}
