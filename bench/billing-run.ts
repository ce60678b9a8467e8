/**
 * `billing.run` (issue: recurring billing): one tenant with `subscribers` subscribers, each with one active service
 * (every second with a pending charge, every fourth with a payment to auto-apply: issue #28; every line taxed at
 * the profile's default rate: issue #29), billed by one bill run of the server under test, on the bench's database. Reported as subscribers/s and its ratio
 * to baseline (a)'s requests/s measured in the same run (target ≥ 1.0: a batched run must beat single-row inserts),
 * with the server's peak RSS during the run (target ≤ 300 MB).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import { BOOTSTRAP_TOKEN } from './cases';
import type { ServerUnderTest } from './processes';
import { log, type Measurement } from './report';

export const AS_OF = '2026-01-01';

export interface BillingRunResult {
  subscribers: number;
  seconds: number;
  subscribersPerS: number;
  baselineRps: number;
  ratio: number;
  peakRssMb: number;
  invoices: number;
  met: { ratio: boolean; rss: boolean };
}

/** A rate against baseline (a)'s requests/s in the same run (its best connection count), and that ratio. */
export function toBaselineA(
  measurements: Measurement[],
  perS: number,
): { baselineRps: number; ratio: number } {
  const baselineRps = Math.max(
    0,
    ...measurements.filter((m) => m.case === 'baseline.insert').map((m) => m.rps),
  );
  return { baselineRps, ratio: baselineRps > 0 ? perS / baselineRps : 0 };
}

