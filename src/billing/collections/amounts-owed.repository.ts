import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PAYABLE_STATUSES } from '../invoices/invoice.entity';
import { sqlList } from '../ledger/ledger.repository';
import { ALLOCATABLE_KINDS } from '../transactions/transaction.entity';

/** The payable statuses as an SQL list: the invoices something is owed on. */
export const PAYABLE = sqlList(PAYABLE_STATUSES);

/** The sources of the charges that are fees (issue 28, item 9). */
const FEE_SOURCES = sqlList(['late_fee', 'reconnection_fee']);

/** The same account (tenant, subscriber, currency) in two aliases. */
const sameAccount = (a: string, b: string): string =>
  `${a}.tenant_id = ${b}.tenant_id AND ${a}.subscriber_id = ${b}.subscriber_id AND ${a}.currency = ${b}.currency`;

/** SQL: the money an account has received and not applied (0 when none), for a correlated subquery. */
export function unappliedOf(tenantId: string, subscriberId: string, currency: string): string {
  return `COALESCE((SELECT SUM(t.amount - t.allocated_amount - t.refunded_amount) FROM transactions t
     WHERE t.tenant_id = ${tenantId} AND t.subscriber_id = ${subscriberId} AND t.currency = ${currency}
       AND t.kind IN (${sqlList(ALLOCATABLE_KINDS)}) AND t.amount > t.allocated_amount + t.refunded_amount), 0)`;
}

/**
 * SQL: what is really owed on the payable invoice of alias `c` (its tenant_id, subscriber_id, currency, due_date,
 * sequence, total and amount_paid), owed when > 0: what is left of it once the money its account received and not yet
 * applied is applied to the account's payable invoices (those due before `dueBefore` when given) oldest due first (then
 * the series' order), the order auto-apply and `oldest_first` use. That is `LEAST(amount due, short)`, where `short` is how far
 * the invoices up to it in that order exceed the money. Evaluated per invoice (two index probes: the account's payable
 * invoices, ix_invoices_tenant_subscriber_status, and its money, ix_transactions_unallocated), so a query pays for the
 * invoices it judges, not for the invoices in the database.
 */
export function owedOf(c: string, dueBefore: string | null): string {
  return `LEAST(${c}.total - ${c}.amount_paid,
    (SELECT SUM(u.total - u.amount_paid) FROM invoices u
      WHERE ${sameAccount('u', c)} AND u.status IN (${PAYABLE})
        AND (u.due_date, u.sequence, u.id) <= (${c}.due_date, ${c}.sequence, ${c}.id)${dueBefore ? ` AND u.due_date < ${dueBefore}` : ''})
    - ${unappliedOf(`${c}.tenant_id`, `${c}.subscriber_id`, `${c}.currency`)})`;
}

/**
 * What a subscriber really owes (docs/automation.md): payable invoices less the money received and not yet applied in
 * their currency, applied oldest due first. The SQL of that judgement (owedOf, unappliedOf) is shared with the sweeps
 * (collections.repository.ts); the questions here are about one subscriber. Writes nothing.
 */
@Injectable()
export class AmountsOwedRepository {
  /** Whether the subscriber really owes, in some currency, invoices past their due date (before `today`). */
  async owesPastDue(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    today: string,
  ): Promise<boolean> {
    const [row]: { owes: boolean }[] = await manager.query(
      `SELECT EXISTS (
         SELECT 1 FROM (
           SELECT tenant_id, subscriber_id, currency, SUM(total - amount_paid) AS due FROM invoices
            WHERE tenant_id = $1 AND subscriber_id = $2 AND status IN (${PAYABLE}) AND due_date < $3::date
            GROUP BY tenant_id, subscriber_id, currency) g
          WHERE g.due > ${unappliedOf('g.tenant_id', 'g.subscriber_id', 'g.currency')}) AS owes`,
      [tenantId, subscriberId, today],
    );
    return row.owes;
  }

  /**
   * Whether the subscriber still owes fees (fees_before_restoration): an open invoice carrying late fee or reconnection
   * fee lines whose fee part is really owed (owedOf; money received pays an invoice's fee lines first), or pending
   * fee charges in a currency beyond the money received and not yet needed by its open invoices.
   */
  async owesFees(manager: EntityManager, tenantId: string, subscriberId: string): Promise<boolean> {
    const [row]: { owes: boolean }[] = await manager.query(
      `WITH candidates AS (
         SELECT tenant_id, id, subscriber_id, currency, due_date, number, sequence, total, amount_paid, lines FROM invoices
          WHERE tenant_id = $1 AND subscriber_id = $2 AND status IN (${PAYABLE})),
       fee_invoices AS (
         SELECT c.id, c.total, ${owedOf('c', null)} AS owed, SUM((l.line->>'amount')::bigint) AS fees
           FROM candidates c CROSS JOIN LATERAL jsonb_array_elements(c.lines) AS l(line)
           JOIN charges f ON f.tenant_id = c.tenant_id AND f.id = l.line->>'charge_id' AND f.source IN (${FEE_SOURCES})
          GROUP BY c.tenant_id, c.id, c.subscriber_id, c.currency, c.due_date, c.number, c.sequence, c.total, c.amount_paid),
       pending AS (
         SELECT tenant_id, subscriber_id, currency, SUM(amount) AS amount FROM charges
          WHERE tenant_id = $1 AND subscriber_id = $2 AND status = 'pending' AND source IN (${FEE_SOURCES})
          GROUP BY tenant_id, subscriber_id, currency)
       SELECT EXISTS (SELECT 1 FROM fee_invoices f WHERE f.owed > 0 AND f.owed > f.total - f.fees)
           OR EXISTS (SELECT 1 FROM pending p
                       WHERE p.amount > ${unappliedOf('p.tenant_id', 'p.subscriber_id', 'p.currency')}
                             - COALESCE((SELECT SUM(c.total - c.amount_paid) FROM candidates c
                                          WHERE c.currency = p.currency), 0)) AS owes`,
      [tenantId, subscriberId],
    );
    return row.owes;
  }
}
