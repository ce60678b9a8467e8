import type { AuthContext } from '../../common/request-context';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { MAX_AMOUNT } from '../../common/money';
import { paginate } from '../../common/pagination';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import type { EventType } from '../../events/event-types';
import { EventsService } from '../../events/events.service';
import { SubscribersService } from '../../subscribers/subscribers.service';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { LedgerService } from '../ledger/ledger.service';
import { Allocation } from '../transactions/transaction.entity';
import { CreateInvoiceDto, ListInvoicesQueryDto } from './dto/invoice.dto';
import { InvoiceDto } from './dto/invoice-response.dto';
import { Invoice, InvoiceLine, InvoiceStatus, PAYABLE_STATUSES } from './invoice.entity';
import { lockForUpdate } from '../../database/lock-for-update';

/** An issued invoice owes its total; one of total 0 owes nothing and is paid from the start. */
function issuedStatus(total: number): InvoiceStatus {
  return total === 0 ? InvoiceStatus.Paid : InvoiceStatus.Open;
}

@Injectable()
export class InvoicesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tx: TransactionRunner,
    private readonly events: EventsService,
    private readonly subscribers: SubscribersService,
    private readonly ledger: LedgerService,
  ) {}

  create(auth: AuthContext, dto: CreateInvoiceDto): Promise<InvoiceDto> {
    const { tenantId } = auth;
    const lines: InvoiceLine[] = dto.lines.map((line) => ({
      ...line,
      amount: line.quantity * line.unit_amount,
    }));
    const total = lines.reduce((sum, line) => sum + line.amount, 0);
    if (
      !lines.every((line) => Number.isSafeInteger(line.amount)) ||
      !Number.isSafeInteger(total) ||
      total > MAX_AMOUNT
    ) {
      throw new ApiError(
        'validation_failed',
        'The invoice total exceeds the largest amount this API keeps.',
        'lines',
      );
    }
    return this.tx.run(auth, async (tx) => {
      const { manager } = tx;
      await this.subscribers.assertExists(manager, tenantId, dto.subscriber_id, 'subscriber_id');
      const now = new Date();
      const status = dto.draft ? InvoiceStatus.Draft : issuedStatus(total);
      const invoice = manager.create(Invoice, {
        id: newId('inv'),
        tenantId,
        number: await this.nextNumber(manager, tenantId),
        subscriberId: dto.subscriber_id,
        currency: dto.currency,
        status,
        lines,
        total,
        amountPaid: 0,
        dueDate: dto.due_date,
        finalizedAt: dto.draft ? null : now,
        paidAt: status === InvoiceStatus.Paid ? now : null,
        voidedAt: null,
        createdAt: now,
        updatedAt: now,
      });
      await manager.insert(Invoice, invoice);
      await this.events.append(tx, {
        tenantId,
        type: 'invoice.created',
        subjectId: invoice.id,
        object: InvoiceDto.from(invoice),
      });
      if (!dto.draft) await this.open(tx, invoice);
      return InvoiceDto.from(invoice);
    });
  }

  finalize(auth: AuthContext, id: string): Promise<InvoiceDto> {
    const { tenantId } = auth;
    return this.tx.run(auth, async (tx) => {
      const { manager } = tx;
      const invoice = await lockForUpdate(manager, Invoice, tenantId, id, 'invoice');
      if (invoice.status !== InvoiceStatus.Draft) {
        throw new ApiError(
          'invalid_state_transition',
          `Only a draft invoice can be finalized; this one is ${invoice.status}.`,
        );
      }
      invoice.status = issuedStatus(invoice.total);
      invoice.finalizedAt = new Date();
      invoice.paidAt = invoice.status === InvoiceStatus.Paid ? invoice.finalizedAt : null;
      invoice.updatedAt = invoice.finalizedAt;
      await manager.save(Invoice, invoice);
      await this.open(tx, invoice);
      return InvoiceDto.from(invoice);
    });
  }

  void(auth: AuthContext, id: string): Promise<InvoiceDto> {
    const { tenantId } = auth;
    return this.tx.run(auth, async (tx) => {
      const { manager } = tx;
      const invoice = await lockForUpdate(manager, Invoice, tenantId, id, 'invoice');
      if (invoice.status === InvoiceStatus.Void) {
        throw new ApiError('invalid_state_transition', 'The invoice is already void.');
      }
      if (invoice.amountPaid > 0 || ![InvoiceStatus.Draft, InvoiceStatus.Open].includes(invoice.status)) {
        throw new ApiError('invalid_state_transition', 'An invoice with allocations cannot be voided.');
      }
      const wasOpen = invoice.status === InvoiceStatus.Open;
      invoice.status = InvoiceStatus.Void;
      invoice.voidedAt = new Date();
      invoice.updatedAt = invoice.voidedAt;
      await manager.save(Invoice, invoice);
      if (wasOpen) {
        await this.ledger.post(manager, {
          tenantId,
          subscriberId: invoice.subscriberId,
          currency: invoice.currency,
          type: LedgerEntryType.InvoiceVoided,
          amount: -invoice.total,
          sourceId: invoice.id,
        });
      }
      await this.events.append(tx, {
        tenantId,
        type: 'invoice.voided',
        subjectId: invoice.id,
        object: InvoiceDto.from(invoice),
      });
      return InvoiceDto.from(invoice);
    });
  }

  async getById(tenantId: string, id: string): Promise<{ invoice: Invoice; allocations: Allocation[] }> {
    const invoice = await this.dataSource.getRepository(Invoice).findOneBy({ tenantId, id });
    if (!invoice) throw ApiError.notFound('invoice', id);
    const allocations = await this.dataSource
      .getRepository(Allocation)
      .find({ where: { tenantId, invoiceId: id }, order: { createdAt: 'ASC', id: 'ASC' } });
    return { invoice, allocations };
  }

  list(tenantId: string, query: ListInvoicesQueryDto): Promise<Page<Invoice>> {
    const qb = this.dataSource
      .getRepository(Invoice)
      .createQueryBuilder('invoice')
      .where('invoice.tenantId = :tenantId', { tenantId });
    if (query.subscriber_id)
      qb.andWhere('invoice.subscriberId = :subscriberId', { subscriberId: query.subscriber_id });
    if (query.status) qb.andWhere('invoice.status = :status', { status: query.status });
    if (query.overdue) {
      const overdue = `(invoice.status IN (:...payable) AND invoice.dueDate < CURRENT_DATE)`;
      qb.andWhere(query.overdue === 'true' ? overdue : `NOT ${overdue}`, { payable: PAYABLE_STATUSES });
    }
    return paginate(qb, query);
  }

  /** The invoice now counts as owed: it enters the ledger. */
  private async open(tx: Tx, invoice: Invoice): Promise<void> {
    const { manager } = tx;
    if (invoice.total > 0) {
      await this.ledger.post(manager, {
        tenantId: invoice.tenantId,
        subscriberId: invoice.subscriberId,
        currency: invoice.currency,
        type: LedgerEntryType.Invoice,
        amount: invoice.total,
        sourceId: invoice.id,
      });
    }
    const types: EventType[] =
      invoice.status === InvoiceStatus.Paid ? ['invoice.finalized', 'invoice.paid'] : ['invoice.finalized'];
    for (const type of types) {
      await this.events.append(tx, {
        tenantId: invoice.tenantId,
        type,
        subjectId: invoice.id,
        object: InvoiceDto.from(invoice),
      });
    }
  }

  private async nextNumber(manager: EntityManager, tenantId: string): Promise<number> {
    const rows: { last_number: number }[] = await manager.query(
      `INSERT INTO invoice_counters (tenant_id, last_number) VALUES ($1, 1)
       ON CONFLICT (tenant_id) DO UPDATE SET last_number = invoice_counters.last_number + 1
       RETURNING last_number`,
      [tenantId],
    );
    return rows[0].last_number;
  }
}
