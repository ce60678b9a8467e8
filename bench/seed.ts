import { Client } from 'pg';
import {
  inChunks,
  SEED_CURRENCY,
  seededSubscriberIdSql,
  type SubscriberSeed,
  timeline,
  ulidSql,
} from './seed-sql';

/**
 * Seeding for the benchmarks, straight into Postgres (never through the API): INSERT … SELECT over generate_series,
 * in chunks so progress shows (seed-sql.ts). Here the subscribers, their events and their billing; the other
 * domains' rows (tickets, services, ledger) are seed-domain.ts's.
 */

export async function seedSubscribers(
  db: Client,
  tenantId: string,
  total: number,
  log: (line: string) => void,
): Promise<SubscriberSeed> {
  const { startMs, stepMs } = timeline(total);
  const id = seededSubscriberIdSql('g', '$2', '$3');
  await inChunks('subscribers', total, log, async (from, to) => {
    await db.query(
      `INSERT INTO subscribers (tenant_id, id, external_id, full_name, email, email_normalized, phone, status,
         suspension_reason, billing_profile_id, address, metadata, created_at, updated_at)
       SELECT $1, ${id}, 'seed-' || g, 'Seed Subscriber ' || g, 'seed-' || g || '@example.net',
         'seed-' || g || '@example.net', '+1555' || lpad(g::text, 7, '0'),
         CASE WHEN g % 20 = 0 THEN 'suspended' WHEN g % 10 = 1 THEN 'prospect' WHEN g % 10 = 2 THEN 'pending'
              ELSE 'active' END,
         CASE WHEN g % 20 = 0 THEN 'non_payment' END,
         NULL,
         jsonb_build_object('line1', g || ' Fiber Way', 'city', 'Springfield', 'state', 'IL', 'postal_code', '62701'),
         jsonb_build_object('plan', 'fiber-500', 'source', 'bench-seed'),
         to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0),
         to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0)
       FROM generate_series($4::int, $5::int) AS g`,
      [tenantId, startMs, stepMs, from, to],
    );
  });
  return { startMs, stepMs, total };
}

const EVENT_TYPES = [
  'subscriber.created',
  'subscriber.updated',
  'subscriber.status_changed',
  'transaction.created',
  'invoice.created',
];

/**
 * The subscribers with a history (bench cases `ledger.list` and `events.by_subject`): one in HISTORY_ROWS_PER_POOL
 * seeded subscribers, spread evenly over the table, each with HISTORY_DEPTH ledger entries and as many events, so
 * their ledger page and their filtered event log are full 100-row pages with more behind them.
 */
export const HISTORY_DEPTH = 200;
const HISTORY_ROWS_PER_POOL = 2_000;

export interface HistoryPool {
  size: number;
  stride: number;
  /** Seeded subscribers (the pool's positions are computed from it). */
  total: number;
}

export function historyPool(total: number): HistoryPool {
  const size = Math.max(1, Math.floor(total / HISTORY_ROWS_PER_POOL));
  return { size, stride: Math.max(1, Math.floor(total / size)), total };
}

/** SQL: the seed position of the pool's subscriber number `k` (0-based); one past the GET-by-id sample's positions. */
export function historyPositionSql(k: string, pool: HistoryPool): string {
  return `((((${k}) * ${pool.stride}) + 1) % ${pool.total} + 1)`;
}

/**
 * Events about the seeded subscribers, each with a realistic `data.object` (the subscriber record). Every tenth
 * event is about a subscriber of the history pool (HISTORY_DEPTH events each at the default sizes).
 */
export async function seedEvents(
  db: Client,
  tenantId: string,
  total: number,
  subscribers: SubscriberSeed,
  log: (line: string) => void,
): Promise<void> {
  const { startMs, stepMs } = timeline(total);
  const types = `(ARRAY[${EVENT_TYPES.map((type) => `'${type}'`).join(', ')}])[(g % ${EVENT_TYPES.length}) + 1]`;
  // The subject: a subscriber of the history pool for every tenth event, else the seeded subscriber with the same
  // position modulo the subscriber count.
  const pool = historyPool(subscribers.total);
  const s = `(CASE WHEN g % 10 = 0 THEN ${historyPositionSql(`((g / 10) - 1) % ${pool.size}`, pool)}
                ELSE ((g - 1) % ${subscribers.total}) + 1 END)`;
  const subjectId = seededSubscriberIdSql(s, '$6', '$7');
  await inChunks('events', total, log, async (from, to) => {
    await db.query(
      `INSERT INTO events (tenant_id, id, type, subject_id, data, request_id, actor, created_at)
       SELECT $1, ${ulidSql('evt', '$2::bigint + g::bigint * $3::bigint', 'g', 'e')}, ${types}, subject_id,
         jsonb_build_object('object', jsonb_build_object(
           'id', subject_id, 'external_id', 'seed-' || ${s}, 'full_name', 'Seed Subscriber ' || ${s},
           'email', 'seed-' || ${s} || '@example.net', 'phone', '+1555' || lpad((${s})::text, 7, '0'),
           'status', 'active', 'suspension_reason', NULL, 'billing_profile_id', NULL,
           'address', jsonb_build_object('line1', (${s}) || ' Fiber Way', 'city', 'Springfield', 'state', 'IL',
                                         'postal_code', '62701'),
           'metadata', jsonb_build_object('plan', 'fiber-500'),
           'created_at', to_char(to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0) AT TIME ZONE 'UTC',
                                 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))),
         'req_seed' || g,
         jsonb_build_object('type', 'system', 'id', NULL),
         to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0)
       FROM (SELECT g, ${subjectId} AS subject_id FROM generate_series($4::int, $5::int) AS g) AS seeded`,
      [tenantId, startMs, stepMs, from, to, subscribers.startMs, subscribers.stepMs],
    );
  });
}

