import type { AuthContext } from '../../common/request-context';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { Clock } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import { isUniqueViolation } from '../../common/errors/postgres-errors';
import { newId } from '../../common/ids';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { eventRecord, EventsService } from '../../events';
import { SubscribersService, type Subscriber } from '../../subscribers';
import { ChargeSource } from '../charges/charge.entity';
import { ChargesService } from '../charges/charges.service';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { LedgerService } from '../ledger/ledger.service';
import { BillingProfilesService } from '../profiles/billing-profiles.service';
import { AllocatePaymentUseCase } from './allocate-payment.usecase';
import { CreateTransactionDto, ListTransactionsQueryDto } from './dto/transaction.dto';
import { TransactionDto } from './dto/transaction-response.dto';
import { ALLOCATABLE_KINDS, Allocation, Transaction, TransactionKind } from './transaction.entity';
import { TransactionRow, TransactionsRepository } from './transactions.repository';

/**
 * How each kind moves what the subscriber owes: payments and credits lower it, refunds raise it. A debit is owed once
 * an invoice carries it (a pending charge), so it enters the ledger with that invoice.
 */
const LEDGER_SIGN: Record<
  Exclude<TransactionKind, TransactionKind.Debit>,
  { type: LedgerEntryType; sign: 1 | -1 }
> = {
  [TransactionKind.Payment]: { type: LedgerEntryType.Payment, sign: -1 },
  [TransactionKind.Credit]: { type: LedgerEntryType.Credit, sign: -1 },
  [TransactionKind.Refund]: { type: LedgerEntryType.Refund, sign: 1 },
};

/** The fields that go with one kind only: refund_of with a refund (required there), auto_apply with allocatable money. */
function assertKindFields(dto: CreateTransactionDto): void {
  const isRefund = dto.kind === TransactionKind.Refund;
  if (isRefund && dto.refund_of === undefined) {
    throw new ApiError(
      'missing_field',
      'refund_of is required for a refund: the payment it returns money from.',
      'refund_of',
    );
  }
  if (!isRefund && dto.refund_of !== undefined) {
    throw new ApiError('validation_failed', 'refund_of is only for refunds.', 'refund_of');
  }
  if (dto.auto_apply !== undefined && !ALLOCATABLE_KINDS.includes(dto.kind)) {
    throw new ApiError('validation_failed', 'auto_apply is only for payments and credits.', 'auto_apply');
  }
}

/** The row of a transaction recorded at `now` as the request states it (it occurred now unless it says when). */
function transactionRow(tenantId: string, dto: CreateTransactionDto, now: Date): TransactionRow {
  return {
    id: newId('txn', now),
    tenantId,
    subscriberId: dto.subscriber_id,
    kind: dto.kind,
    source: dto.source,
    amount: dto.amount,
    currency: dto.currency,
    externalId: dto.external_id ?? null,
    reference: dto.reference ?? null,
    description: dto.description ?? null,
    method: dto.method ?? null,
    occurredAt: dto.occurred_at ? new Date(dto.occurred_at) : now,
    refundOf: dto.refund_of ?? null,
    metadata: dto.metadata ?? {},
    allocatedAmount: 0,
    refundedAmount: 0,
    // false: left for an allocation by hand; auto-apply never takes it, now or when an invoice is issued.
    autoApply: dto.auto_apply !== false,
    createdAt: now,
  };
}

