import type { AuthContext } from '../../common/request-context';
import { assertIfMatch } from '../../common/http/etag';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Clock, utcDay } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { SqlParams } from '../../database/sql-params';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService, type NewEvent } from '../../events';
import { InvoiceDto } from '../invoices/dto/invoice-response.dto';
import { Invoice, InvoiceStatus, PAYABLE_STATUSES } from '../invoices/invoice.entity';
import { InvoicesRepository } from '../invoices/invoices.repository';
import { AllocateDto } from './dto/transaction.dto';
import { TransactionDto } from './dto/transaction-response.dto';
import { ALLOCATABLE_KINDS, Allocation, Transaction } from './transaction.entity';
import { TransactionsRepository } from './transactions.repository';

/** One allocation to make: an amount to an invoice (locked by the caller), or to the balance when `invoice` is null. */
export interface PlannedAllocation {
  invoice: Invoice | null;
  amount: number;
}

interface Planned extends PlannedAllocation {
  field: string;
}

/**
 * Applies a payment or credit to invoices or to the balance, all or nothing. Locks are taken in one fixed order —
 * the transaction, then its invoices by id — so concurrent allocations queue instead of deadlocking, and every
 * check runs against locked rows, so 30 racing allocations can never over-allocate.
 */
@Injectable()
export class AllocatePaymentUseCase {
  constructor(
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly transactions: TransactionsRepository,
    private readonly invoices: InvoicesRepository,
    private readonly clock: Clock,
  ) {}

  execute(auth: AuthContext, transactionId: string, dto: AllocateDto): Promise<TransactionDto> {
    const { tenantId } = auth;
    const form = this.formOf(dto);
    return this.transactionRunner.run(auth, async (tx) => {
      const { manager } = tx;
      const transaction = await this.transactions.lockForUpdate(manager, tenantId, transactionId);
      await assertIfMatch(async () =>
        TransactionDto.from(
          transaction,
          await this.transactions.allocationsOfTransaction(manager, tenantId, transactionId),
        ),
      );
      if (!ALLOCATABLE_KINDS.includes(transaction.kind)) {
        throw new ApiError(
          'validation_failed',
          `Only payments and credits can be allocated; this is a ${transaction.kind}.`,
        );
      }
      if (form === 'strategy') {
        await this.applyOldestFirst(tx, transaction);
        return TransactionDto.from(
          transaction,
          await this.transactions.allocationsOfTransaction(manager, tenantId, transactionId),
        );
      }
      const plan =
        form === 'balance'
          ? [{ invoice: null, amount: dto.amount!, field: 'amount' }]
          : await this.planInvoices(manager, transaction, dto);
      const total = plan.reduce((sum, item) => sum + item.amount, 0);
      if (total > transaction.unallocatedAmount) {
        throw new ApiError(
          'allocation_exceeds_unallocated',
          `The transaction has ${transaction.unallocatedAmount} unallocated; ${total} was asked.`,
          form === 'invoices' ? 'allocations' : 'amount',
        );
      }
      if (plan.length > 0) {
        await this.applyPlan(tx, transaction, plan);
      }
      const allocations = await this.transactions.allocationsOfTransaction(manager, tenantId, transactionId);
      return TransactionDto.from(transaction, allocations);
    });
  }

  private formOf(dto: AllocateDto): 'invoices' | 'balance' | 'strategy' {
    const forms = [dto.allocations !== undefined, dto.target !== undefined, dto.strategy !== undefined];
    if (forms.filter(Boolean).length !== 1) {
      throw new ApiError(
        'validation_failed',
        'Send exactly one of allocations, target (with amount), or strategy.',
      );
    }
    if (dto.target !== undefined) {
      if (dto.amount === undefined) {
        throw new ApiError('missing_field', 'amount is required with target.', 'amount');
      }
      return 'balance';
    }
    if (dto.amount !== undefined) {
      throw new ApiError('validation_failed', 'amount goes with target only.', 'amount');
    }
    return dto.allocations !== undefined ? 'invoices' : 'strategy';
  }

  private async planInvoices(
    manager: EntityManager,
    transaction: Transaction,
    dto: AllocateDto,
  ): Promise<Planned[]> {
    const items = dto.allocations!;
    const invoices = await this.invoices.lockManyInIdOrder(
      manager,
      transaction.tenantId,
      items.map((item) => item.invoice_id),
    );
    const askedPerInvoice = new Map<string, number>();
    return items.map((item, index) => {
      const field = `allocations.${index}`;
      const invoice = invoices.get(item.invoice_id);
      if (!invoice) {
        throw new ApiError(
          'invalid_reference',
          `No invoice ${item.invoice_id} exists.`,
          `${field}.invoice_id`,
        );
      }
      this.assertPayable(transaction, invoice, field);
      const asked = (askedPerInvoice.get(invoice.id) ?? 0) + item.amount;
      askedPerInvoice.set(invoice.id, asked);
      if (asked > invoice.amountDue) {
        throw new ApiError(
          'allocation_exceeds_amount_due',
          `Invoice ${invoice.id} has ${invoice.amountDue} due; ${asked} was asked.`,
          `${field}.amount`,
        );
      }
      return { invoice, amount: item.amount, field };
    });
  }

