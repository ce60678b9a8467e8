import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A claimed idempotency key: scoped to (tenant, token, key), with the request's fingerprint and its answer. */
@Entity('idempotency_keys')
@Index('ix_idempotency_keys_expires', ['expiresAt'])
export class IdempotencyKey {
  @PrimaryColumn('text')
  tenantId: string;

  @PrimaryColumn('text')
  tokenId: string;

  @PrimaryColumn('text')
  key: string;

  @Column('text')
  fingerprint: string;

  /** Null between the commit of the effect and the storing of the answer (a few milliseconds). */
  @Column('integer', { nullable: true })
  responseStatus: number | null;

  /** json, not jsonb: a replay answers the stored text with its keys in their first order. */
  @Column('json', { nullable: true })
  responseBody: object | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  expiresAt: Date;
}
