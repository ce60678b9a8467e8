import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { paginate } from '../../common/pagination';
import { recordsetInsert } from '../../database/entity-columns';
import { preparedQuery } from '../../database/prepared-query';
import { SqlParams } from '../../database/sql-params';
import { EventsRepository, type EventRecord } from '../../events';
import { ListTransactionsQueryDto } from './dto/transaction.dto';
import { sqlList } from '../ledger/ledger.repository';
import { subscriberProfileOn } from '../profiles/billing-profiles.repository';
import { subscribersTable } from '../../subscribers';
import { ALLOCATABLE_KINDS, Allocation, Transaction } from './transaction.entity';

/** A transaction's stored fields: the entity without what it computes (`autoApply` is true unless said). */
export type TransactionRow = Omit<Transaction, 'unallocatedAmount' | 'autoApply'> &
  Partial<Pick<Transaction, 'autoApply'>>;

/** The transaction columns a write changes (the entity's property names). */
export type TransactionColumn = keyof TransactionRow;

const INSERT_TRANSACTIONS = recordsetInsert(Transaction, 'transactions');
const INSERT_ALLOCATIONS = recordsetInsert(Allocation, 'allocations');

/** The only place the transactions and allocations tables are read and written. */
@Injectable()
export class TransactionsRepository {
  constructor(private readonly events: EventsRepository) {}

  /**
   * A new transaction and its event (`transaction.created`, whose object `objectOf` makes from the transaction), with
   * what the event queues (the outbox), in one statement of the caller's transaction.
   */
  async insertWithEvent(
    manager: EntityManager,
    row: TransactionRow,
    eventOf: (transaction: Transaction) => EventRecord,
  ): Promise<{ transaction: Transaction; deliveries: number }> {
    const transaction = Object.assign(new Transaction(), { ...row, autoApply: row.autoApply ?? true });
    const params = new SqlParams();
    const [rows] = INSERT_TRANSACTIONS.params([transaction]);
    const insert = `transaction_row AS (${INSERT_TRANSACTIONS.at(params.add(rows))} RETURNING 1)`;
    const statement = this.events.statement('transaction_create', params, eventOf(transaction), insert);
    const [result] = await preparedQuery<{ deliveries: number }>(manager, statement, params.values);
    return { transaction, deliveries: result.deliveries };
  }

  async insert(manager: EntityManager, row: TransactionRow): Promise<Transaction> {
    const transaction = manager.create(Transaction, { ...row, autoApply: row.autoApply ?? true });
    await manager.insert(Transaction, transaction);
    return transaction;
  }

  /** Writes `columns` of the in-memory transaction to its row. */
  async update(
    manager: EntityManager,
    transaction: Transaction,
    columns: readonly TransactionColumn[],
  ): Promise<void> {
    const changes = Object.fromEntries(columns.map((column) => [column, transaction[column]]));
    await manager.update(Transaction, { id: transaction.id }, changes);
  }

  async getById(manager: EntityManager, tenantId: string, id: string): Promise<Transaction> {
    const transaction = await manager.findOneBy(Transaction, { tenantId, id });
    if (!transaction) {
      throw ApiError.notFound('transaction', id);
    }
    return transaction;
  }

  /** The tenant's transaction recorded with this external_id (uq_transactions_external_id), or null. */
  findByExternalId(
    manager: EntityManager,
    tenantId: string,
    externalId: string,
  ): Promise<Transaction | null> {
    return manager.findOneBy(Transaction, { tenantId, externalId });
  }

  /** The tenant's transaction with this id, row-locked until the transaction ends; null when there is none. */
  findForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<Transaction | null> {
    return manager.findOne(Transaction, { where: { tenantId, id }, lock: { mode: 'pessimistic_write' } });
  }

  async lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<Transaction> {
    const transaction = await this.findForUpdate(manager, tenantId, id);
    if (!transaction) {
      throw ApiError.notFound('transaction', id);
    }
    return transaction;
  }

