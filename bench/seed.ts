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
  for (const index of rows) {
    await db.query(`DROP INDEX "${index.indexname}"`);
  }
  const loaded = await load();
  const started = Date.now();
  await db.query(`SET maintenance_work_mem = '256MB'`);
  for (const index of rows) {
    await db.query(index.indexdef);
  }
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
function historyPositionSql(k: string, pool: HistoryPool): string {
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

/** One ticket, one service (and its provisioning order) per DOMAIN_SHARE seeded subscribers. */
const DOMAIN_SHARE = 10;
export const BENCH_PLAN_NAME = 'Bench Fiber 500';

const TICKET_TYPES = ['incident', 'question', 'billing', 'installation', 'problem', 'task'];
const TICKET_PRIORITIES = ['normal', 'normal', 'high', 'low', 'urgent'];
const ASSIGNEES = ["'noc.jane'", "'noc.bob'", "'support.ann'", 'NULL'];

/** SQL: element (g modulo its length) of a list of SQL expressions. */
function cycle(values: string[], g = 'g'): string {
  return `(ARRAY[${values.join(', ')}])[((${g}) % ${values.length}) + 1]`;
}
const quoted = (values: string[]) => values.map((value) => `'${value}'`);

/**
 * A domain's rows (`rows / 10`) over the timeline, row g about a seeded subscriber spread evenly over the table
 * (`subscriberId`: its id as SQL, with `$6`/`$7` the subscribers' timeline).
 */
function domainSpread(subscribers: SubscriberSeed) {
  const total = Math.max(1, Math.floor(subscribers.total / DOMAIN_SHARE));
  const stride = Math.max(1, Math.floor(subscribers.total / total));
  const subscriberId = seededSubscriberIdSql(`((g - 1) * ${stride}) % ${subscribers.total} + 1`, '$6', '$7');
  return { total, ...timeline(total), subscriberId };
}

/**
 * `rows / 10` tickets about seeded subscribers, most of them closed (the status, resolved_at and closed_at as the
 * table's checks want them), numbered 1…n, with the tenant's ticket counter set past them so creates go on from there.
 * No status history: the list reads none.
 */
export async function seedTickets(
  db: Client,
  tenantId: string,
  subscribers: SubscriberSeed,
  log: (line: string) => void,
): Promise<number> {
  const { total, startMs, stepMs, subscriberId } = domainSpread(subscribers);
  // g % 10: 0–5 closed, 6 resolved, 7 open, 8 pending_customer, 9 new.
  const status = `CASE WHEN g % 10 <= 5 THEN 'closed' WHEN g % 10 = 6 THEN 'resolved' WHEN g % 10 = 7 THEN 'open'
                       WHEN g % 10 = 8 THEN 'pending_customer' ELSE 'new' END`;
  const at = `to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0)`;
  const insert = (from: number, to: number) =>
    db.query(
      `INSERT INTO tickets (tenant_id, id, number, subject, description, type, priority, status, subscriber_id, assignee,
         tags, external_id, metadata, due_at, first_response_at, resolved_at, closed_at, created_at, updated_at)
       SELECT $1, ${ulidSql('tkt', '$2::bigint + g::bigint * $3::bigint', 'g', 'k')}, g,
         'No internet since this morning (seed ' || g || ')',
         'The ONT shows a red LOS light; the customer already restarted it twice. Seed ticket ' || g || '.',
         ${cycle(quoted(TICKET_TYPES))}, ${cycle(quoted(TICKET_PRIORITIES))}, status, subscriber_id,
         ${cycle(ASSIGNEES)},
         CASE WHEN g % 3 = 0 THEN ARRAY['fiber', 'outage'] ELSE ARRAY['fiber'] END, NULL,
         jsonb_build_object('channel', 'phone'),
         ${at} + interval '24 hours',
         CASE WHEN status <> 'new' THEN ${at} + interval '1 hour' END,
         CASE WHEN status IN ('resolved', 'closed') THEN ${at} + interval '4 hours' END,
         CASE WHEN status = 'closed' THEN ${at} + interval '2 days' END,
         ${at}, ${at}
       FROM (SELECT g, ${status} AS status, ${subscriberId} AS subscriber_id
               FROM generate_series($4::int, $5::int) AS g) AS seeded`,
      [tenantId, startMs, stepMs, from, to, subscribers.startMs, subscribers.stepMs],
    );
  await withSecondaryIndexesDropped(db, 'tickets', log, () =>
    inChunks('tickets', total, log, async (from, to) => {
      await insert(from, to);
    }),
  );
  await db.query(
    `INSERT INTO ticket_counters (tenant_id, last_number) VALUES ($1, $2)
     ON CONFLICT (tenant_id) DO UPDATE SET last_number = GREATEST(ticket_counters.last_number, EXCLUDED.last_number)`,
    [tenantId, total],
  );
  return total;
}

/** The plan the seeded services are on and the bench's service creates order (`services.create`). */
export async function seedPlan(db: Client, tenantId: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO service_plans (tenant_id, id, name, download_kbps, upload_kbps, price, currency, billing_period, active,
       created_at, updated_at)
     SELECT $1, ${ulidSql('plan', '$2::bigint', '1', 'p')}, $3, 500000, 100000, 4999, '${SEED_CURRENCY}', 'monthly',
       true, to_timestamp($2::bigint / 1000.0), to_timestamp($2::bigint / 1000.0)
     RETURNING id`,
    [tenantId, Date.now() - SPREAD_MS - DAY_MS, BENCH_PLAN_NAME],
  );
  return rows[0].id;
}

/**
 * `rows / 10` active services (every tenth seeded subscriber, PPPoE user `seed-svc-<n>`) on the bench plan, each
 * with the completed activate order that brought it up.
 */
export async function seedServices(
  db: Client,
  tenantId: string,
  planId: string,
  subscribers: SubscriberSeed,
  log: (line: string) => void,
): Promise<number> {
  const { total, startMs, stepMs, subscriberId } = domainSpread(subscribers);
  const at = `to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0)`;
  await withSecondaryIndexesDropped(db, 'services', log, () =>
    inChunks('services', total, log, async (from, to) => {
      await db.query(
        `INSERT INTO services (tenant_id, id, subscriber_id, plan_id, status, pppoe_username, radius_username,
           pppoe_password, static_ipv4, cpe_mac, installation_address, activated_at, terminated_at, created_at,
           updated_at)
         SELECT $1, ${ulidSql('svc', '$2::bigint + g::bigint * $3::bigint', 'g', 'v')}, subscriber_id, $8, 'active',
           'seed-svc-' || g, (SELECT slug FROM tenants WHERE id = $1) || '/seed-svc-' || g, 'seed-password-' || g,
           NULL, '02:00:' || substr(lpad(to_hex(g), 8, '0'), 1, 2) || ':' || substr(lpad(to_hex(g), 8, '0'), 3, 2)
             || ':' || substr(lpad(to_hex(g), 8, '0'), 5, 2) || ':' || substr(lpad(to_hex(g), 8, '0'), 7, 2),
           g || ' Fiber Way, Springfield', ${at} + interval '5 seconds', NULL, ${at}, ${at} + interval '5 seconds'
         FROM (SELECT g, ${subscriberId} AS subscriber_id FROM generate_series($4::int, $5::int) AS g) AS seeded`,
        [tenantId, startMs, stepMs, from, to, subscribers.startMs, subscribers.stepMs, planId],
      );
    }),
  );
  await withSecondaryIndexesDropped(db, 'provisioning_orders', log, async () => {
    const started = Date.now();
    await db.query(
      `INSERT INTO provisioning_orders (tenant_id, id, service_id, subscriber_id, action, status, plan_id, changes,
         reason, attempts, last_error, next_attempt_at, lease_id, lease_until, completed_at, created_at, updated_at,
         disconnect, coa)
       SELECT v.tenant_id, 'ord_' || substr(v.id, 5), v.id, v.subscriber_id, 'activate', 'completed', v.plan_id, NULL,
         NULL, 1, NULL, v.created_at, NULL, NULL, v.activated_at, v.created_at, v.activated_at, NULL, NULL
       FROM services v WHERE v.tenant_id = $1 AND v.pppoe_username LIKE 'seed-svc-%'`,
      [tenantId],
    );
    log(
      `  provisioning_orders: ${total.toLocaleString('en-US')} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
  return total;
}

