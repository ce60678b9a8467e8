import { Pool } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import * as groups from './radius-groups.repository';
import { LEGACY_SUSPENDED_GROUP, type RadiusGroup, suspendedGroupOf } from './radius-groups.repository';
import type { RadiusAttribute, RadiusClient, RadiusSession, RadiusUser, SessionWindow } from './radius-types';

export { type RadiusGroup, suspendedGroupOf } from './radius-groups.repository';
export type { RadiusAttribute, RadiusClient, RadiusSession, RadiusUser, SessionWindow } from './radius-types';

type Query = (sql: string, params: unknown[]) => Promise<unknown>;

const SESSION_COLUMNS = `radacctid::text AS radacct_id, acctsessionid, username, host(nasipaddress) AS nas_ip,
  host(framedipaddress) AS framed_ip, acctstarttime, acctupdatetime, acctstoptime, acctsessiontime,
  coalesce(acctinputoctets, 0)::text AS bytes_in, coalesce(acctoutputoctets, 0)::text AS bytes_out, acctterminatecause`;

/** The radacct (or radacct_daily_usage) rows (alias `r`) of a window ($1 username, $2 from, $3 until or null), by their start. */
const IN_WINDOW = `r.username = $1 AND r.acctstarttime >= $2 AND ($3::timestamptz IS NULL OR r.acctstarttime <= $3)`;

function sessionOf(row: Record<string, unknown>): RadiusSession {
  return {
    radacctId: row.radacct_id as string,
    acctSessionId: row.acctsessionid as string,
    username: row.username as string,
    nasIp: row.nas_ip as string,
    framedIp: (row.framed_ip as string | null) ?? null,
    startedAt: (row.acctstarttime as Date | null) ?? null,
    updatedAt: (row.acctupdatetime as Date | null) ?? null,
    stoppedAt: (row.acctstoptime as Date | null) ?? null,
    sessionTimeS: row.acctsessiontime === null ? null : Number(row.acctsessiontime),
    bytesIn: Number(row.bytes_in),
    bytesOut: Number(row.bytes_out),
    terminateCause: (row.acctterminatecause as string | null) ?? null,
  };
}

/** `entries` in rounds with each username at most once: a username's n-th entry goes in round n, so the last stands. */
function distinctRounds<T extends { username: string }>(entries: T[]): T[][] {
  const rounds: T[][] = [];
  const seen = new Map<string, number>();
  for (const entry of entries) {
    const round = seen.get(entry.username) ?? 0;
    seen.set(entry.username, round + 1);
    (rounds[round] ??= []).push(entry);
  }
  return rounds;
}

/**
 * Deletes the rows of the usernames in $1 with one index probe per username, whatever the planner knows of the table:
 * `username = ANY($1)` over a table without statistics (never analysed: autovacuum off, or not yet run) is planned as
 * a scan of the whole table. OFFSET 0 keeps the per-username subquery from being flattened into such a join.
 */
function deleteUsernames(table: string): string {
  return `DELETE FROM ${table} WHERE id IN (
    SELECT r.id FROM unnest($1::text[]) AS u(username)
    CROSS JOIN LATERAL (SELECT id FROM ${table} WHERE username = u.username OFFSET 0) AS r)`;
}

/** Rows of radcheck or radreply in one statement; unnest keeps the arrays' order, so the ids (FreeRADIUS's reading order) follow it. */
async function insertAttributes(
  query: Query,
  table: 'radcheck' | 'radreply',
  rows: (RadiusAttribute & { username: string })[],
): Promise<void> {
  if (rows.length === 0) {
    return;
  }
  await query(
    `INSERT INTO ${table} (username, attribute, op, value)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])`,
    [
      rows.map((row) => row.username),
      rows.map((row) => row.attribute),
      rows.map((row) => row.op),
      rows.map((row) => row.value),
    ],
  );
}

