import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A one-time invite link to the portal (docs/portal.md): only the SHA-256 of its code is kept. Used once (used_at),
 * or never after expires_at. An emailed one has no code (code_hash null) until the notification worker mints it.
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
  @Column('text', { nullable: true })
  codeHash: string | null;

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

/**
 * A one-time sign-in code emailed to a subscriber (docs/portal.md): six digits, minted by the notification worker when
 * the mail is sent, kept only as a salted hash. Signs in once (used_at), before expires_at, within PORTAL_CODE_MAX_TRIES
 * tries, and only while no newer code of the subscriber superseded it.
 */
@Entity('portal_sign_in_codes')
@Index('ix_portal_sign_in_codes_subscriber', ['tenantId', 'subscriberId', 'createdAt'])
export class PortalSignInCode {
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  subscriberId: string;

  /** SHA-256 of `<id>:<code>`; null until the worker mints the code. */
  @Column('text', { nullable: true })
  codeHash: string | null;

  /** Wrong codes tried against it. */
  @Column('integer', { default: 0 })
  attempts: number;

  @Column({ type: 'timestamptz', precision: 3 })
  expiresAt: Date;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  usedAt: Date | null;

  /** A newer code of the subscriber was requested: this one no longer signs in. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  supersededAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
