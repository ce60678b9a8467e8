import { Client } from 'pg';

/**
 * Seeding for the benchmarks, straight into Postgres (never through the API): INSERT … SELECT over generate_series,
 * in chunks so progress shows. Ids are made like the app's (src/common/ids.ts): prefix, then a 26-character
 * Crockford-base32 ULID whose first 10 characters are the creation millisecond, so id order is creation order.
 */

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const DAY_MS = 86_400_000;
/** Seeded rows are spread over this much past, oldest first; the newest is an hour ago. */
const SPREAD_MS = 400 * DAY_MS;
const CHUNK = 200_000;

export const SEED_CURRENCY = 'USD';

/** SQL for `digits` Crockford base-32 characters of the bigint expression `expr` (most significant first). */
function crockford(expr: string, digits: number): string {
  const parts: string[] = [];
  for (let k = digits - 1; k >= 0; k--) {
    parts.push(`substr('${CROCKFORD}', (((${expr}) >> ${5 * k}) & 31)::int + 1, 1)`);
  }
  return parts.join(' || ');
}

/**
 * SQL for a ULID-like id: the millisecond `ms`, then 80 bits derived from md5(salt || g). A scalar subquery whose
 * inner steps are fenced with OFFSET 0, so the hash and the time are computed once per row, not once per character.
 */
function ulidSql(prefix: string, ms: string, g: string, salt: string): string {
  return `(SELECT '${prefix}_' || ${crockford('ms', 10)} || ${crockford('r1', 8)} || ${crockford('r2', 8)}
     FROM (SELECT (${ms})::bigint AS ms,
                  ('x' || substr(h, 1, 10))::bit(40)::bigint AS r1,
                  ('x' || substr(h, 11, 10))::bit(40)::bigint AS r2
             FROM (SELECT md5('${salt}' || (${g})::text) AS h OFFSET 0) AS hashed OFFSET 0) AS parts)`;
}

async function inChunks(
  label: string,
  total: number,
  log: (line: string) => void,
  insert: (from: number, to: number) => Promise<void>,
): Promise<void> {
  const started = Date.now();
  for (let from = 1; from <= total; from += CHUNK) {
    const to = Math.min(total, from + CHUNK - 1);
    await insert(from, to);
    log(`  ${label}: ${to.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`);
  }
  log(`  ${label}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Runs `load` with the table's secondary indexes dropped, then re-creates them from their own definitions
 * (pg_indexes.indexdef, so exactly what the migrations made): building an index once over a million sorted rows is
 * several times faster than maintaining it row by row. The primary key stays.
 */
export async function withSecondaryIndexesDropped<T>(
  db: Client,
  table: string,
  log: (line: string) => void,
  load: () => Promise<T>,
): Promise<T> {
  const { rows } = await db.query<{ indexname: string; indexdef: string }>(
    `SELECT i.indexname, i.indexdef FROM pg_indexes i
      WHERE i.schemaname = 'public' AND i.tablename = $1
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)
        -- an index a foreign key points at (services' and billing_periods' (tenant_id, subscriber_id)) stays
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c
                         WHERE c.conindid = ('public.' || quote_ident(i.indexname))::regclass)`,
    [table],
  );
  for (const index of rows) await db.query(`DROP INDEX "${index.indexname}"`);
  const loaded = await load();
  const started = Date.now();
  await db.query(`SET maintenance_work_mem = '256MB'`);
  for (const index of rows) await db.query(index.indexdef);
  log(`  ${table}: ${rows.length} indexes re-created in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return loaded;
}

/** Row g of the seed is created at startMs + g * stepMs. */
function timeline(total: number): { startMs: number; stepMs: number } {
  const stepMs = Math.max(1, Math.floor(SPREAD_MS / total));
  return { startMs: Date.now() - DAY_MS / 24 - stepMs * (total + 1), stepMs };
}

/** The id the seed gave subscriber number g (1-based), as SQL over a column or parameter `g`. */
function seededSubscriberIdSql(g: string, startMs: string, stepMs: string): string {
  return ulidSql('sub', `${startMs}::bigint + (${g})::bigint * ${stepMs}::bigint`, g, 's');
}

export interface SubscriberSeed {
  startMs: number;
  stepMs: number;
  total: number;
}

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

/** Events about the seeded subscribers, each with a realistic `data.object` (the subscriber record). */
export async function seedEvents(
  db: Client,
  tenantId: string,
  total: number,
  subscribers: SubscriberSeed,
  log: (line: string) => void,
): Promise<void> {
  const { startMs, stepMs } = timeline(total);
  const types = `(ARRAY[${EVENT_TYPES.map((type) => `'${type}'`).join(', ')}])[(g % ${EVENT_TYPES.length}) + 1]`;
  // The subject: the seeded subscriber with the same position modulo the subscriber count.
  const s = `((g - 1) % ${subscribers.total}) + 1`;
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
    `INSERT INTO invoices (tenant_id, id, number, subscriber_id, currency, status, lines, total, amount_paid, due_date,
       finalized_at, paid_at, voided_at, created_at, updated_at)
     SELECT $1, ${ulidSql('inv', '$2::bigint + g::bigint * $3::bigint', 'g', 'i')}, g, subscriber_id,
       '${SEED_CURRENCY}', 'open',
       jsonb_build_array(jsonb_build_object('description', 'Bench seed', 'quantity', 1, 'unit_amount', ${amount},
                                            'amount', ${amount})),
       ${amount}, 0, (to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0) + interval '14 days')::date,
       to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0), NULL, NULL,
       to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0),
       to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0)
     FROM (SELECT g, ${subjectId} AS subscriber_id FROM generate_series($4::int, $5::int) AS g) AS seeded`,
    [tenantId, startMs, stepMs, 1, count, subscribers.startMs, subscribers.stepMs],
  );
  await db.query(
    `INSERT INTO invoice_counters (tenant_id, last_number) VALUES ($1, $2)
     ON CONFLICT (tenant_id) DO UPDATE SET last_number = GREATEST(invoice_counters.last_number, EXCLUDED.last_number)`,
    [tenantId, count],
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