  /**
   * Applies what the transaction (a payment or credit, row-locked or written by the caller's transaction) has not yet
   * allocated to its subscriber's open and partially paid invoices in its currency, oldest due date first (then
   * invoice number), until the money or the invoices run out: `strategy: oldest_first`, and auto-apply on receipt
   * (TransactionsService.create). Locks the invoices in id order after the transaction, the fixed order of every
   * allocation. Emits what an explicit allocation does (invoice.paid, transaction.allocated); answers the allocations
   * made, none when nothing was owed.
   */
  async applyOldestFirst(tx: Tx, transaction: Transaction): Promise<Allocation[]> {
    const { manager } = tx;
    const { tenantId, subscriberId, currency } = transaction;
    const candidates = await this.invoices.payableIds(manager, tenantId, subscriberId, currency);
    if (candidates.length === 0 || transaction.unallocatedAmount === 0) {
      return [];
    }
    const locked = await this.invoices.lockManyInIdOrder(manager, tenantId, candidates);
    const payable = [...locked.values()]
      .filter((invoice) => PAYABLE_STATUSES.includes(invoice.status) && invoice.amountDue > 0)
      .sort(byDueDate);
    let left = transaction.unallocatedAmount;
    const plan: PlannedAllocation[] = [];
    for (const invoice of payable) {
      if (left === 0) {
        break;
      }
      const amount = Math.min(left, invoice.amountDue);
      plan.push({ invoice, amount });
      left -= amount;
    }
    return plan.length === 0 ? [] : this.applyPlan(tx, transaction, plan);
  }

  private assertPayable(transaction: Transaction, invoice: Invoice, field: string): void {
    if (invoice.subscriberId !== transaction.subscriberId) {
      throw new ApiError(
        'invalid_reference',
        `Invoice ${invoice.id} belongs to another subscriber.`,
        `${field}.invoice_id`,
      );
    }
    if (invoice.currency !== transaction.currency) {
      throw new ApiError(
        'currency_mismatch',
        `Invoice ${invoice.id} is in ${invoice.currency}; the transaction in ${transaction.currency}.`,
        `${field}.invoice_id`,
      );
    }
    if (!PAYABLE_STATUSES.includes(invoice.status)) {
      throw new ApiError(
        'invalid_state_transition',
        `Invoice ${invoice.id} is ${invoice.status} and takes no allocations.`,
        `${field}.invoice_id`,
      );
    }
  }

  /**
   * Writes a plan whose rows the caller holds (the transaction, then its invoices): the allocations, the transaction's
   * allocated amount, each invoice's amount paid and status (the in-memory entities too), and the events: invoice.paid
   * for each invoice it pays in full, then transaction.allocated. Answers the allocations.
   */
  applyPlan(tx: Tx, transaction: Transaction, plan: PlannedAllocation[]): Promise<Allocation[]> {
    return this.applyPlans(tx, new Map([[transaction, plan]]));
  }

  /**
   * Writes several plans of one tenant at once, in the order given, as applyPlan would one after the other, with one
   * statement however many (auto-apply over a bill run's batch): the allocations, the transactions' allocated amounts,
   * the invoices' payment state, and the events, each event's object as it stood at its point of the order.
   */
  async applyPlans(tx: Tx, plans: Map<Transaction, PlannedAllocation[]>): Promise<Allocation[]> {
    const now = this.clock.now();
    const made: Allocation[] = [];
    const events: NewEvent[] = [];
    const touched = new Set<Invoice>();
    for (const [transaction, plan] of plans) {
      const allocations = plan.map((item) =>
        Object.assign(new Allocation(), {
          id: newId('alc', now),
          tenantId: transaction.tenantId,
          transactionId: transaction.id,
          invoiceId: item.invoice?.id ?? null,
          subscriberId: transaction.subscriberId,
          amount: item.amount,
          currency: transaction.currency,
          createdAt: now,
        }),
      );
      made.push(...allocations);
      transaction.allocatedAmount += plan.reduce((sum, item) => sum + item.amount, 0);
      for (const invoice of new Set(plan.flatMap((item) => (item.invoice ? [item.invoice] : [])))) {
        invoice.amountPaid += plan
          .filter((item) => item.invoice === invoice)
          .reduce((sum, item) => sum + item.amount, 0);
        invoice.status = invoice.amountDue === 0 ? InvoiceStatus.Paid : InvoiceStatus.PartiallyPaid;
        invoice.paidAt = invoice.status === InvoiceStatus.Paid ? now : null;
        invoice.updatedAt = now;
        touched.add(invoice);
        if (invoice.status === InvoiceStatus.Paid) {
          events.push({
            tenantId: invoice.tenantId,
            type: 'invoice.paid',
            subjectId: invoice.id,
            object: InvoiceDto.from(invoice, utcDay(now)),
          });
        }
      }
      events.push({
        tenantId: transaction.tenantId,
        type: 'transaction.allocated',
        subjectId: transaction.id,
        object: TransactionDto.from(transaction),
        details: {
          allocations: allocations.map((a) => ({ id: a.id, invoice_id: a.invoiceId, amount: a.amount })),
        },
      });
    }
    if (made.length === 0) {
      return made;
    }
    // One statement: the allocations, the money's allocated amounts, the invoices' payment state and the events.
    const tenantId = made[0].tenantId;
    const params = new SqlParams();
    const writes = [
      ...this.transactions.appliedCtes(params, tenantId, made, [...plans.keys()]),
      this.invoices.paymentsCte(params, tenantId, [...touched]),
    ].filter((cte): cte is string => cte !== null);
    await this.events.appendManyWith(tx, events, params, writes);
    return made;
  }
}

/** Oldest due date first, then the one issued first (its place in the series, then id): the order money is applied in. */
export function byDueDate(a: Invoice, b: Invoice): number {
  if (a.dueDate !== b.dueDate) {
    return a.dueDate < b.dueDate ? -1 : 1;
  }
  return (a.sequence ?? 0) - (b.sequence ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