@Injectable()
export class TransactionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly subscribers: SubscribersService,
    private readonly ledger: LedgerService,
    private readonly transactions: TransactionsRepository,
    private readonly allocator: AllocatePaymentUseCase,
    private readonly profiles: BillingProfilesService,
    private readonly charges: ChargesService,
    private readonly clock: Clock,
  ) {}

  async create(auth: AuthContext, dto: CreateTransactionDto): Promise<TransactionDto> {
    assertKindFields(dto);
    try {
      return await this.transactionRunner.run(auth, (tx) => this.recordIn(tx, auth.tenantId, dto));
    } catch (error) {
      if (isUniqueViolation(error, 'uq_transactions_external_id')) {
        throw new ApiError(
          'duplicate_transaction',
          'A transaction with the supplied external_id already exists.',
          'external_id',
        );
      }
      throw error;
    }
  }

  /**
   * Records the transaction in the caller's transaction: written and announced, applied to what is owed (auto-apply),
   * and posted to the ledger (a debit becomes a pending charge instead, taxed at `debitTaxRateIds`: null, the
   * billing profile's defaults; empty, untaxed). A second external_id is the caller's to map (uq_transactions_external_id).
   */
  async recordIn(
    tx: Tx,
    tenantId: string,
    dto: CreateTransactionDto,
    debitTaxRateIds: string[] | null = null,
  ): Promise<TransactionDto> {
    const { manager } = tx;
    const isRefund = dto.kind === TransactionKind.Refund;
    // Money that really moved (a payment, a refund of one) is recorded for an archived subscriber too.
    const received = dto.kind === TransactionKind.Payment || isRefund;
    // Auto-apply (docs/billing.md): money received pays what is owed at once, oldest due first. The subscriber's row
    // lock (first in the lock order) queues it with the invoices issued to the subscriber, which take it too, so a
    // payment and an invoice recorded at the same moment always meet, whichever commits first. Money that may be
    // auto-applied takes it with the subscriber's read (one statement), before its profile says whether it will be.
    const allocatable = ALLOCATABLE_KINDS.includes(dto.kind);
    const subscriber = await this.subscribers.assertExists(
      manager,
      tenantId,
      dto.subscriber_id,
      'subscriber_id',
      {
        archived: received ? 'allowed' : 'refused',
        lock: allocatable && dto.auto_apply !== false,
      },
    );
    const autoApply =
      allocatable && (dto.auto_apply ?? (await this.autoApplyOf(manager, tenantId, subscriber)));
    const now = this.clock.now();
    const row = transactionRow(tenantId, dto, now);
    if (isRefund) {
      await this.drawRefund(tx, row);
    }
    const { transaction, deliveries } = await this.transactions.insertWithEvent(manager, row, (created) =>
      eventRecord(
        {
          tenantId,
          type: 'transaction.created',
          subjectId: created.id,
          object: TransactionDto.from(created),
        },
        tx.scope,
        now,
      ),
    );
    this.events.queued(tx, deliveries);
    // Applied before the ledger posting: it locks invoices, and the balance row is always the last lock taken.
    const allocations = autoApply ? await this.allocator.applyOldestFirst(tx, transaction) : [];
    if (transaction.kind === TransactionKind.Debit) {
      // A debit is owed once an invoice carries it: it becomes a pending charge (docs/billing.md, "Charges").
      await this.debitCharge(tx, subscriber, transaction, debitTaxRateIds);
      return TransactionDto.from(transaction);
    }
    const { type, sign } = LEDGER_SIGN[transaction.kind];
    await this.ledger.post(manager, {
      tenantId,
      subscriberId: transaction.subscriberId,
      currency: transaction.currency,
      type,
      amount: sign * transaction.amount,
      sourceId: transaction.id,
    });
    return TransactionDto.from(transaction, allocatable ? allocations : undefined);
  }

  /** The pending charge a debit makes, under the subscriber's lock, in its billing profile's currency. */
  private async debitCharge(
    tx: Tx,
    subscriber: Subscriber,
    debit: Transaction,
    taxRateIds: string[] | null,
  ): Promise<void> {
    const { manager } = tx;
    await this.subscribers.lockIn(manager, debit.tenantId, subscriber.id);
    const profile = await this.profiles.profileFor(manager, debit.tenantId, subscriber.billingProfileId);
    if (profile && profile.currency !== debit.currency) {
      throw new ApiError(
        'currency_mismatch',
        `Subscriber ${subscriber.id} is billed in ${profile.currency}; the debit is in ${debit.currency}.`,
        'currency',
      );
    }
    await this.charges.record(tx, {
      tenantId: debit.tenantId,
      subscriberId: subscriber.id,
      serviceId: null,
      description: debit.description ?? `Debit ${debit.reference ?? debit.id}`,
      unitAmount: debit.amount,
      quantity: 1,
      currency: debit.currency,
      source: ChargeSource.Debit,
      sourceId: debit.id,
      taxRateIds,
    });
  }

  async getById(
    tenantId: string,
    id: string,
  ): Promise<{ transaction: Transaction; allocations: Allocation[] }> {
    const { manager } = this.dataSource;
    const transaction = await this.transactions.getById(manager, tenantId, id);
    return {
      transaction,
      allocations: await this.transactions.allocationsOfTransaction(manager, tenantId, id),
    };
  }

  list(tenantId: string, query: ListTransactionsQueryDto): Promise<Page<Transaction>> {
    return this.transactions.page(this.dataSource.manager, tenantId, query);
  }

  /** The subscriber's billing profile's auto_apply (its own profile, else the tenant's default); true with neither. */
  private async autoApplyOf(
    manager: EntityManager,
    tenantId: string,
    subscriber: Subscriber,
  ): Promise<boolean> {
    return (
      (await this.profiles.profileFor(manager, tenantId, subscriber.billingProfileId))?.autoApply ?? true
    );
  }

  /** A refund draws on its payment's unallocated, unrefunded remainder, under the payment's row lock. */
  private async drawRefund(tx: Tx, refund: TransactionRow): Promise<void> {
    const payment = await this.transactions.findForUpdate(tx.manager, refund.tenantId, refund.refundOf!);
    if (!payment || payment.kind !== TransactionKind.Payment) {
      throw new ApiError('invalid_reference', `No payment ${refund.refundOf} exists.`, 'refund_of');
    }
    if (payment.subscriberId !== refund.subscriberId) {
      throw new ApiError(
        'invalid_reference',
        'refund_of names a payment of another subscriber.',
        'refund_of',
      );
    }
    if (payment.currency !== refund.currency) {
      throw new ApiError(
        'currency_mismatch',
        `The payment is in ${payment.currency}, the refund in ${refund.currency}.`,
        'currency',
      );
    }
    if (refund.amount > payment.unallocatedAmount) {
      throw new ApiError(
        'refund_exceeds_refundable',
        `The payment has ${payment.unallocatedAmount} left to refund; ${refund.amount} was asked.`,
        'amount',
      );
    }
    payment.refundedAmount += refund.amount;
    await this.transactions.update(tx.manager, payment, ['refundedAmount']);
    await this.events.append(tx, {
      tenantId: payment.tenantId,
      type: 'transaction.refunded',
      subjectId: payment.id,
      object: TransactionDto.from(payment),
      details: { refund_id: refund.id, amount: refund.amount },
    });
  }
}
