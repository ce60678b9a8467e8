import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RenderedPage } from '../../common/envelope/envelope';
import { Clock } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { MAX_AMOUNT } from '../../common/money';
import { PageQueryDto } from '../../common/pagination';
import { LedgerEntry, LedgerEntryType } from './ledger-entry.entity';
import { BalanceSum, CurrencyBalance, LedgerRepository } from './ledger.repository';

export interface LedgerPosting {
  tenantId: string;
  subscriberId: string;
  currency: string;
  type: LedgerEntryType;
  /** Signed: positive raises what the subscriber owes. */
  amount: number;
  sourceId: string;
}

/** The sums of GET /subscribers/{id}/balance a posting of each type raises (the row it records is already written). */
const SUM_GUARDS: Partial<Record<LedgerEntryType, { sum: BalanceSum; what: string; field: string }>> = {
  [LedgerEntryType.Invoice]: { sum: 'open_invoices_due', what: 'open invoices due', field: 'lines' },
  [LedgerEntryType.Payment]: { sum: 'unallocated_credit', what: 'unallocated credit', field: 'amount' },
  [LedgerEntryType.Credit]: { sum: 'unallocated_credit', what: 'unallocated credit', field: 'amount' },
};

@Injectable()
export class LedgerService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly entries: LedgerRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Appends an entry in the caller's transaction. The balance row is updated with one atomic upsert, which also holds
   * its row lock until commit, so concurrent postings for one subscriber and currency queue up and never lose a sum.
   */
  async post(manager: EntityManager, posting: LedgerPosting): Promise<LedgerEntry> {
    const balance = await this.entries.addToBalance(manager, posting, posting.amount, MAX_AMOUNT);
    // Money stays exact in JavaScript only up to 2^53 - 1: a posting that would take the balance past it is refused.
    if (balance === null) {
      throw new ApiError(
        'validation_failed',
        `This would take the subscriber's ${posting.currency} balance beyond ${MAX_AMOUNT}, the largest amount kept.`,
        'amount',
      );
    }
    const now = this.clock.now();
    const entry = Object.assign(new LedgerEntry(), {
      id: newId('led', now),
      tenantId: posting.tenantId,
      subscriberId: posting.subscriberId,
      currency: posting.currency,
      type: posting.type,
      amount: posting.amount,
      balanceAfter: balance,
      sourceId: posting.sourceId,
      createdAt: now,
    });
    // The balance endpoint also sums what open invoices ask and what payments and credits leave unallocated; a
    // posting that raises one of those sums past MAX_AMOUNT is refused like one that would overflow the balance. The
    // entry's statement checks it, under the balance row lock addToBalance took, so concurrent postings of this
    // subscriber and currency see each other's rows.
    const guard = SUM_GUARDS[posting.type];
    if (!guard) {
      return this.entries.insertEntry(manager, entry);
    }
    if (await this.entries.insertEntryWithin(manager, guard.sum, entry, MAX_AMOUNT)) {
      throw new ApiError(
        'validation_failed',
        `This would take the subscriber's ${guard.what} in ${posting.currency} beyond ${MAX_AMOUNT}, the largest amount kept.`,
        guard.field,
      );
    }
    return entry;
  }

  /** What the subscriber owes, per currency with a balance above 0, read in the caller's transaction. */
  owed(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
  ): Promise<{ currency: string; balance: number }[]> {
    return this.entries.owed(manager, tenantId, subscriberId);
  }

  list(tenantId: string, subscriberId: string, query: PageQueryDto): Promise<RenderedPage> {
    return this.entries.page(this.dataSource.manager, tenantId, subscriberId, query);
  }

  /** Per currency: the ledger balance, what open invoices still ask, and payments or credits not yet allocated. */
  balances(tenantId: string, subscriberId: string): Promise<CurrencyBalance[]> {
    return this.entries.balances(this.dataSource.manager, tenantId, subscriberId);
  }
}
