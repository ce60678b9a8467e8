import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { MAX_AMOUNT } from '../../common/money';
import { paginate, PageQueryDto } from '../../common/pagination';
import { LedgerEntry, LedgerEntryType } from './ledger-entry.entity';

export interface LedgerPosting {
  tenantId: string;
  subscriberId: string;
  currency: string;
  type: LedgerEntryType;
  /** Signed: positive raises what the subscriber owes. */
  amount: number;
  sourceId: string;
}

export interface CurrencyBalance {
  currency: string;
  balance: number;
  open_invoices_due: number;
  unallocated_credit: number;
}

/** The sums of GET /subscribers/{id}/balance a posting of each type raises (the row it records is already written). */
const SUM_GUARDS: Partial<
  Record<LedgerEntryType, { what: string; field: string; expression: string; from: string; where: string }>
> = {
  [LedgerEntryType.Invoice]: {
    what: 'open invoices due',
    field: 'lines',
    expression: 'SUM(total - amount_paid)',
    from: 'invoices',
    where: `status IN ('open', 'partially_paid')`,
  },
  [LedgerEntryType.Payment]: {
    what: 'unallocated credit',
    field: 'amount',
    expression: 'SUM(amount - allocated_amount - refunded_amount)',
    from: 'transactions',
    where: `kind IN ('payment', 'credit')`,
  },
};
SUM_GUARDS[LedgerEntryType.Credit] = SUM_GUARDS[LedgerEntryType.Payment];

@Injectable()
export class LedgerService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Appends an entry in the caller's transaction. The balance row is updated with one atomic upsert, which also holds
   * its row lock until commit, so concurrent postings for one subscriber and currency queue up and never lose a sum.
   */
  async post(manager: EntityManager, posting: LedgerPosting): Promise<LedgerEntry> {
    const rows: { balance: string }[] = await manager.query(
      `INSERT INTO subscriber_balances (tenant_id, subscriber_id, currency, balance) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, subscriber_id, currency) DO UPDATE SET balance = subscriber_balances.balance + EXCLUDED.balance
         WHERE abs(subscriber_balances.balance + EXCLUDED.balance) <= $5
       RETURNING balance`,
      [posting.tenantId, posting.subscriberId, posting.currency, posting.amount, MAX_AMOUNT],
    );
    // Money stays exact in JavaScript only up to 2^53 - 1: a posting that would take the balance past it is refused.
    if (rows.length === 0) {
      throw new ApiError(
        'validation_failed',
        `This would take the subscriber's ${posting.currency} balance beyond ${MAX_AMOUNT}, the largest amount kept.`,
        'amount',
      );
    }
    await this.assertSumsSafe(manager, posting);
    const entry = manager.create(LedgerEntry, {
      id: newId('led'),
      tenantId: posting.tenantId,
      subscriberId: posting.subscriberId,
      currency: posting.currency,
      type: posting.type,
      amount: posting.amount,
      balanceAfter: Number(rows[0].balance),
      sourceId: posting.sourceId,
      createdAt: new Date(),
    });
    await manager.insert(LedgerEntry, entry);
    return entry;
  }

  /**
   * The balance endpoint also sums what open invoices ask and what payments and credits leave unallocated; a posting
   * that raises one of those sums past MAX_AMOUNT is refused like one that would overflow the balance. It runs under
   * the balance row lock post() holds, so concurrent postings of this subscriber and currency see each other's rows.
   */
  private async assertSumsSafe(manager: EntityManager, posting: LedgerPosting): Promise<void> {
    const sum = SUM_GUARDS[posting.type];
    if (!sum) return;
    const [row]: { over: boolean }[] = await manager.query(
      `SELECT COALESCE(${sum.expression}, 0) > $4 AS over FROM ${sum.from}
       WHERE tenant_id = $1 AND subscriber_id = $2 AND currency = $3 AND ${sum.where}`,
      [posting.tenantId, posting.subscriberId, posting.currency, MAX_AMOUNT],
    );
    if (row.over) {
      throw new ApiError(
        'validation_failed',
        `This would take the subscriber's ${sum.what} in ${posting.currency} beyond ${MAX_AMOUNT}, the largest amount kept.`,
        sum.field,
      );
    }
  }

  list(tenantId: string, subscriberId: string, query: PageQueryDto): Promise<Page<LedgerEntry>> {
    const qb = this.dataSource
      .getRepository(LedgerEntry)
      .createQueryBuilder('entry')
      .where('entry.tenantId = :tenantId AND entry.subscriberId = :subscriberId', { tenantId, subscriberId });
    return paginate(qb, query);
  }

  /** Per currency: the ledger balance, what open invoices still ask, and payments or credits not yet allocated. */
  async balances(tenantId: string, subscriberId: string): Promise<CurrencyBalance[]> {
    const rows: {
      currency: string;
      balance: string;
      open_invoices_due: string;
      unallocated_credit: string;
    }[] = await this.dataSource.query(
      `WITH currencies AS (
           SELECT currency FROM subscriber_balances WHERE tenant_id = $1 AND subscriber_id = $2
           UNION SELECT currency FROM invoices WHERE tenant_id = $1 AND subscriber_id = $2
         )
         SELECT c.currency,
           COALESCE((SELECT balance FROM subscriber_balances b
                     WHERE b.tenant_id = $1 AND b.subscriber_id = $2 AND b.currency = c.currency), 0) AS balance,
           COALESCE((SELECT SUM(total - amount_paid) FROM invoices i
                     WHERE i.tenant_id = $1 AND i.subscriber_id = $2 AND i.currency = c.currency
                       AND i.status IN ('open', 'partially_paid')), 0) AS open_invoices_due,
           COALESCE((SELECT SUM(amount - allocated_amount - refunded_amount) FROM transactions t
                     WHERE t.tenant_id = $1 AND t.subscriber_id = $2 AND t.currency = c.currency
                       AND t.kind IN ('payment', 'credit')), 0) AS unallocated_credit
         FROM currencies c ORDER BY c.currency`,
      [tenantId, subscriberId],
    );
    return rows.map((row) => ({
      currency: row.currency,
      balance: Number(row.balance),
      open_invoices_due: Number(row.open_invoices_due),
      unallocated_credit: Number(row.unallocated_credit),
    }));
  }
}
