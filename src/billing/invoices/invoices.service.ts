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
import { Clock } from '../../common/clock';
import { addDays } from '../../common/dates';
import { type Subscriber, SubscribersService } from '../../subscribers';
import type { Charge } from '../charges/charge.entity';
import { chargeLine, chargesFitting } from '../charges/charge-line';
import { ChargesRepository } from '../charges/charges.repository';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { LedgerService } from '../ledger/ledger.service';
import { BillingProfilesService } from '../profiles/billing-profiles.service';
import { AutoApply } from '../transactions/auto-apply';
import { Allocation } from '../transactions/transaction.entity';
import { TransactionsRepository } from '../transactions/transactions.repository';
import { CreateInvoiceDto, ListInvoicesQueryDto } from './dto/invoice.dto';
import { InvoiceDto } from './dto/invoice-response.dto';
import { Invoice, InvoiceLine, InvoiceStatus, PAYABLE_STATUSES } from './invoice.entity';
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
    private readonly profiles: BillingProfilesService,
    private readonly autoApply: AutoApply,
    private readonly charges: ChargesRepository,
    private readonly clock: Clock,
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
      const subscriber = await this.subscribers.assertExists(
        manager,
        tenantId,
        dto.subscriber_id,
        'subscriber_id',
      );
      // One currency per subscriber: its billing profile's (or the tenant default's), as the bill run bills in.
      const profile = await this.profiles.profileFor(manager, tenantId, subscriber.billingProfileId);
      if (profile && profile.currency !== dto.currency) {
        throw new ApiError(
          'currency_mismatch',
          `Subscriber ${subscriber.id} is billed in ${profile.currency} (billing profile ${profile.id}); this invoice is in ${dto.currency}.`,
          'currency',
        );
      }
      // An issued invoice carries the subscriber's pending charges in its currency, under the subscriber's row lock
      // (the one a bill run batch holds), so each lands on one invoice.
      const charges = dto.draft
        ? []
        : await this.pendingFor(tx, tenantId, subscriber.id, dto.currency, total);
      const issuedLines = [...lines, ...charges.map(chargeLine)];
      const issuedTotal = issuedLines.reduce((sum, line) => sum + line.amount, 0);
      if (issuedTotal > MAX_AMOUNT) {
        throw new ApiError(
          'validation_failed',
          "The invoice total with the subscriber's pending charges exceeds the largest amount this API keeps.",
          'lines',
        );
      }
      const now = new Date();
      const status = dto.draft ? InvoiceStatus.Draft : issuedStatus(issuedTotal);
      const invoice = await this.invoices.insert(manager, {
        id: newId('inv'),
        tenantId,
        number: await this.invoices.nextNumber(manager, tenantId),
        subscriberId: dto.subscriber_id,
        currency: dto.currency,
        status,
        lines: issuedLines,
        total: issuedTotal,
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
        await this.charges.markInvoiced(
          manager,
          tenantId,
          [{ chargeIds: charges.map((charge) => charge.id), invoiceId: invoice.id, creditId: null }],
          now,
        );
        const applied = await this.open(tx, invoice);
        return InvoiceDto.from(invoice, applied.length > 0 ? applied : undefined);
      }
      return InvoiceDto.from(invoice);
    });
  }

  finalize(auth: AuthContext, id: string): Promise<InvoiceDto> {
    const { tenantId } = auth;
    return this.tx.run(auth, async (tx) => {
      // Lock order: the subscriber (whose pending charges the invoice takes), then the invoice.
      const draft = await this.invoices.getById(tx.manager, tenantId, id);
      await this.subscribers.lockIn(tx.manager, tenantId, draft.subscriberId);
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
      const charges = await this.pendingFor(
        tx,
        tenantId,
        invoice.subscriberId,
        invoice.currency,
        invoice.total,
      );
      invoice.lines = [...invoice.lines, ...charges.map(chargeLine)];
      invoice.total = invoice.lines.reduce((sum, line) => sum + line.amount, 0);
      if (invoice.total > MAX_AMOUNT) {
        throw new ApiError(
          'validation_failed',
          "The invoice total with the subscriber's pending charges exceeds the largest amount this API keeps.",
          'lines',
        );
      }
      invoice.status = issuedStatus(invoice.total);
      invoice.finalizedAt = new Date();
      invoice.paidAt = invoice.status === InvoiceStatus.Paid ? invoice.finalizedAt : null;
      invoice.updatedAt = invoice.finalizedAt;
      await this.invoices.update(tx.manager, invoice, [
        'lines',
        'total',
        'status',
        'finalizedAt',
        'paidAt',
        'updatedAt',
      ]);
      await this.charges.markInvoiced(
        tx.manager,
        tenantId,
        [{ chargeIds: charges.map((charge) => charge.id), invoiceId: invoice.id, creditId: null }],
        invoice.finalizedAt,
      );
      const applied = await this.open(tx, invoice);
      return InvoiceDto.from(invoice, [...allocations, ...applied]);
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

  /**
   * Closes what an open or partially paid invoice still asks as uncollectable: it becomes written_off (not payable,
   * never overdue), a write_off ledger entry lowers the balance by the amount due, and invoice.written_off is emitted.
   * Locks as a void does: the invoice, then the balance row (docs/decisions.md "Fixed lock order for money").
   */
  writeOff(auth: AuthContext, id: string, reason: string): Promise<InvoiceDto> {
    const { tenantId } = auth;
    return this.tx.run(auth, async (tx) => {
      const { manager } = tx;
      const invoice = await this.invoices.lockForUpdate(manager, tenantId, id);
      const allocations = await this.allocations.allocationsOfInvoice(manager, tenantId, id);
      await assertIfMatch(() => InvoiceDto.from(invoice, allocations));
      if (!PAYABLE_STATUSES.includes(invoice.status)) {
        throw new ApiError(
          'invalid_state_transition',
          `Only an open or partially paid invoice can be written off; this one is ${invoice.status}.`,
        );
      }
      const amount = invoice.amountDue;
      const now = new Date();
      Object.assign(invoice, {
        status: InvoiceStatus.WrittenOff,
        writtenOffAt: now,
        writeOffReason: reason,
        amountWrittenOff: amount,
        updatedAt: now,
      });
      await this.invoices.update(manager, invoice, [
        'status',
        'writtenOffAt',
        'writeOffReason',
        'amountWrittenOff',
        'updatedAt',
      ]);
      await this.ledger.post(manager, {
        tenantId,
        subscriberId: invoice.subscriberId,
        currency: invoice.currency,
        type: LedgerEntryType.WriteOff,
        amount: -amount,
        sourceId: invoice.id,
      });
      await this.events.append(tx, {
        tenantId,
        type: 'invoice.written_off',
        subjectId: invoice.id,
        object: InvoiceDto.from(invoice),
      });
      return InvoiceDto.from(invoice, allocations);
    });
  }

  /**
   * Issues an invoice now for the subscriber's pending charges in `currency` (POST /subscribers/{id}/charges with
   * `invoice_now`), in the caller's transaction with the subscriber locked; due after `paymentTermsDays`. Null when
   * nothing is pending, or when the charges net below zero (they wait for the next bill run).
   */
  async issuePending(
    tx: Tx,
    subscriber: Subscriber,
    currency: string,
    paymentTermsDays: number,
  ): Promise<Invoice | null> {
    const { manager } = tx;
    const charges = await this.pendingFor(tx, subscriber.tenantId, subscriber.id, currency, 0);
    if (charges.length === 0) {
      return null;
    }
    const lines = charges.map(chargeLine);
    const total = lines.reduce((sum, line) => sum + line.amount, 0);
    const now = new Date();
    const status = issuedStatus(total);
    const invoice = await this.invoices.insert(manager, {
      id: newId('inv'),
      tenantId: subscriber.tenantId,
      number: await this.invoices.nextNumber(manager, subscriber.tenantId),
      subscriberId: subscriber.id,
      currency,
      status,
      lines,
      total,
      amountPaid: 0,
      dueDate: addDays(this.clock.today(), paymentTermsDays),
      finalizedAt: now,
      paidAt: status === InvoiceStatus.Paid ? now : null,
      voidedAt: null,
      voidReason: null,
      createdAt: now,
      updatedAt: now,
    });
    await this.events.append(tx, {
      tenantId: subscriber.tenantId,
      type: 'invoice.created',
      subjectId: invoice.id,
      object: InvoiceDto.from(invoice),
    });
    await this.charges.markInvoiced(
      manager,
      subscriber.tenantId,
      [{ chargeIds: charges.map((charge) => charge.id), invoiceId: invoice.id, creditId: null }],
      now,
    );
    await this.open(tx, invoice);
    return invoice;
  }

  /** The subscriber's pending charges in `currency` an invoice of `total` takes; the subscriber locked first. */
  private async pendingFor(
    tx: Tx,
    tenantId: string,
    subscriberId: string,
    currency: string,
    total: number,
  ): Promise<Charge[]> {
    await this.subscribers.lockIn(tx.manager, tenantId, subscriberId);
    return chargesFitting(
      await this.charges.pendingOf(tx.manager, tenantId, [subscriberId], currency),
      total,
    );
  }

  async getById(tenantId: string, id: string): Promise<{ invoice: Invoice; allocations: Allocation[] }> {
    const { manager } = this.dataSource;
    const invoice = await this.invoices.getById(manager, tenantId, id);
    return { invoice, allocations: await this.allocations.allocationsOfInvoice(manager, tenantId, id) };
  }

  list(tenantId: string, query: ListInvoicesQueryDto): Promise<Page<Invoice>> {
    return this.invoices.page(this.dataSource.manager, tenantId, query);
  }

  /**
   * The invoice now counts as owed: it is announced, takes the subscriber's unapplied money (auto-apply: the
   * allocations made are answered) and enters the ledger. A draft being finalized is locked before that money, the
   * reverse of an allocation's order; only an allocation naming the draft itself could wait on it, and a deadlock
   * there is retried (docs/decisions.md, auto-apply).
   */
  private async open(tx: Tx, invoice: Invoice): Promise<Allocation[]> {
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
    // The money the subscriber has not applied yet pays it (auto-apply). Before the ledger posting: it locks that
    // money, and the balance row is always the last lock taken.
    const applied = await this.autoApply.toIssuedInvoices(tx, [invoice]);
    if (invoice.total > 0) {
      await this.ledger.post(tx.manager, {
        tenantId: invoice.tenantId,
        subscriberId: invoice.subscriberId,
        currency: invoice.currency,
        type: LedgerEntryType.Invoice,
        amount: invoice.total,
        sourceId: invoice.id,
      });
    }
    return applied;
  }
}