export interface BillingSeed {
  /** Payments with a huge unallocated amount, each paired with an open invoice of the same subscriber. */
  pairs: { transactionId: string; invoiceId: string; subscriberId: string }[];
}

/**
 * `count` subscribers (spread over the seeded ones) each get a payment of 10^12 minor units and an open invoice of the
 * same total, so allocations of 1 can run for a long time without running dry or queueing on one row lock.
 */
export async function seedBilling(
  db: Client,
  tenantId: string,
  count: number,
  subscribers: SubscriberSeed,
): Promise<BillingSeed> {
  const { startMs, stepMs } = timeline(count);
  const stride = Math.max(1, Math.floor(subscribers.total / count));
  const subjectId = seededSubscriberIdSql(`((g - 1) * ${stride}) % ${subscribers.total} + 1`, '$6', '$7');
  const amount = 1_000_000_000_000;
  await db.query(
    `INSERT INTO transactions (tenant_id, id, subscriber_id, kind, source, amount, currency, external_id, reference,
       description, method, occurred_at, refund_of, metadata, allocated_amount, refunded_amount, created_at)
     SELECT $1, ${ulidSql('txn', '$2::bigint + g::bigint * $3::bigint', 'g', 't')}, subscriber_id, 'payment',
       'external', ${amount}, '${SEED_CURRENCY}', 'seed-pay-' || g, NULL, 'Bench seed payment', 'card',
       to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0), NULL, '{}'::jsonb, 0, 0,
       to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0)
     FROM (SELECT g, ${subjectId} AS subscriber_id FROM generate_series($4::int, $5::int) AS g) AS seeded`,
    [tenantId, startMs, stepMs, 1, count, subscribers.startMs, subscribers.stepMs],
  );
  await db.query(
    `INSERT INTO invoices (tenant_id, id, number, sequence, subscriber_id, currency, status, lines, total, tax_amount,
       taxes, amount_paid, due_date, finalized_at, paid_at, voided_at, created_at, updated_at)
     SELECT $1, ${ulidSql('inv', '$2::bigint + g::bigint * $3::bigint', 'g', 'i')}, g, g, subscriber_id,
       '${SEED_CURRENCY}', 'open',
       jsonb_build_array(jsonb_build_object('description', 'Bench seed', 'quantity', 1, 'unit_amount', ${amount},
                                            'amount', ${amount})),
       ${amount}, 0, '[]'::jsonb, 0, (to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0) + interval '14 days')::date,
       to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0), NULL, NULL,
       to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0),
       to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0)
     FROM (SELECT g, ${subjectId} AS subscriber_id FROM generate_series($4::int, $5::int) AS g) AS seeded`,
    [tenantId, startMs, stepMs, 1, count, subscribers.startMs, subscribers.stepMs],
  );
  const { rows } = await db.query<{ transaction_id: string; invoice_id: string; subscriber_id: string }>(
    `SELECT t.id AS transaction_id, i.id AS invoice_id, t.subscriber_id
       FROM transactions t JOIN invoices i ON i.tenant_id = t.tenant_id AND i.number::text = substr(t.external_id, 10)
      WHERE t.tenant_id = $1 AND t.external_id LIKE 'seed-pay-%'
      ORDER BY i.number`,
    [tenantId],
  );
  return {
    pairs: rows.map((row) => ({
      transactionId: row.transaction_id,
      invoiceId: row.invoice_id,
      subscriberId: row.subscriber_id,
    })),
  };
}

/** The existing seed pairs, when a run reuses an already seeded database. */
export async function loadBillingSeed(db: Client, tenantId: string): Promise<BillingSeed> {
  const { rows } = await db.query<{ transaction_id: string; invoice_id: string; subscriber_id: string }>(
    `SELECT t.id AS transaction_id, i.id AS invoice_id, t.subscriber_id
       FROM transactions t JOIN invoices i ON i.tenant_id = t.tenant_id AND i.number::text = substr(t.external_id, 10)
      WHERE t.tenant_id = $1 AND t.external_id LIKE 'seed-pay-%'
      ORDER BY i.number`,
    [tenantId],
  );
  return {
    pairs: rows.map((row) => ({
      transactionId: row.transaction_id,
      invoiceId: row.invoice_id,
      subscriberId: row.subscriber_id,
    })),
  };
}
