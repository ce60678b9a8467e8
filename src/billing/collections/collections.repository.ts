import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { tenantsTable } from '../../gateway';
import { SubscriberStatus, subscribersTable } from '../../subscribers';
import { Invoice, PAYABLE_STATUSES } from '../invoices/invoice.entity';
import { subscriberProfileOn } from '../profiles/billing-profiles.repository';
import { owedOf, PAYABLE, unappliedOf } from './amounts-owed.repository';

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
  number: string;
  currency: string;
  base: number;
}

/** A reminder due: the invoice, the latest offset whose day has come, and what is really owed on it. */
export interface DueReminder {
  invoice: Invoice;
  offsetDays: number;
  amountDue: number;
}

/** A place in the order the sweeps read payable invoices in, oldest due first: (due_date, id). */
export interface SweepKey {
  dueDate: string;
  id: string;
}

/**
 * One page of a sweep (issue 28, "Dunning sweeps at 1M subscribers" in docs/performance.md): the payable invoices after
 * `after` (from the oldest due when null) in (due_date, id) order, at most `scan` of them read, at most `limit` answers.
 */
export interface SweepPage {
  after: SweepKey | null;
  scan: number;
  limit: number;
}

/** A page's answers, oldest due first, and where the next page starts: null when this one read the order to its end. */
export interface SweepResult<T> {
  items: T[];
  next: SweepKey | null;
}

/** The columns every paged query answers: the page's answer (null when none) and what the page read. */
interface PageRow {
  key_due: string | null;
  key_id: string | null;
  page_read: string;
  page_last_due: string | null;
  page_last_id: string | null;
}

/**
 * SQL of the CTE `scanned` (due_date, id): one page of payable invoices in sweep order, after the page's key ($4, $5)
 * when `after`, at most $3 of them, read tenant by tenant for the rows of `bounds` (SQL answering tenant_id and bound:
 * the tenants a sweep concerns, and the due date their invoices must be before), each a range of the index
 * ix_invoices_tenant_payable_due (tenant_id, due_date, id), then merged. What a page costs is bounded by $3 per tenant
 * with invoices past due, however many there are; what the page then reads (subscribers, profiles, the accounts' other
 * invoices and money) is bounded by the $3 invoices it keeps.
 */
function scannedCte(bounds: string, after: boolean): string {
  return `scanned AS MATERIALIZED (
    SELECT s.due_date, s.id FROM (${bounds}) b CROSS JOIN LATERAL (
      SELECT i.due_date, i.id FROM invoices i
       WHERE i.tenant_id = b.tenant_id AND i.status IN (${PAYABLE}) AND i.due_date < b.bound
             ${after ? 'AND (i.due_date, i.id) > ($4::date, $5::text)' : ''}
       ORDER BY i.due_date, i.id LIMIT $3) s
     ORDER BY s.due_date, s.id LIMIT $3)`;
}

/**
 * SQL: the rows of `answers` (a query over the CTEs, in sweep order, answering key_due and key_id, the key of each
 * answer), each with what the page read (page_read, and the key of the last invoice read); one row of nulls and the
 * page's reading when there is no answer.
 */
function pageSelect(answers: string): string {
  return `SELECT r.*, p.page_read, p.page_last_due, p.page_last_id
      FROM (SELECT (SELECT count(*) FROM scanned) AS page_read,
                   l.due_date::text AS page_last_due, l.id AS page_last_id
              FROM (SELECT 1) one
              LEFT JOIN (SELECT due_date, id FROM scanned ORDER BY due_date DESC, id DESC LIMIT 1) l ON true) p
      LEFT JOIN LATERAL (${answers}) r ON true
     ORDER BY r.key_due, r.key_id`;
}

/** The parameters of a paged query: $1 today, $2 limit, $3 scan, and $4, $5 the key it reads after. */
function pageParams(today: string, page: SweepPage): unknown[] {
  return page.after
    ? [today, page.limit, page.scan, page.after.dueDate, page.after.id]
    : [today, page.limit, page.scan];
}

/**
 * A page's answers, and where the next page starts: after its last answer when it answered `limit` (those after it
 * were read but not answered), else after the last invoice it read, or null when it read fewer than `scan` (the end).
 */
function pageOf<R extends PageRow, T>(rows: R[], page: SweepPage, item: (row: R) => T): SweepResult<T> {
  const answered = rows.filter((row) => row.key_id !== null);
  const last = answered.at(-1);
  let next: SweepKey | null = null;
  if (last && answered.length >= page.limit) {
    next = { dueDate: last.key_due!, id: last.key_id! };
  } else if (rows.length > 0 && Number(rows[0].page_read) >= page.scan) {
    next = { dueDate: rows[0].page_last_due!, id: rows[0].page_last_id! };
  }
  return { items: answered.map(item), next };
}