/**
 * The history pool's ledgers: HISTORY_DEPTH entries per subscriber, invoices and payments of the plan's price in
 * turn (so the running balance goes 4999, 0, 4999, …), and the balance row they end on.
 */
export async function seedLedger(
  db: Client,
  tenantId: string,
  subscribers: SubscriberSeed,
  log: (line: string) => void,
): Promise<number> {
  const pool = historyPool(subscribers.total);
  const total = pool.size * HISTORY_DEPTH;
  const { startMs, stepMs } = timeline(total);
  // Entry g belongs to pool subscriber (g - 1) % size and is its ((g - 1) / size)-th, so each one's entries are in
  // time order and spread over the whole timeline.
  const subscriberId = seededSubscriberIdSql(historyPositionSql(`(g - 1) % ${pool.size}`, pool), '$6', '$7');
  const invoice = `(((g - 1) / ${pool.size}) % 2 = 0)`;
  await withSecondaryIndexesDropped(db, 'ledger_entries', log, () =>
    inChunks('ledger_entries', total, log, async (from, to) => {
      await db.query(
        `INSERT INTO ledger_entries (tenant_id, id, subscriber_id, currency, type, amount, balance_after, source_id,
           created_at)
         SELECT $1, ${ulidSql('led', '$2::bigint + g::bigint * $3::bigint', 'g', 'l')}, subscriber_id,
           '${SEED_CURRENCY}', CASE WHEN ${invoice} THEN 'invoice' ELSE 'payment' END,
           CASE WHEN ${invoice} THEN 4999 ELSE -4999 END, CASE WHEN ${invoice} THEN 4999 ELSE 0 END,
           CASE WHEN ${invoice} THEN 'inv_' ELSE 'txn_' END
             || substr(${ulidSql('x', '$2::bigint + g::bigint * $3::bigint', 'g', 'src')}, 3),
           to_timestamp(($2::bigint + g::bigint * $3::bigint) / 1000.0)
         FROM (SELECT g, ${subscriberId} AS subscriber_id FROM generate_series($4::int, $5::int) AS g) AS seeded`,
        [tenantId, startMs, stepMs, from, to, subscribers.startMs, subscribers.stepMs],
      );
    }),
  );
  await db.query(
    `INSERT INTO subscriber_balances (tenant_id, subscriber_id, currency, balance)
     SELECT DISTINCT ON (subscriber_id) tenant_id, subscriber_id, currency, balance_after
       FROM ledger_entries WHERE tenant_id = $1 ORDER BY subscriber_id, created_at DESC, id DESC
     ON CONFLICT (tenant_id, subscriber_id, currency) DO NOTHING`,
    [tenantId],
  );
  return total;
}

/** What the domain cases need from the seeded database (found by reading it, so `--reuse` finds it too). */
export interface DomainSeed {
  planId: string;
  /** Subscribers with a full ledger page and a full page of events about them. */
  historySubscriberIds: string[];
}

export async function loadDomainSeed(db: Client, tenantId: string): Promise<DomainSeed | null> {
  const plan = await db.query<{ id: string }>(
    'SELECT id FROM service_plans WHERE tenant_id = $1 AND name = $2',
    [tenantId, BENCH_PLAN_NAME],
  );
  if (plan.rows.length === 0) {
    return null;
  }
  const { rows } = await db.query<{ subscriber_id: string }>(
    `SELECT subscriber_id FROM ledger_entries WHERE tenant_id = $1
      GROUP BY subscriber_id HAVING count(*) >= $2 ORDER BY md5(subscriber_id)`,
    [tenantId, HISTORY_DEPTH],
  );
  if (rows.length === 0) {
    return null;
  }
  return { planId: plan.rows[0].id, historySubscriberIds: rows.map((row) => row.subscriber_id) };
}