  page(
    manager: EntityManager,
    tenantId: string,
    query: ListTransactionsQueryDto,
  ): Promise<Page<Transaction>> {
    const qb = manager
      .getRepository(Transaction)
      .createQueryBuilder('txn')
      .where('txn.tenantId = :tenantId', { tenantId });
    if (query.subscriber_id) {
      qb.andWhere('txn.subscriberId = :subscriberId', { subscriberId: query.subscriber_id });
    }
    if (query.kind) {
      qb.andWhere('txn.kind IN (:...kinds)', { kinds: query.kind });
    }
    if (query.source) {
      qb.andWhere('txn.source IN (:...sources)', { sources: query.source });
    }
    if (query.external_id) {
      qb.andWhere('txn.externalId = :externalId', { externalId: query.external_id });
    }
    if (query.occurred_gte) {
      qb.andWhere('txn.occurredAt >= :occurredGte', { occurredGte: new Date(query.occurred_gte) });
    }
    if (query.occurred_lt) {
      qb.andWhere('txn.occurredAt < :occurredLt', { occurredLt: new Date(query.occurred_lt) });
    }
    return paginate(qb, query);
  }

  /**
   * The payments and credits with money not yet applied, of these accounts (subscriber and currency) of the tenant,
   * not left for an allocation by hand (their own auto_apply), whose subscriber's billing profile (its own, else the
   * tenant's default; none counts as on) has auto_apply on:
   * row-locked in id order, so two callers queue instead of deadlocking. One statement, served by the partial index of
   * unallocated money; no rows when none of the accounts has any.
   */
  lockAutoApplicable(
    manager: EntityManager,
    tenantId: string,
    accounts: { subscriberId: string; currency: string }[],
  ): Promise<Transaction[]> {
    if (accounts.length === 0) {
      return Promise.resolve([]);
    }
    return manager
      .createQueryBuilder(Transaction, 't')
      .where('t.tenantId = :tenantId', { tenantId })
      .andWhere('t.kind IN (:...kinds)', { kinds: ALLOCATABLE_KINDS })
      .andWhere('t.amount > t.allocatedAmount + t.refundedAmount AND t.autoApply = true')
      .andWhere(
        '(t.subscriberId, t.currency) IN (SELECT * FROM unnest(CAST(:subscribers AS text[]), CAST(:currencies AS text[])))',
        {
          subscribers: accounts.map((account) => account.subscriberId),
          currencies: accounts.map((account) => account.currency),
        },
      )
      .andWhere(
        `COALESCE((SELECT p.auto_apply FROM ${subscribersTable('s')} JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
          WHERE s.tenant_id = t.tenant_id AND s.id = t.subscriber_id), true)`,
      )
      .orderBy('t.id', 'ASC')
      .setLock('pessimistic_write')
      .getMany();
  }

  /** Writes the allocations in one statement; returns them as entities. */
  async insertAllocations(manager: EntityManager, rows: Allocation[]): Promise<Allocation[]> {
    const allocations = rows.map((row) => Object.assign(new Allocation(), row));
    if (allocations.length > 0) {
      await manager.query(INSERT_ALLOCATIONS.sql, INSERT_ALLOCATIONS.params(allocations));
    }
    return allocations;
  }

  /**
   * The CTEs of an application of money written as part of a larger statement (AllocatePaymentUseCase.applyPlans): the
   * new allocations, and the in-memory allocated amounts of these transactions of the tenant; their parameters added
   * to `params`.
   */
  appliedCtes(
    params: SqlParams,
    tenantId: string,
    allocations: readonly Allocation[],
    transactions: readonly Transaction[],
  ): string[] {
    const [rows] = INSERT_ALLOCATIONS.params(allocations);
    return [
      `allocations_made AS (${INSERT_ALLOCATIONS.at(params.add(rows))} RETURNING 1)`,
      `transactions_allocated AS (UPDATE transactions t SET allocated_amount = v.allocated
         FROM unnest(${params.add(
           transactions.map((transaction) => transaction.id),
           'text[]',
         )},
                     ${params.add(
                       transactions.map((transaction) => String(transaction.allocatedAmount)),
                       'bigint[]',
                     )}) AS v(id, allocated)
        WHERE t.tenant_id = ${params.add(tenantId)} AND t.id = v.id RETURNING 1)`,
    ];
  }

