import { Pool } from 'pg';
import type { DataSource } from 'typeorm';

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

  async close(): Promise<void> {
    await this.pool?.end();
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