/**
 * The group suspended services were put in before issue 33, for every tenant: FreeRADIUS rejects its logins, with a
 * message the NAS may log. The driver still keeps its rows, for usernames of a RADIUS_DATABASE_URL database that no
 * order or settings change has moved to their tenant's group yet.
 */
export const SUSPENDED_GROUP = LEGACY_SUSPENDED_GROUP;

/**
 * The only place FreeRADIUS's standard SQL tables (radcheck, radreply, radusergroup, radgroupcheck, radgroupreply)
 * are written: in the API's own database, or in RADIUS_DATABASE_URL's.
 */
export class RadiusRepository {
  private readonly pool: Pool | null;

  constructor(
    private readonly dataSource: DataSource,
    radiusDatabaseUrl: string | null,
  ) {
    this.pool = radiusDatabaseUrl ? new Pool({ connectionString: radiusDatabaseUrl, max: 4 }) : null;
  }

  /** Rewrites every row of `username` in one transaction: what was there is replaced by `user` (or removed). */
  rewrite(username: string, user: RadiusUser | null): Promise<void> {
    return this.rewriteMany([{ username, user }]);
  }

  /**
   * `rewrite` for many usernames in one transaction and a few statements however many they are (the worker's orders
   * carried out side by side). A username given twice is rewritten in the order given: its last entry stands.
   */
  async rewriteMany(entries: { username: string; user: RadiusUser | null }[]): Promise<void> {
    await this.transaction(async (query) => {
      // Serialises two writers of one username (two instances, a retry racing a late worker); a batch takes its locks
      // in one statement in key order, so two batches never wait on each other in a cycle.
      await query(
        `SELECT pg_advisory_xact_lock(k)
           FROM (SELECT DISTINCT hashtext('radius:' || u) AS k FROM unnest($1::text[]) AS u ORDER BY k) AS keys`,
        [entries.map((entry) => entry.username)],
      );
      for (const round of distinctRounds(entries)) {
        const usernames = round.map((entry) => entry.username);
        for (const table of ['radcheck', 'radreply', 'radusergroup']) {
          await query(deleteUsernames(table), [usernames]);
        }
        const users = round.filter(
          (entry): entry is { username: string; user: RadiusUser } => entry.user !== null,
        );
        await insertAttributes(
          query,
          'radcheck',
          users.flatMap(({ username, user }) => user.check.map((row) => ({ username, ...row }))),
        );
        await insertAttributes(
          query,
          'radreply',
          users.flatMap(({ username, user }) => user.reply.map((row) => ({ username, ...row }))),
        );
        const groups = users.flatMap(({ username, user }) =>
          user.groups.map((group, priority) => ({ username, group, priority })),
        );
        if (groups.length > 0) {
          await query(
            `INSERT INTO radusergroup (username, groupname, priority)
             SELECT * FROM unnest($1::text[], $2::text[], $3::int[])`,
            [
              groups.map((row) => row.username),
              groups.map((row) => row.group),
              groups.map((row) => row.priority),
            ],
          );
        }
      }
    });
  }

