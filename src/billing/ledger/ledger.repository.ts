import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { RenderedPage } from '../../common/envelope/envelope';
import { PageQueryDto } from '../../common/pagination';
import {
  type Condition,
  isoTimestampSql,
  type RenderedList,
  renderedPage,
} from '../../database/rendered-page';
import { PAYABLE_STATUSES } from '../invoices/invoice.entity';
import { ALLOCATABLE_KINDS } from '../transactions/transaction.entity';
import { LedgerEntry, type LedgerEntryType } from './ledger-entry.entity';

/** One entry of a batch posting. */
export interface LedgerRow {
  id: string;
  tenantId: string;
  subscriberId: string;
  currency: string;
  type: LedgerEntryType;
  amount: number;
  sourceId: string;
  createdAt: Date;
}

/** One subscriber's account in one currency. */
export interface BalanceKey {
  tenantId: string;
  subscriberId: string;
  currency: string;
}

/** The sums the balance endpoint reports beside the balance. */
export type BalanceSum = 'open_invoices_due' | 'unallocated_credit';

export interface CurrencyBalance {
  currency: string;
  balance: number;
  open_invoices_due: number;
  unallocated_credit: number;
}

/** A SQL list of the entities' own enum values, so a status or kind is named in one place. */
export const sqlList = (values: readonly string[]): string =>
  values.map((value) => `'${value.replace(/'/g, "''")}'`).join(', ');

/** Each sum's definition, shared by the balance endpoint and the guards of post(). */
const SUMS: Record<BalanceSum, { expression: string; from: string; where: string }> = {
  open_invoices_due: {
    expression: 'SUM(total - amount_paid)',
    from: 'invoices',
    where: `status IN (${sqlList(PAYABLE_STATUSES)})`,
  },
  unallocated_credit: {
    expression: 'SUM(amount - allocated_amount - refunded_amount)',
    from: 'transactions',
    where: `kind IN (${sqlList(ALLOCATABLE_KINDS)})`,
  },
};

/** The sum over one subscriber's rows ($1 tenant, $2 subscriber) in the currency `currency` names; 0 when none. */
function sumSql(sum: BalanceSum, currency: string): string {
  const { expression, from, where } = SUMS[sum];
  return `COALESCE((SELECT ${expression} FROM ${from}
    WHERE tenant_id = $1 AND subscriber_id = $2 AND currency = ${currency} AND ${where}), 0)`;
}

const BALANCES_SQL = `WITH currencies AS (
    SELECT currency FROM subscriber_balances WHERE tenant_id = $1 AND subscriber_id = $2
    UNION SELECT currency FROM invoices WHERE tenant_id = $1 AND subscriber_id = $2
  )
  SELECT c.currency,
    COALESCE((SELECT balance FROM subscriber_balances b
              WHERE b.tenant_id = $1 AND b.subscriber_id = $2 AND b.currency = c.currency), 0) AS balance,
    ${sumSql('open_invoices_due', 'c.currency')} AS open_invoices_due,
    ${sumSql('unallocated_credit', 'c.currency')} AS unallocated_credit
  FROM currencies c ORDER BY c.currency`;

/**
 * The list, each entry LedgerEntryDto.from as Postgres renders it, field for field (test/api/list-rendering.e2e-spec.ts
 * holds the two to the same answer). Amounts are bigint, rendered as JSON numbers: every balance stays within 2^53 - 1.
 */
const LEDGER_LIST: RenderedList = {
  name: 'ledger_page',
  table: 'ledger_entries',
  alias: 'l',
  item: `json_build_object(
    'id', l.id, 'type', l.type, 'currency', l.currency, 'amount', l.amount, 'balance_after', l.balance_after,
    'source_id', l.source_id, 'created_at', ${isoTimestampSql('l.created_at')})`,
};

/** The only place ledger_entries and subscriber_balances are read and written, and the balance sums computed. */
@Injectable()
export class LedgerRepository {
  /**
   * Adds `amount` to the balance row with one atomic upsert, which holds the row lock until commit, so concurrent
   * postings for one subscriber and currency queue up. Null when the new balance would pass `limit` in magnitude.
   */
  async addToBalance(
    manager: EntityManager,
    key: BalanceKey,
    amount: number,
    limit: number,
  ): Promise<number | null> {
    const rows: { balance: string }[] = await manager.query(
      `INSERT INTO subscriber_balances (tenant_id, subscriber_id, currency, balance) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, subscriber_id, currency) DO UPDATE SET balance = subscriber_balances.balance + EXCLUDED.balance
         WHERE abs(subscriber_balances.balance + EXCLUDED.balance) <= $5
       RETURNING balance`,
      [key.tenantId, key.subscriberId, key.currency, amount, limit],
    );
    return rows.length === 0 ? null : Number(rows[0].balance);
  }

