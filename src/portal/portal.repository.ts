import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PortalInvite, PortalSession, PortalSignInCode } from './portal.entity';

/** Whom a claimed invite signs in. */
export interface ClaimedGrant {
  id: string;
  tenant_id: string;
  subscriber_id: string;
}

/** The only place the portal_invites, portal_sign_in_codes and portal_sessions tables are read and written. */
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

  /**
   * Gives the emailed invite `id` the code whose hash this is (the notification worker mints it at send time),
   * while it can still sign in; answers whether it could.
   */
  async setInviteCode(
    manager: EntityManager,
    tenantId: string,
    id: string,
    codeHash: string,
    now: Date,
  ): Promise<boolean> {
    const [rows] = await manager.query<[unknown[], number]>(
      `UPDATE portal_invites SET code_hash = $3
        WHERE tenant_id = $1 AND id = $2 AND delivery = 'email' AND used_at IS NULL AND expires_at > $4
        RETURNING 1`,
      [tenantId, id, codeHash, now],
    );
    return rows.length > 0;
  }

  async insertSignInCode(manager: EntityManager, row: PortalSignInCode): Promise<void> {
    await manager.insert(PortalSignInCode, manager.create(PortalSignInCode, row));
  }

  /** Ends every live sign-in code of the subscriber: a new one was requested. */
  async supersedeSignInCodes(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    now: Date,
  ): Promise<void> {
    await manager.query(
      `UPDATE portal_sign_in_codes SET superseded_at = $3
        WHERE tenant_id = $1 AND subscriber_id = $2 AND used_at IS NULL AND superseded_at IS NULL
          AND expires_at > $3`,
      [tenantId, subscriberId, now],
    );
  }

  /** Gives the sign-in code `id` its minted hash while it can still sign in; answers whether it could. */
  async setSignInCode(
    manager: EntityManager,
    tenantId: string,
    id: string,
    codeHash: string,
    now: Date,
    maxTries: number,
  ): Promise<boolean> {
    const [rows] = await manager.query<[unknown[], number]>(
      `UPDATE portal_sign_in_codes SET code_hash = $3
        WHERE tenant_id = $1 AND id = $2 AND used_at IS NULL AND superseded_at IS NULL AND attempts < $5
          AND expires_at > $4
        RETURNING 1`,
      [tenantId, id, codeHash, now, maxTries],
    );
    return rows.length > 0;
  }

  /**
   * The subscriber's live sign-in code (minted, unused, not superseded, not expired, tries left), row-locked until
   * the transaction ends: of two sign-ins racing with one code the second waits, then finds it used.
   */
  async lockLiveSignInCode(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    now: Date,
    maxTries: number,
  ): Promise<PortalSignInCode | null> {
    return manager
      .getRepository(PortalSignInCode)
      .createQueryBuilder('c')
      .setLock('pessimistic_write')
      .where('c.tenantId = :tenantId AND c.subscriberId = :subscriberId', { tenantId, subscriberId })
      .andWhere('c.codeHash IS NOT NULL AND c.usedAt IS NULL AND c.supersededAt IS NULL')
      .andWhere('c.expiresAt > :now AND c.attempts < :maxTries', { now, maxTries })
      .orderBy('c.createdAt', 'DESC')
      .limit(1)
      .getOne();
  }

  async useSignInCode(manager: EntityManager, id: string, now: Date): Promise<void> {
    await manager.update(PortalSignInCode, { id }, { usedAt: now });
  }

  async countWrongTry(manager: EntityManager, id: string): Promise<void> {
    await manager.increment(PortalSignInCode, { id }, 'attempts', 1);
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
    await manager.query('DELETE FROM portal_sign_in_codes WHERE tenant_id = $1', [tenantId]);
  }
}
