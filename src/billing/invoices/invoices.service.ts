import type { AuthContext } from '../../common/request-context';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { assertIfMatch } from '../../common/http/etag';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { MAX_AMOUNT } from '../../common/money';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService, type EventType } from '../../events';
import { SubscribersService } from '../../subscribers';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { LedgerService } from '../ledger/ledger.service';
import { Allocation } from '../transactions/transaction.entity';
import { TransactionsRepository } from '../transactions/transactions.repository';
import { CreateInvoiceDto, ListInvoicesQueryDto } from './dto/invoice.dto';
import { InvoiceDto } from './dto/invoice-response.dto';
import { Invoice, InvoiceLine, InvoiceStatus } from './invoice.entity';
import { InvoicesRepository } from './invoices.repository';

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
    private readonly invoices: InvoicesRepository,
    private readonly allocations: TransactionsRepository,
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
      const invoice = await this.invoices.insert(manager, {
        id: newId('inv'),
        tenantId,
        number: await this.invoices.nextNumber(manager, tenantId),
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
        voidReason: null,
        createdAt: now,
        updatedAt: now,
      });
      await this.events.append(tx, {
        tenantId,
        type: 'invoice.created',
        subjectId: invoice.id,
        object: InvoiceDto.from(invoice),
      });
      if (!dto.draft) {
        await this.open(tx, invoice);
      }
      return InvoiceDto.from(invoice);
    });
  }

  finalize(auth: AuthContext, id: string): Promise<InvoiceDto> {
    const { tenantId } = auth;
    return this.tx.run(auth, async (tx) => {
      const invoice = await this.invoices.lockForUpdate(tx.manager, tenantId, id);
      // The answer is the record as GET shows it (allocations too), so its ETag is the one GET gives.
      const allocations = await this.allocations.allocationsOfInvoice(tx.manager, tenantId, id);
      await assertIfMatch(() => InvoiceDto.from(invoice, allocations));
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
      await this.invoices.update(tx.manager, invoice, ['status', 'finalizedAt', 'paidAt', 'updatedAt']);
      await this.open(tx, invoice);
      return InvoiceDto.from(invoice, allocations);
    });
  }

  void(auth: AuthContext, id: string, reason: string | null = null): Promise<InvoiceDto> {
    const { tenantId } = auth;
    return this.tx.run(auth, async (tx) => {
      const { manager } = tx;
      const invoice = await this.invoices.lockForUpdate(manager, tenantId, id);
      const allocations = await this.allocations.allocationsOfInvoice(manager, tenantId, id);
      await assertIfMatch(() => InvoiceDto.from(invoice, allocations));
      if (invoice.status === InvoiceStatus.Void) {
        throw new ApiError('invalid_state_transition', 'The invoice is already void.');
      }
      if (invoice.amountPaid > 0 || ![InvoiceStatus.Draft, InvoiceStatus.Open].includes(invoice.status)) {
        throw new ApiError('invalid_state_transition', 'An invoice with allocations cannot be voided.');
      }
      const wasOpen = invoice.status === InvoiceStatus.Open;
      invoice.status = InvoiceStatus.Void;
      invoice.voidedAt = new Date();
      invoice.voidReason = reason;
      invoice.updatedAt = invoice.voidedAt;
      await this.invoices.update(manager, invoice, ['status', 'voidedAt', 'voidReason', 'updatedAt']);
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
      return InvoiceDto.from(invoice, allocations);
    });
  }

  async getById(tenantId: string, id: string): Promise<{ invoice: Invoice; allocations: Allocation[] }> {
    const { manager } = this.dataSource;
    const invoice = await this.invoices.getById(manager, tenantId, id);
    return { invoice, allocations: await this.allocations.allocationsOfInvoice(manager, tenantId, id) };
  }

  list(tenantId: string, query: ListInvoicesQueryDto): Promise<Page<Invoice>> {
    return this.invoices.page(this.dataSource.manager, tenantId, query);
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
}
