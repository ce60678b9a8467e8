import type { RadiusAttribute } from './radius.repository';

/**
 * The statements of a tenant's suspended group and of radacct's retention (issue 33), run by RadiusRepository in its
 * transactions and connections (the API's database or RADIUS_DATABASE_URL's).
 */

type Query = (sql: string, params: unknown[]) => Promise<unknown>;

/** The group suspended services were all put in before issue 33 (docs/network.md). */
export const LEGACY_SUSPENDED_GROUP = 'suspended';

/**
 * The group of a tenant's suspended services, by the realm of their usernames (`<slug>/…`): `suspended:<slug>`. Its
 * rows say what a suspended login gets under the tenant's suspension mode (docs/network.md), so switching the mode
 * rewrites this group and never the usernames in it.
 */
export function suspendedGroupOf(username: string): string {
  return `suspended:${username.slice(0, Math.max(username.indexOf('/'), 0))}`;
}

/** A group's check and reply items (radgroupcheck, radgroupreply). */
export interface RadiusGroup {
  check: RadiusAttribute[];
  reply: RadiusAttribute[];
}

/** Rows answered by `query`: the API's own database answers an array, a pg Pool client a result. */
function rowsOf(result: unknown): Record<string, unknown>[] {
  return Array.isArray(result)
    ? (result as Record<string, unknown>[])
    : (result as { rows: Record<string, unknown>[] }).rows;
}

async function insertGroupRows(query: Query, group: string, rows: RadiusGroup): Promise<void> {
  for (const [table, items] of [
    ['radgroupcheck', rows.check],
    ['radgroupreply', rows.reply],
  ] as const) {
    if (items.length > 0) {
      await query(
        `INSERT INTO ${table} (groupname, attribute, op, value)
         SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])`,
        [group, items.map((row) => row.attribute), items.map((row) => row.op), items.map((row) => row.value)],
      );
    }
  }
}

/**
 * Writes `group` from `rows` only when it has no rows yet (a tenant's first suspension): a change of the tenant's
 * settings is the NetworkSettingsWorker's to write (rewriteGroup), and a stale read of them must never undo it.
 */
export async function ensureGroup(query: Query, group: string, rows: RadiusGroup): Promise<void> {
  await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`radius-group:${group}`]);
  const present = await query(
    `SELECT 1 FROM radgroupcheck WHERE groupname = $1 UNION ALL SELECT 1 FROM radgroupreply WHERE groupname = $1
     LIMIT 1`,
    [group],
  );
  if (rowsOf(present).length === 0) {
    await insertGroupRows(query, group, rows);
  }
}

/**
 * Rewrites `group` from `rows`, and moves the usernames of `realm` still in the legacy shared group into it: the
 * suspended logins of the tenant get the new answer from their next Access-Request on.
 */
export async function rewriteGroup(
  query: Query,
  group: string,
  rows: RadiusGroup,
  realm: string,
): Promise<void> {
  await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`radius-group:${group}`]);
  await query('DELETE FROM radgroupcheck WHERE groupname = $1', [group]);
  await query('DELETE FROM radgroupreply WHERE groupname = $1', [group]);
  await insertGroupRows(query, group, rows);
  await query(`UPDATE radusergroup SET groupname = $1 WHERE groupname = $2 AND starts_with(username, $3)`, [
    group,
    LEGACY_SUSPENDED_GROUP,
    realm,
  ]);
}

/** Deletes a test tenant's suspended group (its purge). */
export async function deleteGroup(query: Query, group: string): Promise<void> {
  await query('DELETE FROM radgroupcheck WHERE groupname = $1', [group]);
  await query('DELETE FROM radgroupreply WHERE groupname = $1', [group]);
}

/** The open sessions (no Stop yet) of the usernames in $1 (a group), `columns` read. */
export function openSessionsInGroup(columns: string): string {
  return `SELECT ${columns} FROM radacct
   WHERE acctstoptime IS NULL AND username IN (SELECT username FROM radusergroup WHERE groupname = $1)
   ORDER BY radacctid`;
}

/**
 * Deletes up to $2 closed sessions (a Stop recorded) that stopped before $1, oldest first (radacct_closed_stop), and
 * answers how many (`deleted`). Rows another instance is deleting are skipped, not waited for.
 */
export const PRUNE_ACCOUNTING = `WITH gone AS (
    DELETE FROM radacct WHERE radacctid IN (
      SELECT radacctid FROM radacct WHERE acctstoptime IS NOT NULL AND acctstoptime < $1
       ORDER BY acctstoptime LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING 1)
  SELECT count(*)::int AS deleted FROM gone`;
