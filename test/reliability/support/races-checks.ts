import type { Response } from 'supertest';
import type { DataSource } from 'typeorm';
import { type LedgerEntryRecord, listAll } from '../../support/billing-factory';
import type { TestApp } from '../../support/test-app';
import { envelopeProblems } from './envelope-check';

/**
 * Checks shared by the race suite (issue 18 item 2): every answer of a race judged like the hostile-input suite judges
 * one (below 500, in the envelope, a catalog code at its catalog status) and never naming a deadlock or a
 * serialization failure; and the money invariants read back through the API and, where the API shows no sum, straight
 * from the database.
 */

/** Words a database conflict would leak into an answer if one surfaced. */
const CONFLICT_WORDS = /deadlock|serializ|could not obtain lock|lock timeout|40001|40P01/i;

/** Every request the suite judged, by status: the figures it prints at the end. */
export const judged: Record<string, number> = {};

/** The problems of one answer (empty: it is sound). */
export function problemsOf(res: Response): string[] {
  judged[res.status] = (judged[res.status] ?? 0) + 1;
  const problems = envelopeProblems({ status: res.status, headers: res.headers, text: res.text ?? '' });
  if (CONFLICT_WORDS.test(res.text ?? '')) {
    problems.push('names a database conflict');
  }
  return problems;
}

/** No answer is a 5xx, leaves the envelope or the catalog, or surfaces a deadlock: a failure lists those that did. */
export function expectSound(answers: Response[]): void {
  const bad = answers
    .map((res) => ({ res, problems: problemsOf(res) }))
    .filter(({ problems }) => problems.length > 0)
    .map(({ res, problems }) => `${res.status} ${problems.join('; ')}: ${(res.text ?? '').slice(0, 300)}`);
  expect(bad).toEqual([]);
}

/** How many answers had each status, e.g. `{ 201: 1, 409: 49 }`. */
export function countStatuses(answers: Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of answers) {
    counts[res.status] = (counts[res.status] ?? 0) + 1;
  }
  return counts;
}

/** How many answers had each error code (`-` for a success). */
export function countCodes(answers: Response[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const res of answers) {
    const code = (res.body?.error?.code as string | undefined) ?? '-';
    counts[code] = (counts[code] ?? 0) + 1;
  }
  return counts;
}

/** Sends `count` requests at once (`send(i)` builds the i-th); answers them in the order they were built. */
export function fire(count: number, send: (i: number) => PromiseLike<Response>): Promise<Response[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => send(i)));
}

/**
 * A subscriber's ledger in one currency, read through the API, checked as a chain: oldest first, each entry's
 * balance_after is the one before plus its amount (no posting lost or applied on a stale balance). Answers the
 * entries and their sum, which the caller compares with GET /balance.
 */
export async function ledgerChain(
  t: TestApp,
  token: string,
  subscriberId: string,
  currency = 'USD',
): Promise<{ entries: LedgerEntryRecord[]; sum: number; broken: string[] }> {
  const entries = (await listAll<LedgerEntryRecord>(t, token, `/api/v1/subscribers/${subscriberId}/ledger`))
    .filter((entry) => entry.currency === currency)
    .reverse();
  const broken: string[] = [];
  let running = 0;
  for (const entry of entries) {
    running += entry.amount;
    if (entry.balance_after !== running) {
      broken.push(
        `${entry.id} ${entry.type} ${entry.amount}: balance_after ${entry.balance_after}, chain ${running}`,
      );
    }
  }
  return { entries, sum: running, broken };
}

/**
 * The money invariants of a tenant that the API shows no sum for, straight from its tables; each query answers the
 * rows that break one (none is the pass):
 * - a stored balance differing from the sum of its ledger entries;
 * - a transaction whose allocated_amount differs from the sum of its allocations, or whose refunded_amount differs
 *   from the sum of its refunds, or that gave away more than its amount;
 * - an invoice whose amount_paid differs from the sum of its allocations, or exceeds its total;
 * - a void invoice holding an allocation.
 */
export async function moneyDrift(db: DataSource, tenantId: string): Promise<Record<string, unknown[]>> {
  const queries: Record<string, string> = {
    balanceVsLedger: `SELECT b.subscriber_id, b.currency, b.balance::text, COALESCE(l.total, 0)::text AS ledger
      FROM subscriber_balances b
      LEFT JOIN (SELECT subscriber_id, currency, sum(amount) AS total FROM ledger_entries WHERE tenant_id = $1
                 GROUP BY subscriber_id, currency) l USING (subscriber_id, currency)
      WHERE b.tenant_id = $1 AND b.balance <> COALESCE(l.total, 0)`,
    allocatedVsAllocations: `SELECT t.id, t.allocated_amount::text, COALESCE(sum(a.amount), 0)::text AS allocations
      FROM transactions t LEFT JOIN allocations a ON a.tenant_id = t.tenant_id AND a.transaction_id = t.id
      WHERE t.tenant_id = $1 GROUP BY t.id, t.allocated_amount
      HAVING t.allocated_amount <> COALESCE(sum(a.amount), 0)`,
    refundedVsRefunds: `SELECT t.id, t.refunded_amount::text, COALESCE(sum(r.amount), 0)::text AS refunds
      FROM transactions t LEFT JOIN transactions r ON r.tenant_id = t.tenant_id AND r.refund_of = t.id
      WHERE t.tenant_id = $1 GROUP BY t.id, t.refunded_amount
      HAVING t.refunded_amount <> COALESCE(sum(r.amount), 0)`,
    overTaken: `SELECT id, amount::text, allocated_amount::text, refunded_amount::text FROM transactions
      WHERE tenant_id = $1 AND allocated_amount + refunded_amount > amount`,
    paidVsAllocations: `SELECT i.id, i.amount_paid::text, COALESCE(sum(a.amount), 0)::text AS allocations
      FROM invoices i LEFT JOIN allocations a ON a.tenant_id = i.tenant_id AND a.invoice_id = i.id
      WHERE i.tenant_id = $1 GROUP BY i.id, i.amount_paid
      HAVING i.amount_paid <> COALESCE(sum(a.amount), 0)`,
    overPaid: `SELECT id, total::text, amount_paid::text FROM invoices WHERE tenant_id = $1 AND amount_paid > total`,
    voidWithAllocation: `SELECT i.id, a.id AS allocation_id FROM invoices i
      JOIN allocations a ON a.tenant_id = i.tenant_id AND a.invoice_id = i.id
      WHERE i.tenant_id = $1 AND i.status = 'void'`,
  };
  const drift: Record<string, unknown[]> = {};
  for (const [name, sql] of Object.entries(queries)) {
    const rows = await db.query<unknown[]>(sql, [tenantId]);
    if (rows.length > 0) {
      drift[name] = rows;
    }
  }
  return drift;
}
