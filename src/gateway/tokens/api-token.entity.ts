import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** An API token. Only the SHA-256 of the secret is kept; prefix and last four characters identify it to people. */
@Entity('api_tokens')
@Index('ix_api_tokens_tenant_created', ['tenantId', 'createdAt', 'id'])
export class ApiToken {
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  name: string;

  @Index('uq_api_tokens_hash', { unique: true })
  @Column('text')
  tokenHash: string;

  @Column('text')
  prefix: string;

  @Column('text')
  last4: string;

  @Column('text', { array: true })
  scopes: string[];

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  expiresAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  revokedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  lastUsedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
