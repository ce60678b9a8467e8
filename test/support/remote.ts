import { Client } from 'pg';
import request from 'supertest';
import { expectList } from './envelope';
import { bearer } from './factories';
import type { Order } from './provisioning-factory';
import { ensure } from './test-app';
import { waitFor } from './wait-for';

/**
 * For suites that drive servers as child processes by URL and read their database directly (the crash, several-
 * instance and fault suites): one statement on a fresh connection, every page of a list, the RADIUS rows of some
 * usernames, many POSTs at once, and counts of what repeated.
 */

/** One statement on a connection of its own (the suite's servers may be down, or another process' pool full). */
export async function queryAt<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Every record of a list route of the server at `url`, page by page (100 at a time). */
export async function listAllAt<T>(
  url: string,
  token: string,
  path: string,
  filter: Record<string, string> = {},
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const res = await request(url)
      .get(path)
      .query({ ...filter, limit: 100, ...(cursor ? { starting_after: cursor } : {}) })
      .set(bearer(token));
    expectList(res);
    items.push(...(res.body.data as T[]));
    cursor = res.body.meta.pagination.next_cursor as string | null;
  } while (cursor);
  return items;
}

export type RadiusRowsByUsername = Record<string, { check: string[]; reply: string[]; groups: string[] }>;

/**
 * What FreeRADIUS would read for each username, from the database at `url`: "attribute op value" lines of radcheck
 * and radreply, sorted, and "group : priority" lines of radusergroup.
 */
export async function radiusRowsAt(url: string, usernames: string[]): Promise<RadiusRowsByUsername> {
  const rows: RadiusRowsByUsername = {};
  for (const username of usernames) {
    rows[username] = { check: [], reply: [], groups: [] };
  }
  const tables = [
    ['check', 'SELECT username, attribute, op, value FROM radcheck WHERE username = ANY($1)'],
    ['reply', 'SELECT username, attribute, op, value FROM radreply WHERE username = ANY($1)'],
    [
      'groups',
      "SELECT username, groupname AS attribute, ':' AS op, priority::text AS value FROM radusergroup WHERE username = ANY($1)",
    ],
  ] as const;
  for (const [part, sql] of tables) {
    const found = await queryAt<{ username: string; attribute: string; op: string; value: string }>(
      url,
      sql,
      [usernames],
    );
    for (const row of found) {
      rows[row.username][part].push(`${row.attribute} ${row.op} ${row.value}`);
    }
  }
  for (const username of usernames) {
    rows[username].check.sort();
    rows[username].reply.sort();
  }
  return rows;
}

/**
 * What radius-sql leaves for a service (docs/network.md), in radiusRowsAt's lines: an active one rate-limited to
 * `plan`, a suspended one in the `suspended` group; no static address.
 */
export function expectedRadiusLines(
  status: 'active' | 'suspended',
  password: string | undefined,
  plan: { download_kbps: number; upload_kbps: number },
  tenantSlug: string,
): RadiusRowsByUsername[string] {
  const check = [`Cleartext-Password := ${password}`];
  if (status === 'suspended') {
    return { check, reply: [], groups: [`suspended:${tenantSlug} : 0`] };
  }
  return {
    check,
    reply: [
      `Mikrotik-Rate-Limit := ${plan.upload_kbps}k/${plan.download_kbps}k`,
      `WISPr-Bandwidth-Max-Down := ${plan.download_kbps * 1000}`,
      `WISPr-Bandwidth-Max-Up := ${plan.upload_kbps * 1000}`,
    ].sort(),
    groups: [],
  };
}

/**
 * `count` POSTs through `token`, `parallel` at a time, request i to urls[i % urls.length]; each must answer `status`.
 * Answers the `data` of each, in order.
 */
export async function postMany(
  urls: string[],
  token: string,
  count: number,
  parallel: number,
  make: (i: number) => { path: string; body: Record<string, unknown> },
  status: number,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, (_, k) => start + k);
    const answers = await Promise.all(
      batch.map(async (i) => {
        const { path, body } = make(i);
        const res = await request(urls[i % urls.length])
          .post(path)
          .set(bearer(token))
          .send(body);
        return ensure(res, status, `POST ${path} (${i})`);
      }),
    );
    out.push(...answers.map((res) => res.body.data as Record<string, unknown>));
  }
  return out;
}

/** How many times each value occurs. */
export function tally(values: (string | number)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) {
    counts[value] = (counts[value] ?? 0) + 1;
  }
  return counts;
}

/** The values that occur more than once, with their counts: `{}` when none repeats. */
export function repeats(values: (string | number)[]): Record<string, number> {
  return Object.fromEntries(Object.entries(tally(values)).filter(([, n]) => n > 1));
}

/**
 * Waits until the tenant has `count` provisioning orders and none is open, and answers them all; fails at once when
 * one has failed, and says how many were in each status when time runs out.
 */
export async function ordersEnded(
  url: string,
  token: string,
  count: number,
  timeoutMs = 45_000,
): Promise<Order[]> {
  let last: Order[] = [];
  return waitFor(
    async () => {
      last = await listAllAt<Order>(url, token, '/api/v1/provisioning-orders');
      const failed = last.filter((order) => order.status === 'failed');
      if (failed.length > 0) {
        throw new Error(`orders failed: ${JSON.stringify(failed)}`);
      }
      const open = last.filter((order) => ['acknowledged', 'in_progress'].includes(order.status));
      return last.length === count && open.length === 0 ? last : undefined;
    },
    { timeout: timeoutMs, interval: 50, what: `all ${count} orders ended` },
  ).catch((error: Error) => {
    throw new Error(
      `${error.message} (last seen: ${JSON.stringify(tally(last.map((order) => order.status)))})`,
    );
  });
}
