import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../../common/clock';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import type { AuthContext } from '../../common/request-context';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { type Subscriber, SubscribersService } from '../../subscribers';
import { Invoice, InvoiceStatus, PAYABLE_STATUSES } from '../invoices/invoice.entity';
import { InvoicesRepository } from '../invoices/invoices.repository';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { LedgerService } from '../ledger/ledger.service';
import { NumberingService } from '../numbering/numbering.service';
import { BillingProfilesService } from '../profiles/billing-profiles.service';
import { InvoiceTaxes } from '../taxes/invoice-taxes';
import { AllocatePaymentUseCase } from '../transactions/allocate-payment.usecase';
import { TransactionDto } from '../transactions/dto/transaction-response.dto';
import {
  Allocation,
  Transaction,
  TransactionKind,
  TransactionSource,
} from '../transactions/transaction.entity';
import { TransactionsRepository } from '../transactions/transactions.repository';
import { CreditNoteProblem, planCreditNote, type CreditRequest } from './credit-note-lines';
import { CreditNote } from './credit-note.entity';
import { CreditNotesRepository } from './credit-notes.repository';
import { CreateCreditNoteDto, CreditNoteDto, ListCreditNotesQueryDto } from './dto/credit-note.dto';
import { RevenueRepository } from '../reports/revenue.repository';

/** Statuses an invoice takes credit notes in: issued and not voided nor written off. */
const CREDITABLE = [InvoiceStatus.Open, InvoiceStatus.PartiallyPaid, InvoiceStatus.Paid];

/**
 * Credit notes (docs/billing.md, "Credit notes"): a numbered document crediting part or all of a finalised invoice,
 * taxed like the lines it reverses. Its value is a credit transaction: it pays what the invoice still owes, the rest
 * is the subscriber's credit (auto-apply spends it, as any credit), or, with `refund`, it takes the place of part of a
 * payment of the invoice, which is refunded.
 */
