import type { AuthContext } from '../../common/request-context';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { isUniqueViolation } from '../../common/errors/postgres-errors';
import { newId } from '../../common/ids';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { SubscribersService } from '../../subscribers';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { LedgerService } from '../ledger/ledger.service';
import { CreateTransactionDto, ListTransactionsQueryDto } from './dto/transaction.dto';
import { TransactionDto } from './dto/transaction-response.dto';
import { Allocation, Transaction, TransactionKind } from './transaction.entity';
import { TransactionRow, TransactionsRepository } from './transactions.repository';

/** How each kind moves what the subscriber owes: payments and credits lower it, debits and refunds raise it. */
const LEDGER_SIGN: Record<TransactionKind, { type: LedgerEntryType; sign: 1 | -1 }> = {
  [TransactionKind.Payment]: { type: LedgerEntryType.Payment, sign: -1 },
  [TransactionKind.Credit]: { type: LedgerEntryType.Credit, sign: -1 },
  [TransactionKind.Debit]: { type: LedgerEntryType.Debit, sign: 1 },
  [TransactionKind.Refund]: { type: LedgerEntryType.Refund, sign: 1 },
};

@Injectable()
export class TransactionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tx: TransactionRunner,
    private readonly events: EventsService,
    private readonly subscribers: SubscribersService,
    private readonly ledger: LedgerService,
    private readonly transactions: TransactionsRepository,
  ) {}

  async create(auth: AuthContext, dto: CreateTransactionDto): Promise<TransactionDto> {
    const { tenantId } = auth;
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
    try {
      return await this.tx.run(auth, async (tx) => {
        const { manager } = tx;
        await this.subscribers.assertExists(manager, tenantId, dto.subscriber_id, 'subscriber_id');
        const row: TransactionRow = {
          id: newId('txn'),
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
          occurredAt: dto.occurred_at ? new Date(dto.occurred_at) : new Date(),
          refundOf: dto.refund_of ?? null,
          metadata: dto.metadata ?? {},
          allocatedAmount: 0,
          refundedAmount: 0,
          createdAt: new Date(),
        };
        if (isRefund) {
          await this.drawRefund(tx, row);
        }
        const transaction = await this.transactions.insert(manager, row);
        const { type, sign } = LEDGER_SIGN[transaction.kind];
        await this.ledger.post(manager, {
          tenantId,
          subscriberId: transaction.subscriberId,
          currency: transaction.currency,
          type,
          amount: sign * transaction.amount,
          sourceId: transaction.id,
        });
        await this.events.append(tx, {
          tenantId,
          type: 'transaction.created',
          subjectId: transaction.id,
          object: TransactionDto.from(transaction),
        });
        return TransactionDto.from(transaction);
      });
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
