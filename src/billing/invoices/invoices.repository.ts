import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { paginate } from '../../common/pagination';
import { SqlParams } from '../../database/sql-params';
import { recordsetInsert } from '../../database/entity-columns';
import { lockForUpdate } from '../../database/lock-for-update';
import { ListInvoicesQueryDto } from './dto/invoice.dto';
import { Invoice, PAYABLE_STATUSES } from './invoice.entity';

/** The write-off columns, null until POST /invoices/{id}/write-off sets them: a new invoice may leave them out. */
type WriteOffColumns = 'writtenOffAt' | 'writeOffReason' | 'amountWrittenOff';

/** An invoice's stored fields: the entity without what it computes (a new one need not name the write-off's). */
export type InvoiceRow = Omit<Invoice, 'amountDue' | WriteOffColumns> &
  Partial<Pick<Invoice, WriteOffColumns>>;

/** The invoice columns a write changes (the entity's property names). */
export type InvoiceColumn = keyof InvoiceRow;

const INSERT_INVOICES = recordsetInsert(Invoice, 'invoices');

/** The only place the invoices table is read and written. */
@Injectable()
export class InvoicesRepository {
  async insert(manager: EntityManager, row: InvoiceRow): Promise<Invoice> {
    const invoice = manager.create(Invoice, {
      writtenOffAt: null,
      writeOffReason: null,
      amountWrittenOff: null,
      ...row,
    });
    await manager.insert(Invoice, invoice);
    return invoice;
  }

  /** Writes `columns` of the in-memory invoice to its row. */
  async update(manager: EntityManager, invoice: Invoice, columns: readonly InvoiceColumn[]): Promise<void> {
    const changes = Object.fromEntries(columns.map((column) => [column, invoice[column]]));
    await manager.update(Invoice, { id: invoice.id }, changes);
  }

  async getById(manager: EntityManager, tenantId: string, id: string): Promise<Invoice> {
    const invoice = await manager.findOneBy(Invoice, { tenantId, id });
    if (!invoice) {
      throw ApiError.notFound('invoice', id);
    }
    return invoice;
  }

  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<Invoice> {
    return lockForUpdate(manager, Invoice, tenantId, id, 'invoice');
  }

  /** Locks the tenant's invoices with these ids in id order, the fixed order every allocation takes its locks in. */
  async lockManyInIdOrder(
    manager: EntityManager,
    tenantId: string,
    ids: string[],
  ): Promise<Map<string, Invoice>> {
    const unique = [...new Set(ids)].sort();
    if (unique.length === 0) {
      return new Map();
    }
    const invoices = await manager
      .createQueryBuilder(Invoice, 'invoice')
      .where('invoice.tenantId = :tenantId AND invoice.id IN (:...ids)', { tenantId, ids: unique })
      .orderBy('invoice.id', 'ASC')
      .setLock('pessimistic_write')
      .getMany();
    return new Map(invoices.map((invoice) => [invoice.id, invoice]));
  }

  /** Ids of the subscriber's invoices in this currency that take allocations (read unlocked; lock them next). */
  async payableIds(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    currency: string,
  ): Promise<string[]> {
    const rows = await manager.find(Invoice, {
      select: { id: true },
      where: { tenantId, subscriberId, currency, status: In(PAYABLE_STATUSES) },
    });
    return rows.map((row) => row.id);
  }

  page(manager: EntityManager, tenantId: string, query: ListInvoicesQueryDto): Promise<Page<Invoice>> {
    const qb = manager
      .getRepository(Invoice)
      .createQueryBuilder('invoice')
      .where('invoice.tenantId = :tenantId', { tenantId });
    if (query.subscriber_id) {
      qb.andWhere('invoice.subscriberId = :subscriberId', { subscriberId: query.subscriber_id });
    }
    if (query.status) {
      qb.andWhere('invoice.status IN (:...statuses)', { statuses: query.status });
    }
    if (query.overdue) {
      const overdue = `(invoice.status IN (:...payable) AND invoice.dueDate < (now() AT TIME ZONE 'UTC')::date)`;
      qb.andWhere(query.overdue === 'true' ? overdue : `NOT ${overdue}`, { payable: PAYABLE_STATUSES });
    }
    return paginate(qb, query);
  }

  /**
   * Writes the in-memory payment state (amount paid, status, paid at, updated at) of these invoices of the tenant, in
   * one statement: the allocations of a bill run's batch (auto-apply).
   */
  /**
   * Writes the in-memory payment state (amount paid, status, paid_at) of these invoices of the tenant, as a CTE of a
   * larger statement (AllocatePaymentUseCase.applyPlans), its parameters added to `params`; null when there is none.
   */
  paymentsCte(params: SqlParams, tenantId: string, invoices: readonly Invoice[]): string | null {
    if (invoices.length === 0) {
      return null;
    }
    return `invoices_paid AS (UPDATE invoices i SET amount_paid = v.amount_paid, status = v.status,
              paid_at = v.paid_at, updated_at = v.updated_at
         FROM unnest(${params.add(
           invoices.map((invoice) => invoice.id),
           'text[]',
         )}, ${params.add(
           invoices.map((invoice) => String(invoice.amountPaid)),
           'bigint[]',
         )}, ${params.add(
           invoices.map((invoice) => invoice.status),
           'text[]',
         )}, ${params.add(
           invoices.map((invoice) => invoice.paidAt),
           'timestamptz[]',
         )}, ${params.add(
           invoices.map((invoice) => invoice.updatedAt),
           'timestamptz[]',
         )}) AS v(id, amount_paid, status, paid_at, updated_at)
        WHERE i.tenant_id = ${params.add(tenantId)} AND i.id = v.id RETURNING 1)`;
  }

  /** A bill run batch's invoices, one statement. */
  async insertMany(manager: EntityManager, invoices: InvoiceRow[]): Promise<void> {
    if (invoices.length > 0) {
      await manager.query(INSERT_INVOICES.sql, INSERT_INVOICES.params(invoices as Invoice[]));
    }
  }

  /** Deletes every invoices row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM invoices WHERE tenant_id = $1', [tenantId]);
  }
}