@Injectable()
export class CreditNotesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly subscribers: SubscribersService,
    private readonly invoices: InvoicesRepository,
    private readonly notes: CreditNotesRepository,
    private readonly transactions: TransactionsRepository,
    private readonly allocator: AllocatePaymentUseCase,
    private readonly ledger: LedgerService,
    private readonly numbering: NumberingService,
    private readonly taxes: InvoiceTaxes,
    private readonly profiles: BillingProfilesService,
    private readonly clock: Clock,
    private readonly revenue: RevenueRepository,
  ) {}

  create(auth: AuthContext, invoiceId: string, dto: CreateCreditNoteDto): Promise<CreditNoteDto> {
    const { tenantId } = auth;
    const request = this.requestOf(dto);
    return this.transactionRunner.run(auth, async (tx) => {
      const { manager } = tx;
      const { subscriber, payment, invoice } = await this.lockCreditable(tx, tenantId, invoiceId, dto);
      const earlier = await this.notes.ofInvoice(manager, tenantId, invoiceId);
      const plan = this.plan(invoice, earlier, request);
      if (payment) {
        await this.assertRefundable(tx, payment, invoice, plan.total);
      }
      const now = this.clock.now();
      const { number, sequence } = await this.numbering.next(
        manager,
        tenantId,
        'credit_note',
        this.clock.today(),
      );
      await this.taxes.markUsed(manager, tenantId, plan.lines);
      const id = newId('cn', now);
      const autoApply =
        (await this.profiles.profileFor(manager, tenantId, subscriber.billingProfileId))?.autoApply ?? true;
      const credit = await this.insertCredit(tx, invoice, plan.total, {
        noteId: id,
        number,
        autoApply: autoApply && !payment,
        now,
      });
      const { applied, refund } = await this.spend(tx, invoice, credit, payment, now);
      const note = await this.notes.insert(manager, {
        tenantId,
        id,
        number,
        sequence,
        invoiceId: invoice.id,
        subscriberId: invoice.subscriberId,
        currency: invoice.currency,
        reason: dto.reason,
        lines: plan.lines,
        taxAmount: plan.taxAmount,
        taxes: plan.taxes,
        total: plan.total,
        creditTransactionId: credit.id,
        appliedToInvoice: applied,
        refundTransactionId: refund?.id ?? null,
        refundOf: payment?.id ?? null,
        refunded: refund ? refund.amount : null,
        createdAt: now,
      });
      await this.revenue.record(manager, tenantId, { creditNoteIds: [note.id] });
      await this.events.append(tx, {
        tenantId,
        type: 'credit_note.created',
        subjectId: note.id,
        object: CreditNoteDto.from(note),
      });
      await this.post(tx, invoice, credit, refund);
      return CreditNoteDto.from(note);
    });
  }

  /**
   * The invoice to credit, locked, with its subscriber and (a refund) the payment the money goes back through. Lock
   * order: the subscriber, the payment to refund (an allocation's first lock), then the invoice.
   */
  private async lockCreditable(
    tx: Tx,
    tenantId: string,
    invoiceId: string,
    dto: CreateCreditNoteDto,
  ): Promise<{ subscriber: Subscriber; payment: Transaction | null; invoice: Invoice }> {
    const { manager } = tx;
    const peek = await this.invoices.getById(manager, tenantId, invoiceId);
    const subscriber = await this.subscribers.lockIn(manager, tenantId, peek.subscriberId);
    const payment = dto.refund ? await this.lockPayment(tx, peek, dto.payment_id!) : null;
    const invoice = await this.invoices.lockForUpdate(manager, tenantId, invoiceId);
    if (!CREDITABLE.includes(invoice.status)) {
      throw new ApiError(
        'invalid_state_transition',
        `Only a finalised invoice that is not void or written off takes credit notes; this one is ${invoice.status}.`,
      );
    }
    return { subscriber, payment, invoice };
  }

  /** A refund goes back through what the payment paid of this invoice, at most. */
  private async assertRefundable(
    tx: Tx,
    payment: Transaction,
    invoice: Invoice,
    total: number,
  ): Promise<void> {
    const paid = await this.transactions.allocatedTo(tx.manager, invoice.tenantId, payment.id, invoice.id);
    if (paid < total) {
      throw new ApiError(
        'refund_exceeds_refundable',
        `Payment ${payment.id} paid ${paid} of this invoice; a refund of ${total} was asked.`,
        'payment_id',
      );
    }
  }

  /** The credit transaction that carries the note's value, announced. */
  private async insertCredit(
    tx: Tx,
    invoice: Invoice,
    amount: number,
    note: { noteId: string; number: string; autoApply: boolean; now: Date },
  ): Promise<Transaction> {
    const { now } = note;
    const credit = await this.transactions.insert(tx.manager, {
      id: newId('txn', now),
      tenantId: invoice.tenantId,
      subscriberId: invoice.subscriberId,
      kind: TransactionKind.Credit,
      source: TransactionSource.Adjustment,
      amount,
      currency: invoice.currency,
      externalId: null,
      reference: note.number,
      description: `Credit note ${note.number} for invoice ${invoice.number}`,
      method: null,
      occurredAt: now,
      refundOf: null,
      metadata: { credit_note_id: note.noteId, invoice_id: invoice.id },
      allocatedAmount: 0,
      refundedAmount: 0,
      autoApply: note.autoApply,
      createdAt: now,
    });
    await this.events.append(tx, {
      tenantId: invoice.tenantId,
      type: 'transaction.created',
      subjectId: credit.id,
      object: TransactionDto.from(credit),
    });
    return credit;
  }

  /**
   * Where the credit goes: with a payment, back through it (refundThrough); else it pays what the invoice still owes,
   * and the rest goes to the subscriber's oldest invoices when auto-apply is on. Answers what it paid of the invoice
   * and the refund.
   */
  private async spend(
    tx: Tx,
    invoice: Invoice,
    credit: Transaction,
    payment: Transaction | null,
    now: Date,
  ): Promise<{ applied: number; refund: Transaction | null }> {
    if (payment) {
      return { applied: 0, refund: await this.refundThrough(tx, invoice, payment, credit, now) };
    }
    let applied = 0;
    if (PAYABLE_STATUSES.includes(invoice.status) && invoice.amountDue > 0) {
      applied = Math.min(credit.amount, invoice.amountDue);
      await this.allocator.applyPlan(tx, credit, [{ invoice, amount: applied }]);
    }
    if (credit.autoApply && credit.unallocatedAmount > 0) {
      await this.allocator.applyOldestFirst(tx, credit);
    }
    return { applied, refund: null };
  }

  /** The balance row is the last lock taken: the credit lowers what is owed, a refund raises it back. */
  private async post(
    tx: Tx,
    invoice: Invoice,
    credit: Transaction,
    refund: Transaction | null,
  ): Promise<void> {
    const account = {
      tenantId: invoice.tenantId,
      subscriberId: invoice.subscriberId,
      currency: invoice.currency,
    };
    await this.ledger.post(tx.manager, {
      ...account,
      type: LedgerEntryType.Credit,
      amount: -credit.amount,
      sourceId: credit.id,
    });
    if (refund) {
      await this.ledger.post(tx.manager, {
        ...account,
        type: LedgerEntryType.Refund,
        amount: refund.amount,
        sourceId: refund.id,
      });
    }
  }

  async getById(tenantId: string, id: string): Promise<CreditNote> {
    return this.notes.getById(this.dataSource.manager, tenantId, id);
  }

  list(tenantId: string, query: ListCreditNotesQueryDto): Promise<Page<CreditNote>> {
    return this.notes.page(this.dataSource.manager, tenantId, query);
  }

  private requestOf(dto: CreateCreditNoteDto): CreditRequest {
    if ((dto.lines === undefined) === (dto.amount === undefined)) {
      throw new ApiError('validation_failed', 'Send exactly one of lines and amount.', 'lines');
    }
    if (dto.refund && dto.payment_id === undefined) {
      throw new ApiError(
        'missing_field',
        'payment_id is required with refund: the payment the money goes back through.',
        'payment_id',
      );
    }
    if (!dto.refund && dto.payment_id !== undefined) {
      throw new ApiError('validation_failed', 'payment_id goes with refund: true only.', 'payment_id');
    }
    return dto.lines !== undefined ? { lines: dto.lines } : { amount: dto.amount! };
  }

  private plan(invoice: Invoice, earlier: CreditNote[], request: CreditRequest) {
    try {
      return planCreditNote(
        invoice.lines,
        invoice.total,
        earlier.flatMap((note) => note.lines),
        request,
      );
    } catch (error) {
      if (error instanceof CreditNoteProblem) {
        throw new ApiError(error.code, error.message, error.field);
      }
      throw error;
    }
  }

  /** The payment a refund goes back through, locked: a payment of the invoice's subscriber and currency. */
  private async lockPayment(tx: Tx, invoice: Invoice, paymentId: string): Promise<Transaction> {
    const payment = await this.transactions.findForUpdate(tx.manager, invoice.tenantId, paymentId);
    if (
      !payment ||
      payment.kind !== TransactionKind.Payment ||
      payment.subscriberId !== invoice.subscriberId ||
      payment.currency !== invoice.currency
    ) {
      throw new ApiError(
        'invalid_reference',
        `No payment ${paymentId} of this invoice's subscriber in ${invoice.currency} exists.`,
        'payment_id',
      );
    }
    return payment;
  }

  /**
   * The credit takes the place of `credit.amount` of what the payment paid of the invoice (the invoice stays paid as
   * it was), and that much of the payment is refunded: a refund transaction of it, with the payment's
   * transaction.refunded and the refund's transaction.created.
   */
  private async refundThrough(
    tx: Tx,
    invoice: Invoice,
    payment: Transaction,
    credit: Transaction,
    now: Date,
  ): Promise<Transaction> {
    const { manager } = tx;
    const amount = credit.amount;
    await this.transactions.releaseFromInvoice(manager, payment, invoice.id, amount);
    const [allocation] = await this.transactions.insertAllocations(manager, [
      Object.assign(new Allocation(), {
        id: newId('alc', now),
        tenantId: invoice.tenantId,
        transactionId: credit.id,
        invoiceId: invoice.id,
        subscriberId: invoice.subscriberId,
        amount,
        currency: invoice.currency,
        createdAt: now,
      }),
    ]);
    credit.allocatedAmount = amount;
    await this.transactions.update(manager, credit, ['allocatedAmount']);
    await this.events.append(tx, {
      tenantId: invoice.tenantId,
      type: 'transaction.allocated',
      subjectId: credit.id,
      object: TransactionDto.from(credit),
      details: { allocations: [{ id: allocation.id, invoice_id: invoice.id, amount }] },
    });
    const refund = await this.transactions.insert(manager, {
      id: newId('txn', now),
      tenantId: invoice.tenantId,
      subscriberId: invoice.subscriberId,
      kind: TransactionKind.Refund,
      source: TransactionSource.Adjustment,
      amount,
      currency: invoice.currency,
      externalId: null,
      reference: credit.reference,
      description: `Refund of ${credit.reference ?? 'a credit note'} through payment ${payment.id}`,
      method: payment.method,
      occurredAt: now,
      refundOf: payment.id,
      metadata: { credit_note_transaction_id: credit.id, invoice_id: invoice.id },
      allocatedAmount: 0,
      refundedAmount: 0,
      createdAt: now,
    });
    payment.refundedAmount += amount;
    await this.transactions.update(manager, payment, ['refundedAmount']);
    await this.events.append(tx, {
      tenantId: invoice.tenantId,
      type: 'transaction.refunded',
      subjectId: payment.id,
      object: TransactionDto.from(payment),
      details: { refund_id: refund.id, amount },
    });
    await this.events.append(tx, {
      tenantId: invoice.tenantId,
      type: 'transaction.created',
      subjectId: refund.id,
      object: TransactionDto.from(refund),
    });
    return refund;
  }
}
