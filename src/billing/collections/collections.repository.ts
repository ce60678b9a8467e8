import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { SubscriberStatus } from '../../subscribers';
import { Invoice, PAYABLE_STATUSES } from '../invoices/invoice.entity';
import { sqlList } from '../ledger/ledger.repository';
import { subscriberProfileOn } from '../profiles/billing-profiles.repository';
import { ALLOCATABLE_KINDS } from '../transactions/transaction.entity';

/**
 * A condition a caller adds to a collections query about one subject: given the SQL of the subject's tenant id and of
 * its key (an invoice id, a subscriber id, `<invoice id>:<offset>`), a boolean SQL expression without parameters.
 * Automation passes "the rule is on for the tenant and has not had its once-only effect on the subject", read from its
 * own tables, so the LIMIT of a sweep only counts subjects still to act on.
 */
export type SubjectFilter = (tenantId: string, subject: string) => string;

/**
 * An invoice that earns a late fee: past due_date + the late fee's after_days of its subscriber's profile, without a
 * late fee yet, and `base`, its overdue amount that a fee is reckoned on, above 0.
 */
export interface LateFeeDue {
  tenantId: string;
  subscriberId: string;
  invoiceId: string;
  number: number;
  currency: string;
  base: number;
}

/** The sources of the charges that are fees (issue 28, item 9). */
const FEE_SOURCES = sqlList(['late_fee', 'reconnection_fee']);

/** A reminder due: the invoice, the latest offset whose day has come, and what is really owed on it. */
export interface DueReminder {
  invoice: Invoice;
  offsetDays: number;
  amountDue: number;
}

const PAYABLE = sqlList(PAYABLE_STATUSES);

/** The same account (tenant, subscriber, currency) in two aliases. */
const sameAccount = (a: string, b: string): string =>
  `${a}.tenant_id = ${b}.tenant_id AND ${a}.subscriber_id = ${b}.subscriber_id AND ${a}.currency = ${b}.currency`;

/**
 * CTEs over `candidates` (tenant_id, id, subscriber_id, currency of invoices), for what is really owed on each:
 * `unapplied`, the money received and not yet applied per account (payments and credits, less what is allocated or
 * refunded), and `owed`, per payable invoice of those accounts (those due before `dueBefore` when given), what is
 * left of it once that money is applied oldest due first (then number), the order auto-apply and `oldest_first` use:
 * `short`, how far the invoices up to it exceed the money, and `owed = LEAST(amount due, short)`, owed when > 0.
 */
function owedCtes(dueBefore: string | null): string {
  return `accounts AS (SELECT DISTINCT tenant_id, subscriber_id, currency FROM candidates),
  unapplied AS (
    SELECT t.tenant_id, t.subscriber_id, t.currency, SUM(t.amount - t.allocated_amount - t.refunded_amount) AS amount
      FROM transactions t JOIN accounts a ON ${sameAccount('t', 'a')}
     WHERE t.kind IN (${sqlList(ALLOCATABLE_KINDS)}) AND t.amount > t.allocated_amount + t.refunded_amount
     GROUP BY t.tenant_id, t.subscriber_id, t.currency),
  running AS (
    SELECT i.id, i.total - i.amount_paid AS due,
           SUM(i.total - i.amount_paid) OVER (PARTITION BY i.tenant_id, i.subscriber_id, i.currency
             ORDER BY i.due_date, i.number) - COALESCE(u.amount, 0) AS short
      FROM invoices i JOIN accounts a ON ${sameAccount('i', 'a')} LEFT JOIN unapplied u ON ${sameAccount('i', 'u')}
     WHERE i.status IN (${PAYABLE})${dueBefore ? ` AND i.due_date < ${dueBefore}` : ''}),
  owed AS (SELECT id, LEAST(due, short) AS owed FROM running WHERE short > 0)`;
}

/**
 * What a subscriber really owes, for dunning (docs/automation.md): past-due amounts of payable invoices less the money
 * received and not yet applied in their currency. Reads invoices, transactions, billing profiles and subscribers;
 * writes nothing. The only place these reads are made: automation asks through CollectionsService.
 */
@Injectable()
export class CollectionsRepository {
  /**
   * Payable invoices due before `today` that are really owed (the money not yet applied does not cover them, oldest
   * due first) and pass `filter`, oldest due first: at most `limit`, row-locked, skipping those another transaction
   * holds.
   */
  async overdueInvoices(
    manager: EntityManager,
    today: string,
    limit: number,
    filter: SubjectFilter,
  ): Promise<Invoice[]> {
    const rows: { id: string }[] = await manager.query(
      `WITH candidates AS (
         SELECT i.tenant_id, i.id, i.subscriber_id, i.currency, i.due_date FROM invoices i
          WHERE i.status IN (${PAYABLE}) AND i.due_date < $1::date AND ${filter('i.tenant_id', 'i.id')}),
       ${owedCtes('$1::date')}
       SELECT c.id FROM candidates c JOIN owed o ON o.id = c.id ORDER BY c.due_date, c.id LIMIT $2`,
      [today, limit],
    );
    if (rows.length === 0) {
      return [];
    }
    // Locked by a second statement, which reads each row again: one paid meanwhile is not payable any more.
    return manager
      .createQueryBuilder(Invoice, 'i')
      .where('i.id IN (:...ids) AND i.status IN (:...payable)', {
        ids: rows.map((row) => row.id),
        payable: PAYABLE_STATUSES,
      })
      .orderBy('i.dueDate')
      .addOrderBy('i.id')
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getMany();
  }