/**
 * SQL: a condition on a page's rows (a SubjectFilter's), evaluated row by row: a sub-select is never made a join, so
 * its NOT EXISTS probes an index once per row read, whatever the planner's estimates (a join with a table it believes
 * small, freshly filled, was a nested loop over all its rows for every row).
 */
const perRow = (condition: string): string => `(SELECT ${condition})`;

/** The tenants whose invoices the overdue sweep reads: all, each up to `today`. */
const OVERDUE_BOUNDS = `SELECT t.id AS tenant_id, $1::date AS bound FROM ${tenantsTable('t')}`;

/**
 * The tenants a profile of which suspends for non-payment, with the latest due date an invoice past the shortest grace
 * of those profiles has (due_date + grace < today).
 */
const SUSPEND_BOUNDS = `SELECT tenant_id, $1::date - min(auto_suspend_after_days) AS bound FROM billing_profiles
   WHERE auto_suspend_after_days IS NOT NULL GROUP BY tenant_id`;

/** The tenants a profile of which has reminder offsets, up to the due date of its earliest offset come by `today`. */
const REMINDER_BOUNDS = `SELECT p.tenant_id, $1::date - min(o) + 1 AS bound
    FROM billing_profiles p CROSS JOIN LATERAL unnest(p.reminder_offsets) o GROUP BY p.tenant_id`;

/** The tenants a profile of which has a late fee, up to the due date past its shortest after_days. */
const LATE_FEE_BOUNDS = `SELECT tenant_id, $1::date - min(late_fee_after_days) AS bound FROM billing_profiles
   WHERE late_fee_type IS NOT NULL GROUP BY tenant_id`;

/** A row of LATE_FEE_ANSWERS. */
interface LateFeeRow {
  key_id: string | null;
  tenant_id: string;
  subscriber_id: string;
  number: string;
  currency: string;
  base: string;
}

const lateFeeDue = (row: LateFeeRow): LateFeeDue => ({
  tenantId: row.tenant_id,
  subscriberId: row.subscriber_id,
  invoiceId: row.key_id!,
  number: row.number,
  currency: row.currency,
  base: Number(row.base),
});

/**
 * CTEs over `scanned` (due_date, id of invoices) for those that earn a late fee by $1 (today) and pass `filter`:
 * payable, in the currency of the profile the subscriber bills through (its own, else the tenant's default), which has
 * a late fee, past due_date + its after_days (before today), no late fee charged for it yet, and a `base` above 0: what
 * is really owed on it (owedOf) less its own late fee lines (money received pays those first), so a late fee invoice
 * earns no late fee. A percentage fee without a floor that would round to 0 (base × percent < 50) is left out, so a
 * sweep's limit only counts invoices it charges. The answers are LATE_FEE_ANSWERS, oldest due first, at most $2.
 */
function lateFeeCtes(filter: SubjectFilter): string {
  return `candidates AS MATERIALIZED (
    SELECT i.tenant_id, i.id, i.subscriber_id, i.currency, i.due_date, i.number, i.sequence, i.total, i.amount_paid, i.lines,
           p.late_fee_type, p.late_fee_percentage, p.late_fee_min_amount
      FROM scanned sc JOIN invoices i ON i.id = sc.id
      JOIN ${subscribersTable('s')} ON s.tenant_id = i.tenant_id AND s.id = i.subscriber_id
      JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
     WHERE i.status IN (${PAYABLE}) AND p.late_fee_type IS NOT NULL AND p.currency = i.currency
       AND i.due_date + p.late_fee_after_days < $1::date
       AND NOT EXISTS (SELECT 1 FROM charges f
                        WHERE f.tenant_id = i.tenant_id AND f.source = 'late_fee' AND f.source_id = i.id)
       AND ${perRow(filter('i.tenant_id', 'i.id'))}),
  judged AS MATERIALIZED (SELECT c.*, ${owedOf('c', '$1::date')} AS owed FROM candidates c),
  fee_lines AS (
    SELECT c.id, SUM(COALESCE(l.line->>'net_amount', l.line->>'amount')::bigint
                     + COALESCE(l.line->>'tax_amount', '0')::bigint) AS amount
      FROM candidates c CROSS JOIN LATERAL jsonb_array_elements(c.lines) AS l(line)
      JOIN charges f ON f.tenant_id = c.tenant_id AND f.id = l.line->>'charge_id' AND f.source = 'late_fee'
     GROUP BY c.id),
  based AS (
    SELECT c.*, LEAST(c.owed, c.total - COALESCE(fl.amount, 0)) AS base
      FROM judged c LEFT JOIN fee_lines fl ON fl.id = c.id WHERE c.owed > 0)`;
}

