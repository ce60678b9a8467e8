import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A one-time invite link to the portal (docs/portal.md): only the SHA-256 of its code is kept. Used once (used_at),
 * or never after expires_at.
 */
@Entity('portal_invites')
@Index('ix_portal_invites_subscriber', ['tenantId', 'subscriberId', 'createdAt'])
export class PortalInvite {
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  subscriberId: string;

  @Index('uq_portal_invites_hash', { unique: true })
  @Column('text')
  codeHash: string;

  /** email: sent to the subscriber; link: handed to the operator, for its own channel. */
  @Column('text')
  delivery: string;

  @Column({ type: 'timestamptz', precision: 3 })
  expiresAt: Date;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  usedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

/** A portal session: a short-lived bearer token bound to one subscriber. Only the SHA-256 of its secret is kept. */
@Entity('portal_sessions')
@Index('ix_portal_sessions_subscriber', ['tenantId', 'subscriberId', 'createdAt'])
export class PortalSession {
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  subscriberId: string;

  @Index('uq_portal_sessions_hash', { unique: true })
  @Column('text')
  tokenHash: string;

  /** How it was signed in to: invite or code. */
  @Column('text')
  method: string;

  @Column({ type: 'timestamptz', precision: 3 })
  expiresAt: Date;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  revokedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