  /** The subscriber's balances above 0 (what it owes), per currency, in currency order. */
  async owed(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
  ): Promise<{ currency: string; balance: number }[]> {
    const rows: { currency: string; balance: string }[] = await manager.query(
      `SELECT currency, balance FROM subscriber_balances
        WHERE tenant_id = $1 AND subscriber_id = $2 AND balance > 0 ORDER BY currency`,
      [tenantId, subscriberId],
    );
    return rows.map((row) => ({ currency: row.currency, balance: Number(row.balance) }));
  }

  /**
   * Inserts the entry unless the subscriber's `sum` in its currency (the posting's own rows, written before, counted)
   * is past `limit`, in one statement: true when it is (nothing written; the caller's transaction must not go on).
   * Run after the posting's addToBalance, whose row lock makes concurrent postings' rows visible to its snapshot.
   */
  async insertEntryWithin(
    manager: EntityManager,
    sum: BalanceSum,
    row: LedgerEntry,
    limit: number,
  ): Promise<boolean> {
    const [result]: { over: boolean }[] = await manager.query(
      `WITH guard AS (SELECT ${sumSql(sum, '$3')} > $4 AS over),
       entry AS (
         INSERT INTO ledger_entries (tenant_id, id, subscriber_id, currency, type, amount, balance_after, source_id,
                                     created_at)
         SELECT $1, $5, $2, $3, $6, $7, $8, $9, $10 FROM guard WHERE NOT guard.over RETURNING 1)
       SELECT over FROM guard`,
      [
        row.tenantId,
        row.subscriberId,
        row.currency,
        limit,
        row.id,
        row.type,
        row.amount,
        row.balanceAfter,
        row.sourceId,
        row.createdAt,
      ],
    );
    return result.over;
  }

  async insertEntry(manager: EntityManager, row: LedgerEntry): Promise<LedgerEntry> {
    const entry = manager.create(LedgerEntry, row);
    await manager.insert(LedgerEntry, entry);
    return entry;
  }

  /** A page of the subscriber's ledger, newest first, each entry rendered by Postgres as LedgerEntryDto. */
  page(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    query: PageQueryDto,
  ): Promise<RenderedPage> {
    const conditions: Condition[] = [
      { sql: 'l.tenant_id = ?', values: [tenantId], indexed: true },
      { sql: 'l.subscriber_id = ?', values: [subscriberId], indexed: true },
    ];
    return renderedPage(manager, LEDGER_LIST, conditions, query);
  }

  /** Per currency the subscriber has a balance or invoices in: the balance and both sums. */
  async balances(manager: EntityManager, tenantId: string, subscriberId: string): Promise<CurrencyBalance[]> {
    const rows: Record<keyof CurrencyBalance, string>[] = await manager.query(BALANCES_SQL, [
      tenantId,
      subscriberId,
    ]);
    return rows.map((row) => ({
      currency: row.currency,
      balance: Number(row.balance),
      open_invoices_due: Number(row.open_invoices_due),
      unallocated_credit: Number(row.unallocated_credit),
    }));
  }

  /**
   * Many entries and their balances in one statement (a bill run batch: at most one entry per subscriber and
   * currency): each balance row is raised by an upsert guarded as addToBalance's is, and its entry records the
   * balance after. False when a balance would pass `limit` in magnitude: then nothing was written of the statement
   * and the caller's transaction must not go on.
   */
  async postMany(manager: EntityManager, entries: LedgerRow[], limit: number): Promise<boolean> {
    if (entries.length === 0) {
      return true;
    }
    const rows: { posted: number }[] = await manager.query(
      `WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id text, tenant_id text, subscriber_id text, currency text,
           type text, amount bigint, source_id text, created_at timestamptz)),
       balance AS (
         INSERT INTO subscriber_balances (tenant_id, subscriber_id, currency, balance)
         SELECT tenant_id, subscriber_id, currency, amount FROM input
         ON CONFLICT (tenant_id, subscriber_id, currency)
           DO UPDATE SET balance = subscriber_balances.balance + EXCLUDED.balance
           WHERE abs(subscriber_balances.balance + EXCLUDED.balance) <= $2
         RETURNING tenant_id, subscriber_id, currency, balance),
       posted AS (
         INSERT INTO ledger_entries (tenant_id, id, subscriber_id, currency, type, amount, balance_after, source_id, created_at)
         SELECT i.tenant_id, i.id, i.subscriber_id, i.currency, i.type, i.amount, b.balance, i.source_id, i.created_at
           FROM input i JOIN balance b USING (tenant_id, subscriber_id, currency)
         RETURNING 1)
       SELECT count(*)::int AS posted FROM posted`,
      [
        JSON.stringify(
          entries.map((entry) => ({
            id: entry.id,
            tenant_id: entry.tenantId,
            subscriber_id: entry.subscriberId,
            currency: entry.currency,
            type: entry.type,
            amount: entry.amount,
            source_id: entry.sourceId,
            created_at: entry.createdAt,
          })),
        ),
        limit,
      ],
    );
    return rows[0].posted === entries.length;
  }

  /** Deletes every row of the tenant in ledger_entries, subscriber_balances, in that order: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['ledger_entries', 'subscriber_balances']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