  /**
   * Active subscribers that really owe, in some currency, invoices past due_date + auto_suspend_after_days of the
   * profile they bill through (their own, else the tenant's default; null: never), and pass `filter`: the payable
   * invoices past that grace (a prefix of the oldest-due-first order) add up to more than the money not yet applied.
   */
  async toSuspend(
    manager: EntityManager,
    today: string,
    limit: number,
    filter: SubjectFilter,
  ): Promise<{ tenantId: string; id: string }[]> {
    const rows: { tenant_id: string; id: string }[] = await manager.query(
      `WITH candidates AS (
         SELECT s.tenant_id, s.id, p.auto_suspend_after_days AS grace FROM subscribers s
           JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
          WHERE s.status = '${SubscriberStatus.Active}' AND p.auto_suspend_after_days IS NOT NULL
            AND ${filter('s.tenant_id', 's.id')}),
       past_grace AS (
         SELECT c.tenant_id, c.id, i.currency, SUM(i.total - i.amount_paid) AS due
           FROM candidates c JOIN invoices i ON i.tenant_id = c.tenant_id AND i.subscriber_id = c.id
          WHERE i.status IN (${PAYABLE}) AND i.due_date + c.grace < $1::date
          GROUP BY c.tenant_id, c.id, i.currency)
       SELECT DISTINCT g.tenant_id, g.id FROM past_grace g
        WHERE g.due > ${this.unappliedOf('g.tenant_id', 'g.id', 'g.currency')}
        LIMIT $2`,
      [today, limit],
    );
    return rows.map((row) => ({ tenantId: row.tenant_id, id: row.id }));
  }

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
          WHERE g.due > ${this.unappliedOf('g.tenant_id', 'g.subscriber_id', 'g.currency')}) AS owes`,
      [tenantId, subscriberId, today],
    );
    return row.owes;
  }

  /**
   * Reminders due on `today`: per payable invoice really owed whose subscriber's profile (its own, else the tenant's
   * default) has reminder offsets, the latest offset whose day (due_date + offset) has come, when it passes `filter`
   * (its subject is `<invoice id>:<offset>`); oldest due first, at most `limit`. An earlier offset whose day has also
   * passed is not answered: a reminder is about the invoice's state now, and a sweep that first sees an invoice late
   * sends one reminder, not every one it missed.
   */
  async dueReminders(
    manager: EntityManager,
    today: string,
    limit: number,
    filter: SubjectFilter,
  ): Promise<DueReminder[]> {
    const rows: { id: string; offset_days: number; owed: string }[] = await manager.query(
      `WITH latest AS (
         SELECT i.tenant_id, i.id, i.subscriber_id, i.currency, i.due_date,
                (SELECT max(o) FROM unnest(p.reminder_offsets) o WHERE i.due_date + o <= $1::date) AS offset_days
           FROM invoices i
           JOIN subscribers s ON s.tenant_id = i.tenant_id AND s.id = i.subscriber_id
           JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
          WHERE i.status IN (${PAYABLE}) AND cardinality(p.reminder_offsets) > 0),
       candidates AS (
         SELECT * FROM latest l
          WHERE l.offset_days IS NOT NULL AND ${filter('l.tenant_id', `l.id || ':' || l.offset_days`)}),
       ${owedCtes(null)}
       SELECT c.id, c.offset_days, o.owed FROM candidates c JOIN owed o ON o.id = c.id
        ORDER BY c.due_date, c.id LIMIT $2`,
      [today, limit],
    );
    if (rows.length === 0) {
      return [];
    }
    const invoices = await manager.findBy(Invoice, { id: In(rows.map((row) => row.id)) });
    const byId = new Map(invoices.map((invoice) => [invoice.id, invoice]));
    return rows.map((row) => ({
      invoice: byId.get(row.id)!,
      offsetDays: Number(row.offset_days),
      amountDue: Number(row.owed),
    }));
  }

  /**
   * Invoices that earn a late fee by `today` and pass `filter` (or, with `only`, that one invoice), oldest due first,
   * at most `limit`: payable, in the currency of the profile the subscriber bills through (its own, else the tenant's
   * default), which has a late fee, past due_date + its after_days (before `today`), no late fee charged for it yet,
   * and a `base` above 0: what is really owed on it (owedCtes) less its own late fee lines (money received pays those
   * first), so a late fee invoice earns no late fee. A percentage fee without a floor that would round to 0 (base ×
   * percent < 50) is left out, so a sweep's LIMIT only counts invoices it charges.
   */
  async lateFeesDue(
    manager: EntityManager,
    today: string,
    limit: number,
    filter: SubjectFilter,
    only?: { tenantId: string; invoiceId: string },
  ): Promise<LateFeeDue[]> {
    const rows: {
      tenant_id: string;
      id: string;
      subscriber_id: string;
      number: number;
      currency: string;
      base: string;
    }[] = await manager.query(
      `WITH candidates AS (
         SELECT i.tenant_id, i.id, i.subscriber_id, i.currency, i.due_date, i.number, i.total, i.lines,
                p.late_fee_type, p.late_fee_percentage, p.late_fee_min_amount
           FROM invoices i
           JOIN subscribers s ON s.tenant_id = i.tenant_id AND s.id = i.subscriber_id
           JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
          WHERE i.status IN (${PAYABLE}) AND p.late_fee_type IS NOT NULL AND p.currency = i.currency
            AND i.due_date + p.late_fee_after_days < $1::date
            AND NOT EXISTS (SELECT 1 FROM charges f
                             WHERE f.tenant_id = i.tenant_id AND f.source = 'late_fee' AND f.source_id = i.id)
            AND ${only ? 'i.tenant_id = $3 AND i.id = $4' : filter('i.tenant_id', 'i.id')}),
       ${owedCtes('$1::date')},
       fee_lines AS (
         SELECT c.id, SUM((l.line->>'amount')::bigint) AS amount
           FROM candidates c CROSS JOIN LATERAL jsonb_array_elements(c.lines) AS l(line)
           JOIN charges f ON f.tenant_id = c.tenant_id AND f.id = l.line->>'charge_id' AND f.source = 'late_fee'
          GROUP BY c.id),
       based AS (
         SELECT c.*, LEAST(o.owed, c.total - COALESCE(fl.amount, 0)) AS base
           FROM candidates c JOIN owed o ON o.id = c.id LEFT JOIN fee_lines fl ON fl.id = c.id)
       SELECT b.tenant_id, b.id, b.subscriber_id, b.number, b.currency, b.base FROM based b
        WHERE b.base > 0 AND (b.late_fee_type <> 'percentage' OR b.late_fee_min_amount IS NOT NULL
                              OR b.base * b.late_fee_percentage >= 50)
        ORDER BY b.due_date, b.id LIMIT $2`,
      only ? [today, limit, only.tenantId, only.invoiceId] : [today, limit],
    );
    return rows.map((row) => ({
      tenantId: row.tenant_id,
      subscriberId: row.subscriber_id,
      invoiceId: row.id,
      number: Number(row.number),
      currency: row.currency,
      base: Number(row.base),
    }));
  }

  /**
   * Whether the subscriber still owes fees (fees_before_restoration): an open invoice carrying late fee or reconnection
   * fee lines whose fee part is really owed (owedCtes; money received pays an invoice's fee lines first), or pending
   * fee charges in a currency beyond the money received and not yet needed by its open invoices.
   */
  async owesFees(manager: EntityManager, tenantId: string, subscriberId: string): Promise<boolean> {
    const [row]: { owes: boolean }[] = await manager.query(
      `WITH candidates AS (
         SELECT tenant_id, id, subscriber_id, currency, total, amount_paid, lines FROM invoices
          WHERE tenant_id = $1 AND subscriber_id = $2 AND status IN (${PAYABLE})),
       ${owedCtes(null)},
       fee_invoices AS (
         SELECT c.id, c.total, SUM((l.line->>'amount')::bigint) AS fees
           FROM candidates c CROSS JOIN LATERAL jsonb_array_elements(c.lines) AS l(line)
           JOIN charges f ON f.tenant_id = c.tenant_id AND f.id = l.line->>'charge_id' AND f.source IN (${FEE_SOURCES})
          GROUP BY c.id, c.total),
       pending AS (
         SELECT tenant_id, subscriber_id, currency, SUM(amount) AS amount FROM charges
          WHERE tenant_id = $1 AND subscriber_id = $2 AND status = 'pending' AND source IN (${FEE_SOURCES})
          GROUP BY tenant_id, subscriber_id, currency)
       SELECT EXISTS (SELECT 1 FROM fee_invoices f JOIN owed o ON o.id = f.id WHERE o.owed > f.total - f.fees)
           OR EXISTS (SELECT 1 FROM pending p
                       WHERE p.amount > ${this.unappliedOf('p.tenant_id', 'p.subscriber_id', 'p.currency')}
                             - COALESCE((SELECT SUM(c.total - c.amount_paid) FROM candidates c
                                          WHERE c.currency = p.currency), 0)) AS owes`,
      [tenantId, subscriberId],
    );
    return row.owes;
  }

  /** SQL: the money an account has received and not applied (0 when none), for a correlated subquery. */
  private unappliedOf(tenantId: string, subscriberId: string, currency: string): string {
    return `COALESCE((SELECT SUM(t.amount - t.allocated_amount - t.refunded_amount) FROM transactions t
       WHERE t.tenant_id = ${tenantId} AND t.subscriber_id = ${subscriberId} AND t.currency = ${currency}
         AND t.kind IN (${sqlList(ALLOCATABLE_KINDS)}) AND t.amount > t.allocated_amount + t.refunded_amount), 0)`;
  }
}
