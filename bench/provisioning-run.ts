/**
 * `provisioning.run` (issue #19 target 5): one tenant with `orders` pending services, each with its pending `activate`
 * order, carried out by the server's provisioning worker through the radius-sql driver (the server's default
 * NETWORK_DRIVER) on the bench's database. Reported as orders/s and its ratio to baseline (a)'s requests/s measured
 * in the same run (target ≥ 0.5), with the statements the server sent and the CPU it and its database used per order,
 * and its peak RSS during the run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import { api, toBaselineA } from './billing-run';
import { processCpuMs } from './process-stats';
import type { ServerUnderTest } from './processes';
import { log, type Measurement } from './report';

/** How often the bench looks for the worker's first claim: the start is known to within this. */
const CLAIM_POLL_MS = 10;
const TIMEOUT_MS = 600_000;
/** The plan every service is on, and the rows radius-sql writes for it (radiusUser in radius-sql.driver.ts). */
const PLAN = { downloadKbps: 500_000, uploadKbps: 100_000 };
const RATE_REPLY = [
  `Mikrotik-Rate-Limit:=${PLAN.uploadKbps}k/${PLAN.downloadKbps}k`,
  `WISPr-Bandwidth-Max-Down:=${PLAN.downloadKbps * 1000}`,
  `WISPr-Bandwidth-Max-Up:=${PLAN.uploadKbps * 1000}`,
];

export interface ProvisioningRunResult {
  orders: number;
  seconds: number;
  ordersPerS: number;
  baselineRps: number;
  ratio: number;
  statementsPerOrder: number;
  /** CPU per order of the server and of the Postgres backends serving the bench's database (others' excluded). */
  cpuMsPerOrder: { server: number; database: number };
  /** What the server sent while it ran, most frequent first. */
  statements: { count: number; text: string }[];
  peakRssMb: number;
  met: { ratio: boolean };
}

/**
 * A tenant of its own and one plan (API), then the subscribers, their pending services (every tenth with a static
 * address) and one `activate` order each, as `POST /subscribers/{id}/services` leaves them, created and due one
 * millisecond apart as creates at 1,000/s would be, in one transaction (SQL), so the worker finds all of them at once
 * on its next poll tick; `beforeCommit` runs just before it commits. The creation events are not seeded: the worker
 * never reads them.
 */
async function seed(
  db: Client,
  server: ServerUnderTest,
  total: number,
  beforeCommit: () => Promise<void>,
): Promise<{ tenantId: string; committing: number }> {
  const run = Date.now();
  const slug = `bench-provisioning-${run}`;
  // Ids of 26 characters after the prefix, like the app's, unique to this run (--reuse keeps earlier runs' rows).
  const tag = run.toString(36).toUpperCase().padStart(8, '0');
  const tenant = await api(server, '/tenants', {
    method: 'POST',
    body: JSON.stringify({ slug, name: 'Bench provisioning' }),
  });
  const tenantId = tenant.id as string;
  const plan = await api(server, '/service-plans', {
    method: 'POST',
    tenant: tenantId,
    body: JSON.stringify({
      name: 'Fiber 500',
      download_kbps: PLAN.downloadKbps,
      upload_kbps: PLAN.uploadKbps,
      price: 4999,
      currency: 'USD',
    }),
  });
  let committing = 0;
  await db.query('BEGIN');
  try {
    await db.query(
      `INSERT INTO subscribers (tenant_id, id, external_id, full_name, email, email_normalized, phone, status,
         suspension_reason, billing_profile_id, address, metadata, created_at, updated_at)
       SELECT $1, 'sub_' || $3 || lpad(g::text, 18, '0'), NULL, 'Provisioned ' || g, NULL, NULL, NULL, 'active', NULL,
         NULL, NULL, '{}'::jsonb, now(), now()
       FROM generate_series(1, $2::int) AS g`,
      [tenantId, total, tag],
    );
    await db.query(
      `INSERT INTO services (tenant_id, id, subscriber_id, plan_id, status, pppoe_username, radius_username,
         pppoe_password, static_ipv4, cpe_mac, installation_address, activated_at, terminated_at, created_at, updated_at)
       SELECT $1, 'svc_' || $5 || lpad(g::text, 18, '0'), 'sub_' || $5 || lpad(g::text, 18, '0'), $2, 'pending',
         'pr' || g, $3 || '/pr' || g, 'secret-' || g,
         CASE WHEN g % 10 = 0 THEN '100.' || (64 + g / 65536) || '.' || (g / 256 % 256) || '.' || (g % 256) END,
         NULL, NULL, NULL, NULL, now(), now()
       FROM generate_series(1, $4::int) AS g`,
      [tenantId, plan.id, slug, total, tag],
    );
    await db.query(
      `INSERT INTO provisioning_orders (tenant_id, id, service_id, subscriber_id, action, status, plan_id, changes,
         reason, attempts, last_error, next_attempt_at, lease_id, lease_until, completed_at, disconnect, coa,
         created_at, updated_at)
       SELECT $1, 'ord_' || $4 || lpad(g::text, 18, '0'), 'svc_' || $4 || lpad(g::text, 18, '0'),
         'sub_' || $4 || lpad(g::text, 18, '0'), 'activate', 'acknowledged', $2, NULL, NULL, 0, NULL, t, NULL, NULL, NULL,
         NULL, NULL, t, t
       FROM generate_series(1, $3::int) AS g, LATERAL (SELECT now() - ($3::int - g) * interval '1 ms' AS t) AS at`,
      [tenantId, plan.id, total, tag],
    );
    // Analysed as a live system's autovacuum would have them (the bench's Postgres runs without it), before the
    // worker can see them.
    await db.query('ANALYZE subscribers; ANALYZE services; ANALYZE provisioning_orders');
    await beforeCommit();
    committing = Date.now();
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK');
    throw error;
  }
  return { tenantId, committing };
}

