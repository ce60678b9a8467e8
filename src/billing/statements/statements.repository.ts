import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** A ledger entry with the names of what it records (the invoice's number, the transaction's reference, the credit note). */
export interface EntryRow {
  id: string;
  type: string;
  amount: string;
  source_id: string;
  created_at: Date;
  invoice_number: string | null;
  transaction_reference: string | null;
  transaction_external_id: string | null;
  transaction_method: string | null;
  credit_note_number: string | null;
}

/** What a statement reads: the ledger (billing `ledger/`'s) and the documents its entries name. Reads only. */
@Injectable()
export class StatementsRepository {
  /** Σ of the account's ledger amounts before `start`: the opening balance. */
  async sumBefore(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    currency: string,
    start: Date,
  ): Promise<number> {
    const [row]: { sum: string | null }[] = await manager.query(
      `SELECT SUM(amount) AS sum FROM ledger_entries
        WHERE tenant_id = $1 AND subscriber_id = $2 AND currency = $3 AND created_at < $4`,
      [tenantId, subscriberId, currency, start],
    );
    return Number(row.sum ?? 0);
  }

  /** The account's entries from `start` (null: the first) to before `end`, in ledger order, at most `limit`. */
  entries(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    currency: string,
    start: Date | null,
    end: Date,
    limit: number,
  ): Promise<EntryRow[]> {
    return manager.query(
      `SELECT e.id, e.type, e.amount, e.source_id, e.created_at, i.number AS invoice_number,
              t.reference AS transaction_reference, t.external_id AS transaction_external_id,
              t.method AS transaction_method, cn.number AS credit_note_number
         FROM ledger_entries e
         LEFT JOIN invoices i ON i.id = e.source_id
         LEFT JOIN transactions t ON t.id = e.source_id
         LEFT JOIN credit_notes cn ON cn.tenant_id = e.tenant_id AND cn.credit_transaction_id = e.source_id
        WHERE e.tenant_id = $1 AND e.subscriber_id = $2 AND e.currency = $3
          AND ($4::timestamptz IS NULL OR e.created_at >= $4) AND e.created_at < $5
        ORDER BY e.created_at, e.id
        LIMIT $6`,
      [tenantId, subscriberId, currency, start, end, limit],
    );
  }

  /** The currencies of the subscriber's ledger. */
  async ledgerCurrencies(manager: EntityManager, tenantId: string, subscriberId: string): Promise<string[]> {
    const rows: { currency: string }[] = await manager.query(
      `SELECT DISTINCT currency FROM ledger_entries WHERE tenant_id = $1 AND subscriber_id = $2 ORDER BY currency`,
      [tenantId, subscriberId],
    );
    return rows.map((row) => row.currency);
  }
}