  /** The suspended group's check and reply items, as this driver documents them (rewritten, so it converges). */
  async ensureSuspendedGroup(): Promise<void> {
    await this.transaction(async (query) => {
      await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`radius-group:${SUSPENDED_GROUP}`]);
      await query('DELETE FROM radgroupcheck WHERE groupname = $1', [SUSPENDED_GROUP]);
      await query('DELETE FROM radgroupreply WHERE groupname = $1', [SUSPENDED_GROUP]);
      await query(
        `INSERT INTO radgroupcheck (groupname, attribute, op, value) VALUES ($1, 'Auth-Type', ':=', 'Reject')`,
        [SUSPENDED_GROUP],
      );
      await query(
        `INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ($1, 'Reply-Message', ':=', 'Service suspended')`,
        [SUSPENDED_GROUP],
      );
    });
  }

  /** A tenant's suspended group written from `rows` if it has none yet (its first suspension). */
  ensureGroup(group: string, rows: RadiusGroup): Promise<void> {
    return this.transaction((query) => groups.ensureGroup(query, group, rows));
  }

  /** A tenant's suspended group rewritten from `rows`, its usernames still in the legacy group moved into it. */
  rewriteGroup(group: string, rows: RadiusGroup, realm: string): Promise<void> {
    return this.transaction((query) => groups.rewriteGroup(query, group, rows, realm));
  }

  /** The open sessions (no Stop yet) of the usernames in `group`. */
  async openSessionsInGroup(group: string): Promise<RadiusSession[]> {
    return (await this.read(groups.openSessionsInGroup(SESSION_COLUMNS), [group])).map(sessionOf);
  }

  /**
   * Deletes up to `limit` closed sessions that stopped before `cutoff`, oldest first, and answers how many
   * (RADACCT_RETENTION_DAYS). Open sessions are never deleted; their daily usage stays (read without radacct).
   */
  async pruneAccounting(cutoff: Date, limit: number): Promise<number> {
    const rows = await this.read(groups.PRUNE_ACCOUNTING, [cutoff, limit]);
    return Number(rows[0]?.deleted ?? 0);
  }

  /**
   * Rewrites FreeRADIUS's client row of `address` (and removes the one of `previousAddress`, an address changed).
   * In the API's own database it is written in the caller's transaction, so the registry and FreeRADIUS's table
   * change together; in RADIUS_DATABASE_URL's, in a transaction of its own just before the caller commits.
   */
  async writeClient(
    manager: EntityManager,
    address: string,
    client: RadiusClient | null,
    previousAddress: string | null = null,
  ): Promise<void> {
    const work = async (query: Query) => {
      await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`radius-nas:${address}`]);
      await query('DELETE FROM nas WHERE nasname = ANY($1::text[])', [
        previousAddress ? [address, previousAddress] : [address],
      ]);
      if (client) {
        await query(
          'INSERT INTO nas (nasname, shortname, type, secret, description) VALUES ($1, $2, $3, $4, $5)',
          [address, client.shortname, client.type, client.secret, client.description],
        );
      }
    };
    if (!this.pool) {
      await work((sql, params) => manager.query(sql, params));
      return;
    }
    await this.transaction(work);
  }

  /**
   * Removes what FreeRADIUS holds of a deleted test tenant: every row of its usernames (those starting with `realm`,
   * `<slug>/`, and `usernames`) in radcheck, radreply, radusergroup and the accounting (radacct and its daily usage),
   * and its NAS clients at `addresses`. Written as writeClient writes: in the caller's transaction in the API's own
   * database, in a transaction of its own just before the caller commits in RADIUS_DATABASE_URL's.
   */
  async purge(
    manager: EntityManager,
    realm: string,
    usernames: string[],
    addresses: string[],
  ): Promise<void> {
    const work = async (query: Query) => {
      const params = [realm, usernames];
      for (const table of ['radacct_daily_usage', 'radcheck', 'radreply', 'radusergroup', 'radacct']) {
        await query(
          `DELETE FROM ${table} WHERE starts_with(username, $1) OR username = ANY($2::text[])`,
          params,
        );
      }
      await query('DELETE FROM nas WHERE nasname = ANY($1::text[])', [addresses]);
      await groups.deleteGroup(query, suspendedGroupOf(realm));
    };
    if (!this.pool) {
      await work((sql, params) => manager.query(sql, params));
      return;
    }
    await this.transaction(work);
  }

  /** The open sessions (no Stop yet) of a username. */
  async openSessions(username: string): Promise<RadiusSession[]> {
    const rows = await this.read(
      `SELECT ${SESSION_COLUMNS} FROM radacct WHERE username = $1 AND acctstoptime IS NULL ORDER BY radacctid`,
      [username],
    );
    return rows.map(sessionOf);
  }

  /**
   * A page of a window's sessions, newest first by radacctid (the order FreeRADIUS wrote them), after `beforeId`;
   * `limit + 1` rows, so the caller learns whether there are more.
   */
  async sessions(
    window: SessionWindow,
    page: { limit: number; beforeId: string | null; startedGte: Date | null; startedLt: Date | null },
  ): Promise<RadiusSession[]> {
    const rows = await this.read(
      `SELECT ${SESSION_COLUMNS} FROM radacct r
        WHERE ${IN_WINDOW} AND ($4::bigint IS NULL OR radacctid < $4)
          AND ($5::timestamptz IS NULL OR acctstarttime >= $5) AND ($6::timestamptz IS NULL OR acctstarttime < $6)
        ORDER BY radacctid DESC LIMIT $7`,
      [
        window.username,
        window.from,
        window.until,
        page.beforeId,
        page.startedGte,
        page.startedLt,
        page.limit + 1,
      ],
    );
    return rows.map(sessionOf);
  }

  /**
   * A window's octets per UTC day in [from, to] (days without traffic absent), from radacct_daily_usage alone: each
   * row carries its session's username and start, so the usage outlives the sessions radacct's retention prunes.
   */
  async dailyUsage(
    window: SessionWindow,
    from: string,
    to: string,
  ): Promise<{ day: string; bytesIn: number; bytesOut: number }[]> {
    const rows = await this.read(
      `SELECT to_char(r.day, 'YYYY-MM-DD') AS day, sum(r.bytes_in)::text AS bytes_in, sum(r.bytes_out)::text AS bytes_out
         FROM radacct_daily_usage r
        WHERE ${IN_WINDOW} AND r.day BETWEEN $4::date AND $5::date
        GROUP BY r.day ORDER BY r.day`,
      [window.username, window.from, window.until, from, to],
    );
    return rows.map((row) => ({
      day: row.day as string,
      bytesIn: Number(row.bytes_in),
      bytesOut: Number(row.bytes_out),
    }));
  }

  /**
   * Bytes (in + out) each window used on the UTC days [start, end), from radacct_daily_usage (which adds only the
   * increases of a session's running totals: a repeated or retransmitted Interim-Update adds nothing). One statement
   * for all the windows; answered in their order.
   */
  async periodUsage(windows: (SessionWindow & { start: string; end: string })[]): Promise<number[]> {
    if (windows.length === 0) {
      return [];
    }
    const rows = await this.read(
      `SELECT w.i, coalesce((SELECT sum(u.bytes_in + u.bytes_out) FROM radacct_daily_usage u
                WHERE u.username = w.username AND u.acctstarttime >= w.from_at
                  AND (w.until_at IS NULL OR u.acctstarttime <= w.until_at)
                  AND u.day >= w.start_day AND u.day < w.end_day), 0)::text AS bytes
         FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[], $4::date[], $5::date[])
              WITH ORDINALITY AS w(username, from_at, until_at, start_day, end_day, i)
        ORDER BY w.i`,
      [
        windows.map((window) => window.username),
        windows.map((window) => window.from),
        windows.map((window) => window.until),
        windows.map((window) => window.start),
        windows.map((window) => window.end),
      ],
    );
    return rows.map((row) => Number(row.bytes));
  }

  async close(): Promise<void> {
    if (this.pool && !this.pool.ended) {
      await this.pool.end();
    }
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  private async read(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    if (!this.pool) {
      return this.dataSource.query(sql, params);
    }
    return (await this.pool.query(sql, params)).rows as Record<string, unknown>[];
  }

  private async transaction(work: (query: Query) => Promise<void>): Promise<void> {
    if (!this.pool) {
      await this.dataSource.transaction((manager) => work((sql, params) => manager.query(sql, params)));
      return;
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await work((sql, params) => client.query(sql, params));
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
