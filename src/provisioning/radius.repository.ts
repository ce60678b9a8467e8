import { Pool } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';

/** One attribute row of radcheck or radreply. */
export interface RadiusAttribute {
  attribute: string;
  op: string;
  value: string;
}

/** What FreeRADIUS should know of one username: nothing (absent), or its check and reply items and groups. */
export interface RadiusUser {
  check: RadiusAttribute[];
  reply: RadiusAttribute[];
  groups: string[];
}

type Query = (sql: string, params: unknown[]) => Promise<unknown>;

/** A client of FreeRADIUS in its `nas` table (keyed by address); `null` removes it. */
export interface RadiusClient {
  shortname: string;
  type: string;
  secret: string;
  description: string;
}

/** One accounting session of radacct, as the API reads it. */
export interface RadiusSession {
  radacctId: string;
  acctSessionId: string;
  username: string;
  nasIp: string;
  framedIp: string | null;
  startedAt: Date | null;
  updatedAt: Date | null;
  stoppedAt: Date | null;
  sessionTimeS: number | null;
  bytesIn: number;
  bytesOut: number;
  terminateCause: string | null;
}

/** Which of a username's sessions belong to one service: those started while it existed (usernames are reused). */
export interface SessionWindow {
  username: string;
  from: Date;
  until: Date | null;
}

const SESSION_COLUMNS = `radacctid::text AS radacct_id, acctsessionid, username, host(nasipaddress) AS nas_ip,
  host(framedipaddress) AS framed_ip, acctstarttime, acctupdatetime, acctstoptime, acctsessiontime,
  coalesce(acctinputoctets, 0)::text AS bytes_in, coalesce(acctoutputoctets, 0)::text AS bytes_out, acctterminatecause`;

/** The radacct rows (alias `r`) of a window ($1 username, $2 from, $3 until or null), by their start. */
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

/** The group a suspended service is put in: FreeRADIUS rejects its logins, with a message the NAS may log. */
export const SUSPENDED_GROUP = 'suspended';

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
  async rewrite(username: string, user: RadiusUser | null): Promise<void> {
    await this.transaction(async (query) => {
      // Serialises two writers of one username (two instances, a retry racing a late worker).
      await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`radius:${username}`]);
      await query('DELETE FROM radcheck WHERE username = $1', [username]);
      await query('DELETE FROM radreply WHERE username = $1', [username]);
      await query('DELETE FROM radusergroup WHERE username = $1', [username]);
      if (!user) {
        return;
      }
      for (const row of user.check) {
        await query('INSERT INTO radcheck (username, attribute, op, value) VALUES ($1, $2, $3, $4)', [
          username,
          row.attribute,
          row.op,
          row.value,
        ]);
      }
      for (const row of user.reply) {
        await query('INSERT INTO radreply (username, attribute, op, value) VALUES ($1, $2, $3, $4)', [
          username,
          row.attribute,
          row.op,
          row.value,
        ]);
      }
      for (const [priority, group] of user.groups.entries()) {
        await query('INSERT INTO radusergroup (username, groupname, priority) VALUES ($1, $2, $3)', [
          username,
          group,
          priority,
        ]);
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

  /** A window's octets per UTC day in [from, to] (days without traffic absent), from radacct_daily_usage. */
  async dailyUsage(
    window: SessionWindow,
    from: string,
    to: string,
  ): Promise<{ day: string; bytesIn: number; bytesOut: number }[]> {
    const rows = await this.read(
      `SELECT to_char(u.day, 'YYYY-MM-DD') AS day, sum(u.bytes_in)::text AS bytes_in, sum(u.bytes_out)::text AS bytes_out
         FROM radacct_daily_usage u JOIN radacct r ON r.radacctid = u.radacctid
        WHERE ${IN_WINDOW} AND u.day BETWEEN $4::date AND $5::date
        GROUP BY u.day ORDER BY u.day`,
      [window.username, window.from, window.until, from, to],
    );
    return rows.map((row) => ({
      day: row.day as string,
      bytesIn: Number(row.bytes_in),
      bytesOut: Number(row.bytes_out),
    }));
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
