import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { paginate } from '../../common/pagination';
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

/** The only place the invoices and invoice_counters tables are read and written. */
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
      qb.andWhere('invoice.status = :status', { status: query.status });
    }
    if (query.overdue) {
      const overdue = `(invoice.status IN (:...payable) AND invoice.dueDate < (now() AT TIME ZONE 'UTC')::date)`;
      qb.andWhere(query.overdue === 'true' ? overdue : `NOT ${overdue}`, { payable: PAYABLE_STATUSES });
    }
    return paginate(qb, query);
  }

  /** The tenant's next invoice number, under the counter row's lock until commit, so numbers never repeat or skip. */
  async nextNumber(manager: EntityManager, tenantId: string): Promise<number> {
    const rows: { last_number: number }[] = await manager.query(
      `INSERT INTO invoice_counters (tenant_id, last_number) VALUES ($1, 1)
       ON CONFLICT (tenant_id) DO UPDATE SET last_number = invoice_counters.last_number + 1
       RETURNING last_number`,
      [tenantId],
    );
    return rows[0].last_number;
  }

  /** Reserves `count` invoice numbers of the tenant at once (one counter update); answers the first. */
  async reserveNumbers(manager: EntityManager, tenantId: string, count: number): Promise<number> {
    const [row]: { last_number: number }[] = await manager.query(
      `INSERT INTO invoice_counters (tenant_id, last_number) VALUES ($1, $2)
       ON CONFLICT (tenant_id) DO UPDATE SET last_number = invoice_counters.last_number + EXCLUDED.last_number
       RETURNING last_number`,
      [tenantId, count],
    );
    return row.last_number - count + 1;
  }

  /** A bill run batch's invoices, one statement. */
  async insertMany(manager: EntityManager, invoices: InvoiceRow[]): Promise<void> {
    if (invoices.length > 0) {
      await manager.query(INSERT_INVOICES.sql, INSERT_INVOICES.params(invoices as Invoice[]));
    }
  }
}