  /**
   * Gives back `amount` of what a payment allocated to an invoice, newest allocation first (an allocation brought to
   * 0 is removed), and lowers the payment's allocated amount in memory and in its row: the one change an allocation
   * ever takes, when a credit note pays part of a paid invoice back out of that payment (docs/decisions.md).
   */
  async releaseFromInvoice(
    manager: EntityManager,
    payment: Transaction,
    invoiceId: string,
    amount: number,
  ): Promise<void> {
    const rows = await manager.find(Allocation, {
      where: { tenantId: payment.tenantId, transactionId: payment.id, invoiceId },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
    let left = amount;
    for (const row of rows) {
      if (left === 0) {
        break;
      }
      const taken = Math.min(left, row.amount);
      left -= taken;
      if (taken === row.amount) {
        await manager.delete(Allocation, { id: row.id });
      } else {
        await manager.update(Allocation, { id: row.id }, { amount: row.amount - taken });
      }
    }
    if (left > 0) {
      throw new Error(`payment ${payment.id} has less than ${amount} allocated to invoice ${invoiceId}`);
    }
    payment.allocatedAmount -= amount;
    await this.update(manager, payment, ['allocatedAmount']);
  }

  /** What a transaction allocated to an invoice. */
  async allocatedTo(
    manager: EntityManager,
    tenantId: string,
    transactionId: string,
    invoiceId: string,
  ): Promise<number> {
    const [row]: { sum: string | null }[] = await manager.query(
      `SELECT SUM(amount) AS sum FROM allocations WHERE tenant_id = $1 AND transaction_id = $2 AND invoice_id = $3`,
      [tenantId, transactionId, invoiceId],
    );
    return Number(row.sum ?? 0);
  }

  /** A transaction's allocations, oldest first. */
  allocationsOfTransaction(
    manager: EntityManager,
    tenantId: string,
    transactionId: string,
  ): Promise<Allocation[]> {
    return manager.find(Allocation, {
      where: { tenantId, transactionId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** What was allocated to an invoice, oldest first. */
  allocationsOfInvoice(manager: EntityManager, tenantId: string, invoiceId: string): Promise<Allocation[]> {
    return manager.find(Allocation, {
      where: { tenantId, invoiceId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** Several transactions in one statement (a bill run batch's credits). */
  async insertMany(manager: EntityManager, rows: TransactionRow[]): Promise<void> {
    if (rows.length > 0) {
      // A row built as `new Transaction()` carries every declared field, undefined ones too: default after the spread.
      const full = rows.map((row) => ({ ...row, autoApply: row.autoApply ?? true }));
      await manager.query(INSERT_TRANSACTIONS.sql, INSERT_TRANSACTIONS.params(full as Transaction[]));
    }
  }

  /** The subscriber's payments and credits in `currency` not applied yet that auto-apply may spend (not hand-held). */
  async autoApplicableSum(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    currency: string,
  ): Promise<number> {
    const [row]: { sum: string | null }[] = await manager.query(
      `SELECT SUM(amount - allocated_amount - refunded_amount) AS sum FROM transactions
        WHERE tenant_id = $1 AND subscriber_id = $2 AND currency = $3 AND kind IN (${sqlList(ALLOCATABLE_KINDS)})
          AND auto_apply AND amount > allocated_amount + refunded_amount`,
      [tenantId, subscriberId, currency],
    );
    return Number(row.sum ?? 0);
  }

  /** Deletes every row of the tenant in allocations, transactions, in that order: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['allocations', 'transactions']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
