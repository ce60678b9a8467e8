import type { AuthContext } from '../../common/request-context';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { assertIfMatch } from '../../common/http/etag';
import { ApiError } from '../../common/errors/api-error';
import { MAX_AMOUNT } from '../../common/money';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { Clock } from '../../common/clock';
import { addDays } from '../../common/dates';
import { type Subscriber, SubscribersService } from '../../subscribers';
import { chargeLine } from '../charges/charge-line';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { LedgerService } from '../ledger/ledger.service';
import { BillingProfilesService } from '../profiles/billing-profiles.service';
import { Allocation } from '../transactions/transaction.entity';
import { TransactionsRepository } from '../transactions/transactions.repository';
import { CreateInvoiceDto, ListInvoicesQueryDto } from './dto/invoice.dto';
import { InvoiceDto } from './dto/invoice-response.dto';
import { Invoice, InvoiceLine, InvoiceStatus, PAYABLE_STATUSES } from './invoice.entity';
import { InvoicesRepository } from './invoices.repository';
import { InvoiceIssuer, issuedStatus, newInvoice } from './invoice-issuer';
import { RevenueRepository } from '../reports/revenue.repository';

/** A manual invoice's lines as the request states them (untaxed), refused when they pass the largest amount kept. */
function manualLines(dto: CreateInvoiceDto): InvoiceLine[] {
  const lines: InvoiceLine[] = dto.lines.map((line) => ({
    description: line.description,
    quantity: line.quantity,
    unit_amount: line.unit_amount,
    amount: line.quantity * line.unit_amount,
    ...(line.tax_rate_ids !== undefined ? { tax_rate_ids: line.tax_rate_ids } : {}),
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
  return lines;
}

@Injectable()
export class InvoicesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly subscribers: SubscribersService,
    private readonly ledger: LedgerService,
    private readonly invoices: InvoicesRepository,
    private readonly allocations: TransactionsRepository,
    private readonly profiles: BillingProfilesService,
    private readonly issuer: InvoiceIssuer,
    private readonly clock: Clock,
    private readonly revenue: RevenueRepository,
  ) {}

  create(auth: AuthContext, dto: CreateInvoiceDto): Promise<InvoiceDto> {
    const { tenantId } = auth;
    const lines = manualLines(dto);
    const total = lines.reduce((sum, line) => sum + line.amount, 0);
    return this.transactionRunner.run(auth, async (tx) => {
      const subscriber = await this.subscribers.assertExists(
        tx.manager,
        tenantId,
        dto.subscriber_id,
        'subscriber_id',
      );
      await this.assertCurrency(tx, subscriber, dto.currency);
      // An issued invoice carries the subscriber's pending charges in its currency, under the subscriber's row lock
      // (the one a bill run batch holds), so each lands on one invoice.
      const charges = dto.draft
        ? []
        : await this.issuer.pendingFor(tx, tenantId, subscriber.id, dto.currency, total);
      const priced = await this.issuer.priced(
        tx,
        tenantId,
        subscriber.id,
        [...lines, ...charges.map(chargeLine)],
        'lines',
      );
      const row = newInvoice(
        {
          tenantId,
          subscriberId: dto.subscriber_id,
          currency: dto.currency,
          priced,
          dueDate: dto.due_date,
          draft: dto.draft ?? false,
        },
        this.clock.now(),
      );
      const { invoice, applied } = await this.issuer.insert(tx, row, charges);
      return InvoiceDto.from(invoice, this.clock.today(), applied.length > 0 ? applied : undefined);
    });
  }

  /** One currency per subscriber: its billing profile's (or the tenant default's), as the bill run bills in. */
  private async assertCurrency(tx: Tx, subscriber: Subscriber, currency: string): Promise<void> {
    const profile = await this.profiles.profileFor(
      tx.manager,
      subscriber.tenantId,
      subscriber.billingProfileId,
    );
    if (profile && profile.currency !== currency) {
      throw new ApiError(
        'currency_mismatch',
        `Subscriber ${subscriber.id} is billed in ${profile.currency} (billing profile ${profile.id}); this invoice is in ${currency}.`,
        'currency',
      );
    }
  }

  finalize(auth: AuthContext, id: string): Promise<InvoiceDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      // Lock order: the subscriber (whose pending charges the invoice takes), then the invoice.
      const draft = await this.invoices.getById(tx.manager, tenantId, id);
      await this.subscribers.lockIn(tx.manager, tenantId, draft.subscriberId);
      const invoice = await this.invoices.lockForUpdate(tx.manager, tenantId, id);
      // The answer is the record as GET shows it (allocations too), so its ETag is the one GET gives.
      const allocations = await this.allocations.allocationsOfInvoice(tx.manager, tenantId, id);
      await assertIfMatch(() => InvoiceDto.from(invoice, this.clock.today(), allocations));
      if (invoice.status !== InvoiceStatus.Draft) {
        throw new ApiError(
          'invalid_state_transition',
          `Only a draft invoice can be finalized; this one is ${invoice.status}.`,
        );
      }
      const charges = await this.issuer.pendingFor(
        tx,
        tenantId,
        invoice.subscriberId,
        invoice.currency,
        invoice.total,
      );
      const priced = await this.issuer.priced(
        tx,
        tenantId,
        invoice.subscriberId,
        [...invoice.lines, ...charges.map(chargeLine)],
        'lines',
      );
      invoice.lines = priced.lines;
      invoice.total = priced.total;
      invoice.taxAmount = priced.taxAmount;
      invoice.taxes = priced.taxes;
      await this.issuer.numbered(tx, invoice);
      invoice.status = issuedStatus(invoice.total);
      invoice.finalizedAt = this.clock.now();
      invoice.paidAt = invoice.status === InvoiceStatus.Paid ? invoice.finalizedAt : null;
      invoice.updatedAt = invoice.finalizedAt;
      await this.invoices.update(tx.manager, invoice, [
        'number',
        'sequence',
        'lines',
        'total',
        'taxAmount',
        'taxes',
        'status',
        'finalizedAt',
        'paidAt',
        'updatedAt',
      ]);
      await this.revenue.record(tx.manager, tenantId, { invoiceIds: [invoice.id] });
      await this.issuer.markInvoiced(tx, invoice, charges, invoice.finalizedAt);
      const applied = await this.issuer.open(tx, invoice);
      return InvoiceDto.from(invoice, this.clock.today(), [...allocations, ...applied]);
    });
  }

  void(auth: AuthContext, id: string, reason: string | null = null): Promise<InvoiceDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const { manager } = tx;
      const invoice = await this.invoices.lockForUpdate(manager, tenantId, id);
      const allocations = await this.allocations.allocationsOfInvoice(manager, tenantId, id);
      await assertIfMatch(() => InvoiceDto.from(invoice, this.clock.today(), allocations));
      if (invoice.status === InvoiceStatus.Void) {
        throw new ApiError('invalid_state_transition', 'The invoice is already void.');
      }
      if (invoice.amountPaid > 0 || ![InvoiceStatus.Draft, InvoiceStatus.Open].includes(invoice.status)) {
        throw new ApiError('invalid_state_transition', 'An invoice with allocations cannot be voided.');
      }
      const wasOpen = invoice.status === InvoiceStatus.Open;
      invoice.status = InvoiceStatus.Void;
      invoice.voidedAt = this.clock.now();
      invoice.voidReason = reason;
      invoice.updatedAt = invoice.voidedAt;
      // What the invoice counted in revenue (nothing for a draft) is taken back while its row is still issued.
      await this.revenue.record(manager, tenantId, { invoiceIds: [invoice.id] }, -1);
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
        object: InvoiceDto.from(invoice, this.clock.today()),
      });
      return InvoiceDto.from(invoice, this.clock.today(), allocations);
    });
  }

  /**
   * Closes what an open or partially paid invoice still asks as uncollectable: it becomes written_off (not payable,
   * never overdue), a write_off ledger entry lowers the balance by the amount due, and invoice.written_off is emitted.
   * Locks as a void does: the invoice, then the balance row (docs/decisions.md "Fixed lock order for money").
   */
  writeOff(auth: AuthContext, id: string, reason: string): Promise<InvoiceDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const { manager } = tx;
      const invoice = await this.invoices.lockForUpdate(manager, tenantId, id);
      const allocations = await this.allocations.allocationsOfInvoice(manager, tenantId, id);
      await assertIfMatch(() => InvoiceDto.from(invoice, this.clock.today(), allocations));
      if (!PAYABLE_STATUSES.includes(invoice.status)) {
        throw new ApiError(
          'invalid_state_transition',
          `Only an open or partially paid invoice can be written off; this one is ${invoice.status}.`,
        );
      }
      const amount = invoice.amountDue;
      const now = this.clock.now();
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
        object: InvoiceDto.from(invoice, this.clock.today()),
      });
      return InvoiceDto.from(invoice, this.clock.today(), allocations);
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
    const charges = await this.issuer.pendingFor(tx, subscriber.tenantId, subscriber.id, currency, 0);
    if (charges.length === 0) {
      return null;
    }
    const priced = await this.issuer.priced(
      tx,
      subscriber.tenantId,
      subscriber.id,
      charges.map(chargeLine),
      'charges',
    );
    const row = newInvoice(
      {
        tenantId: subscriber.tenantId,
        subscriberId: subscriber.id,
        currency,
        priced,
        dueDate: addDays(this.clock.today(), paymentTermsDays),
        draft: false,
      },
      this.clock.now(),
    );
    return (await this.issuer.insert(tx, row, charges)).invoice;
  }

  async getById(tenantId: string, id: string): Promise<{ invoice: Invoice; allocations: Allocation[] }> {
    const { manager } = this.dataSource;
    const invoice = await this.invoices.getById(manager, tenantId, id);
    return { invoice, allocations: await this.allocations.allocationsOfInvoice(manager, tenantId, id) };
  }

  list(tenantId: string, query: ListInvoicesQueryDto): Promise<Page<Invoice>> {
    return this.invoices.page(this.dataSource.manager, tenantId, query);
  }
}