/** The answers of lateFeeCtes. */
const LATE_FEE_ANSWERS = `SELECT b.due_date::text AS key_due, b.id AS key_id, b.tenant_id, b.subscriber_id, b.number,
       b.currency, b.base FROM based b
  WHERE b.base > 0 AND (b.late_fee_type <> 'percentage' OR b.late_fee_min_amount IS NOT NULL
                        OR b.base * b.late_fee_percentage >= 50)
  ORDER BY b.due_date, b.id LIMIT $2`;

/**
 * The dunning sweeps' reads (docs/automation.md), judged on what is really owed (amounts-owed.repository.ts): past-due
 * amounts of payable invoices less the money received and not yet applied in their currency. Reads invoices,
 * transactions, billing profiles and subscribers; writes nothing. The only place these reads are made: automation
 * asks through CollectionsService.
 *
 * The sweeps' queries (overdue, suspension, reminders, late fees) are paged (SweepPage): each reads a bounded number
 * of payable invoices in (due_date, id) order, then judges only those, so a pass costs what its pages read, however
 * many invoices are past due; CollectionsService reads a bounded number of pages per call and says where the next call
 * resumes, so invoices that money covers at the head of the order never keep the sweep from those after them.
 */
@Injectable()
export class CollectionsRepository {
  /**
   * Of one page, the payable invoices due before `today` that are really owed (the money not yet applied does not
   * cover them, oldest due first) and pass `filter`, oldest due first, at most `page.limit`; not locked (lockPayable).
   */
  async overdueInvoices(
    manager: EntityManager,
    today: string,
    page: SweepPage,
    filter: SubjectFilter,
  ): Promise<SweepResult<string>> {
    const rows: PageRow[] = await manager.query(
      `WITH ${scannedCte(OVERDUE_BOUNDS, page.after !== null)},
       candidates AS MATERIALIZED (
         SELECT i.tenant_id, i.id, i.subscriber_id, i.currency, i.due_date, i.number, i.sequence, i.total, i.amount_paid
           FROM scanned sc JOIN invoices i ON i.id = sc.id
          WHERE i.status IN (${PAYABLE}) AND ${perRow(filter('i.tenant_id', 'i.id'))}),
       judged AS MATERIALIZED (SELECT c.due_date, c.id, ${owedOf('c', '$1::date')} AS owed FROM candidates c)
       ${pageSelect(`SELECT due_date::text AS key_due, id AS key_id FROM judged WHERE owed > 0
                      ORDER BY due_date, id LIMIT $2`)}`,
      pageParams(today, page),
    );
    return pageOf(rows, page, (row) => row.key_id!);
  }

  /**
   * These invoices, oldest due first, row-locked, skipping those another transaction holds, and read again under the
   * lock: one paid meanwhile is not payable any more and is left out.
   */
  async lockPayable(manager: EntityManager, ids: string[]): Promise<Invoice[]> {
    if (ids.length === 0) {
      return [];
    }
    return manager
      .createQueryBuilder(Invoice, 'i')
      .where('i.id IN (:...ids) AND i.status IN (:...payable)', { ids, payable: PAYABLE_STATUSES })
      .orderBy('i.dueDate')
      .addOrderBy('i.id')
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getMany();
  }

  /**
   * Of one page, the active subscribers that really owe, in some currency, invoices past due_date +
   * auto_suspend_after_days of the profile they bill through (their own, else the tenant's default; null: never), and
   * pass `filter`: the payable invoices past that grace (a prefix of the oldest-due-first order) add up to more than the
   * money not yet applied. A subscriber is answered at its first invoice the page read past the grace, at most
   * `page.limit` of them.
   */
  async toSuspend(
    manager: EntityManager,
    today: string,
    page: SweepPage,
    filter: SubjectFilter,
  ): Promise<SweepResult<{ tenantId: string; id: string }>> {
    const rows: (PageRow & { tenant_id: string; id: string })[] = await manager.query(
      `WITH ${scannedCte(SUSPEND_BOUNDS, page.after !== null)},
       candidates AS MATERIALIZED (
         SELECT s.tenant_id, s.id, p.auto_suspend_after_days AS grace, i.due_date, i.id AS invoice_id
           FROM scanned sc JOIN invoices i ON i.id = sc.id
           JOIN ${subscribersTable('s')} ON s.tenant_id = i.tenant_id AND s.id = i.subscriber_id
           JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
          WHERE i.status IN (${PAYABLE}) AND s.status = '${SubscriberStatus.Active}'
            AND p.auto_suspend_after_days IS NOT NULL AND i.due_date + p.auto_suspend_after_days < $1::date
            AND ${perRow(filter('s.tenant_id', 's.id'))}),
       firsts AS (
         SELECT DISTINCT ON (tenant_id, id) tenant_id, id, grace, due_date, invoice_id FROM candidates
          ORDER BY tenant_id, id, due_date, invoice_id)
       ${pageSelect(`SELECT f.due_date::text AS key_due, f.invoice_id AS key_id, f.tenant_id, f.id FROM firsts f
          WHERE EXISTS (
            SELECT 1 FROM (
              SELECT i.currency, SUM(i.total - i.amount_paid) AS due FROM invoices i
               WHERE i.tenant_id = f.tenant_id AND i.subscriber_id = f.id AND i.status IN (${PAYABLE})
                 AND i.due_date < $1::date - f.grace
               GROUP BY i.currency) g
             WHERE g.due > ${unappliedOf('f.tenant_id', 'f.id', 'g.currency')})
          ORDER BY f.due_date, f.invoice_id LIMIT $2`)}`,
      pageParams(today, page),
    );
    return pageOf(rows, page, (row) => ({ tenantId: row.tenant_id, id: row.id }));
  }

