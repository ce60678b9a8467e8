import { Client } from 'pg';
import request from 'supertest';
import { expectList } from './envelope';
import { bearer } from './factories';

/**
 * For suites that drive servers as child processes by URL and read their database directly (the crash, several-
 * instance and fault suites): one statement on a fresh connection, every page of a list, and the RADIUS rows of
 * some usernames.
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
