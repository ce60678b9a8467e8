import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PortalInvite, PortalSession } from './portal.entity';

/** Whom a claimed invite signs in. */
export interface ClaimedGrant {
  id: string;
  tenant_id: string;
  subscriber_id: string;
}

/** The only place the portal_invites and portal_sessions tables are read and written. */
@Injectable()
export class PortalRepository {
  async insertInvite(manager: EntityManager, row: PortalInvite): Promise<void> {
    await manager.insert(PortalInvite, manager.create(PortalInvite, row));
  }

  async insertSession(manager: EntityManager, row: PortalSession): Promise<void> {
    await manager.insert(PortalSession, manager.create(PortalSession, row));
  }

  /**
   * Uses the live invite whose code hashes to `codeHash`: one statement, so of two sign-ins racing with one code
   * exactly one gets the row (the other's UPDATE re-reads it used once the first commits).
   */
  async claimInvite(manager: EntityManager, codeHash: string, now: Date): Promise<ClaimedGrant | null> {
    const [rows] = await manager.query<[ClaimedGrant[], number]>(
      `UPDATE portal_invites SET used_at = $2
        WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2
        RETURNING id, tenant_id, subscriber_id`,
      [codeHash, now],
    );
    return rows[0] ?? null;
  }

  findSession(manager: EntityManager, tenantId: string, id: string): Promise<PortalSession | null> {
    return manager.findOneBy(PortalSession, { tenantId, id });
  }

  findSessionByHash(manager: EntityManager, tokenHash: string): Promise<PortalSession | null> {
    return manager.findOneBy(PortalSession, { tokenHash });
  }

  /** Revokes the session `sessionId` (null: every live one of the subscriber); answers those revoked now. */
  async revokeSessions(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    now: Date,
    sessionId: string | null,
  ): Promise<Pick<PortalSession, 'id' | 'method' | 'expiresAt' | 'createdAt'>[]> {
    const [rows] = await manager.query<
      [{ id: string; method: string; expires_at: Date; created_at: Date }[], number]
    >(
      `UPDATE portal_sessions SET revoked_at = $3
        WHERE tenant_id = $1 AND subscriber_id = $2 AND revoked_at IS NULL AND expires_at > $3
          AND ($4::text IS NULL OR id = $4)
        RETURNING id, method, expires_at, created_at`,
      [tenantId, subscriberId, now, sessionId],
    );
    return rows.map((row) => ({
      id: row.id,
      method: row.method,
      expiresAt: new Date(row.expires_at),
      createdAt: new Date(row.created_at),
    }));
  }

  /** Deletes every portal row of the tenant (its test clock is deleted). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM portal_sessions WHERE tenant_id = $1', [tenantId]);
    await manager.query('DELETE FROM portal_invites WHERE tenant_id = $1', [tenantId]);
  }
}