  /**
   * Of one page, the reminders due on `today`: per payable invoice really owed whose subscriber's profile (its own, else
   * the tenant's default) has reminder offsets, the latest offset whose day (due_date + offset) has come, when it passes
   * `filter` (its subject is `<invoice id>:<offset>`); oldest due first, at most `page.limit`. An earlier offset whose
   * day has also passed is not answered: a reminder is about the invoice's state now, and a sweep that first sees an
   * invoice late sends one reminder, not every one it missed.
   */
  async dueReminders(
    manager: EntityManager,
    today: string,
    page: SweepPage,
    filter: SubjectFilter,
  ): Promise<SweepResult<{ invoiceId: string; offsetDays: number; amountDue: number }>> {
    const rows: (PageRow & { offset_days: number; owed: string })[] = await manager.query(
      `WITH ${scannedCte(REMINDER_BOUNDS, page.after !== null)},
       latest AS MATERIALIZED (
         SELECT i.tenant_id, i.id, i.subscriber_id, i.currency, i.due_date, i.number, i.sequence, i.total, i.amount_paid,
                (SELECT max(o) FROM unnest(p.reminder_offsets) o WHERE i.due_date + o <= $1::date) AS offset_days
           FROM scanned sc JOIN invoices i ON i.id = sc.id
           JOIN ${subscribersTable('s')} ON s.tenant_id = i.tenant_id AND s.id = i.subscriber_id
           JOIN billing_profiles p ON ${subscriberProfileOn('s', 'p')}
          WHERE i.status IN (${PAYABLE}) AND cardinality(p.reminder_offsets) > 0),
       candidates AS MATERIALIZED (
         SELECT * FROM latest l
          WHERE l.offset_days IS NOT NULL AND ${perRow(filter('l.tenant_id', `l.id || ':' || l.offset_days`))}),
       judged AS MATERIALIZED (SELECT c.due_date, c.id, c.offset_days, ${owedOf('c', null)} AS owed FROM candidates c)
       ${pageSelect(`SELECT due_date::text AS key_due, id AS key_id, offset_days, owed FROM judged WHERE owed > 0
          ORDER BY due_date, id LIMIT $2`)}`,
      pageParams(today, page),
    );
    return pageOf(rows, page, (row) => ({
      invoiceId: row.key_id!,
      offsetDays: Number(row.offset_days),
      amountDue: Number(row.owed),
    }));
  }

  /** These invoices, by id (none locked). */
  invoicesByIds(manager: EntityManager, ids: string[]): Promise<Invoice[]> {
    return ids.length === 0 ? Promise.resolve([]) : manager.findBy(Invoice, { id: In(ids) });
  }

  /**
   * Of one page, the invoices that earn a late fee by `today` and pass `filter`, oldest due first, at most `page.limit`
   * (lateFeeSql).
   */
  async lateFeesDue(
    manager: EntityManager,
    today: string,
    page: SweepPage,
    filter: SubjectFilter,
  ): Promise<SweepResult<LateFeeDue>> {
    const rows: (PageRow & LateFeeRow)[] = await manager.query(
      `WITH ${scannedCte(LATE_FEE_BOUNDS, page.after !== null)}, ${lateFeeCtes(filter)}
       ${pageSelect(LATE_FEE_ANSWERS)}`,
      pageParams(today, page),
    );
    return pageOf(rows, page, lateFeeDue);
  }

  /** Whether this invoice earns a late fee by `today` (lateFeeCtes), and on what base; null when it does not. */
  async lateFeeDueOn(
    manager: EntityManager,
    today: string,
    tenantId: string,
    invoiceId: string,
  ): Promise<LateFeeDue | null> {
    const rows: LateFeeRow[] = await manager.query(
      `WITH scanned AS (SELECT due_date, id FROM invoices WHERE tenant_id = $3 AND id = $4),
       ${lateFeeCtes(() => 'true')}
       ${LATE_FEE_ANSWERS}`,
      [today, 1, tenantId, invoiceId],
    );
    return rows.length === 0 ? null : lateFeeDue(rows[0]);
  }
}