/** A call of the server under test's API as the bench's admin, answering `data`; throws on a non-2xx. */
export async function api(
  server: ServerUnderTest,
  path: string,
  init: RequestInit & { tenant?: string } = {},
) {
  const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
    ...init,
    headers: {
      Authorization: `Bearer ${BOOTSTRAP_TOKEN}`,
      'Content-Type': 'application/json',
      ...(init.tenant ? { 'X-Tenant-ID': init.tenant } : {}),
    },
  });
  const body = (await response.json()) as { data: Record<string, unknown> };
  if (!response.ok) {
    throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${JSON.stringify(body)}`);
  }
  return body.data;
}

/**
 * Every fourth subscriber's payment received and not applied, in statements of 2,000: each one's aging trigger takes
 * a transaction-scoped advisory lock of its subscriber (docs/reports.md), and 25,000 in one transaction overflow
 * Postgres's lock table.
 */
async function seedUnappliedPayments(
  db: Client,
  tenantId: string,
  tag: string,
  old: string,
  total: number,
): Promise<void> {
  for (let from = 4; from <= total; from += 8_000) {
    await db.query(
      `INSERT INTO transactions (tenant_id, id, subscriber_id, kind, source, amount, currency, external_id, reference,
         description, method, occurred_at, refund_of, metadata, allocated_amount, refunded_amount, created_at)
       SELECT $1, 'txn_BR${tag}' || lpad(g::text, 12, '0'), 'sub_BR${tag}' || lpad(g::text, 12, '0'), 'payment', 'external', 2500,
         'USD', NULL, NULL, NULL, NULL, $2::timestamptz, NULL, '{}'::jsonb, 0, 0, $2::timestamptz
       FROM generate_series($3::int, $4::int, 4) AS g`,
      [tenantId, old, from, Math.min(total, from + 7_996)],
    );
  }
}

/** A tenant of its own, its default profile, one plan, and the subscribers with an active service each (SQL). */
export async function seedBillingTenant(db: Client, server: ServerUnderTest, total: number): Promise<string> {
  const tenant = await api(server, '/tenants', {
    method: 'POST',
    body: JSON.stringify({ slug: `bench-billing-${Date.now()}`, name: 'Bench billing' }),
  });
  const tenantId = tenant.id as string;
  // Issue #29: every line is taxed, at the profile's default rate.
  const vat = await api(server, '/tax-rates', {
    method: 'POST',
    tenant: tenantId,
    body: JSON.stringify({ name: 'VAT', percentage: '21' }),
  });
  await api(server, '/billing-profiles', {
    method: 'POST',
    tenant: tenantId,
    body: JSON.stringify({
      name: 'Monthly',
      currency: 'USD',
      billing_day: 1,
      payment_terms_days: 14,
      is_default: true,
      tax_rate_ids: [vat.id],
    }),
  });
  const plan = await api(server, '/service-plans', {
    method: 'POST',
    tenant: tenantId,
    body: JSON.stringify({
      name: 'Fiber 500',
      download_kbps: 500000,
      upload_kbps: 100000,
      price: 4999,
      currency: 'USD',
    }),
  });
  const old = '2025-06-01T00:00:00Z';
  // Ids unique to this run (base 36 of the time, upper case), so --reuse keeps earlier runs' rows beside them.
  const tag = Date.now().toString(36).toUpperCase().padStart(9, '0');
  for (let from = 1; from <= total; from += 50_000) {
    const to = Math.min(total, from + 49_999);
    await db.query(
      `INSERT INTO subscribers (tenant_id, id, external_id, full_name, email, email_normalized, phone, status,
         suspension_reason, billing_profile_id, address, metadata, created_at, updated_at)
       SELECT $1, 'sub_BR${tag}' || lpad(g::text, 12, '0'), NULL, 'Billed ' || g, NULL, NULL, NULL, 'active', NULL, NULL, NULL,
         '{}'::jsonb, $2::timestamptz, $2::timestamptz
       FROM generate_series($3::int, $4::int) AS g`,
      [tenantId, old, from, to],
    );
    await db.query(
      `INSERT INTO services (tenant_id, id, subscriber_id, plan_id, status, pppoe_username, radius_username,
         pppoe_password, static_ipv4, cpe_mac, installation_address, activated_at, terminated_at, created_at, updated_at)
       SELECT $1, 'svc_BR${tag}' || lpad(g::text, 12, '0'), 'sub_BR${tag}' || lpad(g::text, 12, '0'), $2, 'active',
         'user' || g, 'bench/user' || g, 'secret', NULL, NULL, NULL, $3::timestamptz, NULL, $3::timestamptz, $3::timestamptz
       FROM generate_series($4::int, $5::int) AS g`,
      [tenantId, plan.id, old, from, to],
    );
  }
  // Issue #28: every second subscriber has a pending charge the run's invoice carries, and every fourth a payment
  // received and not yet applied, which auto-apply (the profile's default) spends on the new invoice.
  await db.query(
    `INSERT INTO charges (tenant_id, id, subscriber_id, service_id, description, quantity, unit_amount, amount, currency,
       status, source, source_id, period_start, period_end, invoice_id, credit_id, invoiced_at, created_at)
     SELECT $1, 'chg_BR${tag}' || lpad(g::text, 12, '0'), 'sub_BR${tag}' || lpad(g::text, 12, '0'), NULL, 'Router', 1, 4900, 4900,
       'USD', 'pending', 'api', NULL, NULL, NULL, NULL, NULL, NULL, $2::timestamptz
     FROM generate_series(2, $3::int, 2) AS g`,
    [tenantId, old, total],
  );
  await seedUnappliedPayments(db, tenantId, tag, old, total);
  await db.query(
    'ANALYZE subscribers; ANALYZE services; ANALYZE billing_periods; ANALYZE invoices; ANALYZE charges; ANALYZE transactions',
  );
  return tenantId;
}

export async function benchBillingRun(
  db: Client,
  server: ServerUnderTest,
  measurements: Measurement[],
  total: number,
  resultsDir: string,
  stamp: string,
): Promise<BillingRunResult> {
  log(`\nbilling.run: seeding ${total.toLocaleString('en-US')} subscribers with one active service each…`);
  const tenantId = await seedBillingTenant(db, server, total);
  server.rss.window();
  const run = await api(server, '/billing-runs', {
    method: 'POST',
    tenant: tenantId,
    body: JSON.stringify({ as_of: AS_OF }),
  });
  let current = run;
  while (current.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 250));
    current = await api(server, `/billing-runs/${run.id as string}`, { tenant: tenantId });
  }
  const peakRssMb = server.rss.window();
  if (current.status !== 'completed' || current.subscribers_billed !== total) {
    throw new Error(`billing.run did not bill everyone: ${JSON.stringify(current)}`);
  }
  const seconds =
    (Date.parse(current.completed_at as string) - Date.parse(current.created_at as string)) / 1000;
  const subscribersPerS = total / seconds;
  const { baselineRps, ratio } = toBaselineA(measurements, subscribersPerS);
  const result: BillingRunResult = {
    subscribers: total,
    seconds,
    subscribersPerS,
    baselineRps,
    ratio,
    peakRssMb,
    invoices: current.invoices_created as number,
    met: { ratio: ratio >= 1, rss: peakRssMb <= 300 },
  };
  log(
    `billing.run: ${total.toLocaleString('en-US')} subscribers billed in ${seconds.toFixed(1)} s = ` +
      `${subscribersPerS.toFixed(0)} subscribers/s; baseline (a) ${baselineRps.toFixed(0)} req/s; ratio ` +
      `${ratio.toFixed(2)} (target ≥ 1.0: ${result.met.ratio ? 'met' : 'NOT met'}); server peak RSS ` +
      `${peakRssMb.toFixed(0)} MB (≤ 300: ${result.met.rss ? 'met' : 'NOT met'})`,
  );
  writeFileSync(join(resultsDir, `billing-run-${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