/** CPU ms used so far by the server's processes and by the backends connected to the bench's database, by pid. */
async function cpuNow(
  db: Client,
  server: ServerUnderTest,
): Promise<{ server: number; database: Map<number, number> }> {
  const { rows } = await db.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return {
    server: server.pids.reduce((sum, pid) => sum + processCpuMs(pid), 0),
    database: new Map(rows.map(({ pid }) => [pid, processCpuMs(pid)])),
  };
}

/**
 * The bench's clock time just before the worker's first claim: the last look that found none, or the seed's commit
 * when the first look already finds one (the measured time is never shorter than the real one).
 */
async function beforeFirstClaim(db: Client, tenantId: string, committing: number): Promise<number> {
  let unclaimedAt = committing;
  for (;;) {
    const lookedAt = Date.now();
    const { rows } = await db.query<{ claimed: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM provisioning_orders WHERE tenant_id = $1 AND status <> 'acknowledged') AS claimed`,
      [tenantId],
    );
    if (rows[0].claimed) {
      return unclaimedAt;
    }
    if (lookedAt - committing > TIMEOUT_MS) {
      throw new Error('provisioning.run: the worker never claimed an order');
    }
    unclaimedAt = lookedAt;
    await new Promise((resolve) => setTimeout(resolve, CLAIM_POLL_MS));
  }
}

/** Every order completed on its first attempt with both its events, every service active with the right RADIUS rows. */
async function verify(db: Client, tenantId: string, total: number): Promise<void> {
  const { rows: orders } = await db.query<{ completed: number; once: number }>(
    `SELECT count(*) FILTER (WHERE status = 'completed' AND completed_at IS NOT NULL)::int AS completed,
            count(*) FILTER (WHERE attempts = 1 AND lease_id IS NULL)::int AS once
       FROM provisioning_orders WHERE tenant_id = $1`,
    [tenantId],
  );
  const { rows: services } = await db.query<{ active: number }>(
    `SELECT count(*)::int AS active FROM services WHERE tenant_id = $1 AND status = 'active' AND activated_at IS NOT NULL`,
    [tenantId],
  );
  const { rows: events } = await db.query<{ type: string; n: number; subjects: number }>(
    `SELECT type, count(*)::int AS n, count(DISTINCT subject_id)::int AS subjects FROM events
      WHERE tenant_id = $1 AND type IN ('provisioning_order.completed', 'service.activated') GROUP BY type`,
    [tenantId],
  );
  const problems: string[] = [];
  if (orders[0].completed !== total || orders[0].once !== total) {
    problems.push(`orders: ${JSON.stringify(orders[0])} of ${total}`);
  }
  if (services[0].active !== total) {
    problems.push(`active services: ${services[0].active} of ${total}`);
  }
  for (const type of ['provisioning_order.completed', 'service.activated']) {
    const row = events.find((event) => event.type === type);
    if (row?.n !== total || row.subjects !== total) {
      problems.push(`${type} events: ${JSON.stringify(row ?? null)} for ${total}`);
    }
  }
  const { rows: radius } = await db.query<{
    password: string;
    static_ipv4: string | null;
    checks: string[] | null;
    replies: string[] | null;
    groups: number;
  }>(
    `SELECT s.pppoe_password AS password, s.static_ipv4,
            (SELECT array_agg(attribute || op || value ORDER BY attribute) FROM radcheck c
              WHERE c.username = s.radius_username) AS checks,
            (SELECT array_agg(attribute || op || value ORDER BY attribute) FROM radreply r
              WHERE r.username = s.radius_username) AS replies,
            (SELECT count(*)::int FROM radusergroup g WHERE g.username = s.radius_username) AS groups
       FROM services s WHERE s.tenant_id = $1`,
    [tenantId],
  );
  const wrong = radius.filter((row) => {
    const replies = [...(row.static_ipv4 ? [`Framed-IP-Address:=${row.static_ipv4}`] : []), ...RATE_REPLY];
    return (
      JSON.stringify(row.checks) !== JSON.stringify([`Cleartext-Password:=${row.password}`]) ||
      JSON.stringify(row.replies) !== JSON.stringify(replies) ||
      row.groups !== 0
    );
  });
  if (radius.length !== total || wrong.length > 0) {
    problems.push(
      `RADIUS rows: ${wrong.length} of ${radius.length} services wrong, e.g. ${JSON.stringify(wrong[0])}`,
    );
  }
  if (problems.length > 0) {
    throw new Error(`provisioning.run did not carry out every order exactly once: ${problems.join('; ')}`);
  }
}

export async function benchProvisioningRun(
  db: Client,
  server: ServerUnderTest,
  measurements: Measurement[],
  total: number,
  resultsDir: string,
  stamp: string,
): Promise<ProvisioningRunResult> {
  log(
    `\nprovisioning.run: seeding ${total.toLocaleString('en-US')} pending services with their activate orders…`,
  );
  let cpuBefore = { server: 0, database: new Map<number, number>() };
  // The worker may take the orders as soon as they commit: the windows open just before.
  const { tenantId, committing } = await seed(db, server, total, async () => {
    server.rss.window();
    await server.queryStats(true);
    cpuBefore = await cpuNow(db, server);
  });
  const started = await beforeFirstClaim(db, tenantId, committing);
  for (;;) {
    const { rows } = await db.query<{ open: number }>(
      `SELECT count(*)::int AS open FROM provisioning_orders
        WHERE tenant_id = $1 AND status IN ('acknowledged', 'in_progress')`,
      [tenantId],
    );
    if (rows[0].open === 0) {
      break;
    }
    if (Date.now() - started > TIMEOUT_MS) {
      throw new Error(`provisioning.run: ${rows[0].open} orders still open after ${TIMEOUT_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const peakRssMb = server.rss.window();
  const cpuAfter = await cpuNow(db, server);
  const databaseCpuMs = [...cpuAfter.database].reduce(
    (sum, [pid, ms]) => sum + ms - (cpuBefore.database.get(pid) ?? 0),
    0,
  );
  const stats = (await server.queryStats(false)).sort((a, b) => b.count - a.count);
  const statements = stats.reduce((sum, stat) => sum + stat.count, 0);
  await verify(db, tenantId, total);
  const { rows } = await db.query<{ last: Date }>(
    'SELECT max(completed_at) AS last FROM provisioning_orders WHERE tenant_id = $1',
    [tenantId],
  );
  const seconds = (rows[0].last.getTime() - started) / 1000;
  const ordersPerS = total / seconds;
  const { baselineRps, ratio } = toBaselineA(measurements, ordersPerS);
  const result: ProvisioningRunResult = {
    orders: total,
    seconds,
    ordersPerS,
    baselineRps,
    ratio,
    statementsPerOrder: statements / total,
    cpuMsPerOrder: { server: (cpuAfter.server - cpuBefore.server) / total, database: databaseCpuMs / total },
    statements: stats.map(({ count, text }) => ({ count, text })),
    peakRssMb,
    met: { ratio: ratio >= 0.5 },
  };
  log(
    `provisioning.run: ${total.toLocaleString('en-US')} orders carried out in ${seconds.toFixed(2)} s = ` +
      `${ordersPerS.toFixed(0)} orders/s; baseline (a) ${baselineRps.toFixed(0)} req/s; ratio ` +
      `${ratio.toFixed(2)} (target ≥ 0.5: ${result.met.ratio ? 'met' : 'NOT met'}); ` +
      `${result.statementsPerOrder.toFixed(2)} statements and CPU ${result.cpuMsPerOrder.server.toFixed(2)} ms ` +
      `(server) + ${result.cpuMsPerOrder.database.toFixed(2)} ms (database) per order; server peak RSS ` +
      `${peakRssMb.toFixed(0)} MB`,
  );
  writeFileSync(join(resultsDir, `provisioning-run-${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
