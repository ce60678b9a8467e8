import { Client } from 'pg';
import { HISTORY_DEPTH, historyPool, historyPositionSql } from './seed';
import {
  DAY_MS,
  inChunks,
  SEED_CURRENCY,
  seededSubscriberIdSql,
  type SubscriberSeed,
  SPREAD_MS,
  timeline,
  ulidSql,
  withSecondaryIndexesDropped,
} from './seed-sql';

/** Seeding of the other domains' rows for the benchmarks (bench/seed.ts for the subscribers, events and billing). */

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
