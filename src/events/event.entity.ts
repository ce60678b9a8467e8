import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import type { Actor } from '../common/request-context';

/** An entry of the audit and automation log, written in the same transaction as the change it records. */
@Entity('events')
@Index('ix_events_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_events_tenant_subject_created', ['tenantId', 'subjectId', 'createdAt', 'id'])
@Index('ix_events_tenant_type_created', ['tenantId', 'type', 'createdAt', 'id'])
// (tenant_id, type text_pattern_ops), for `type=prefix.*`: an operator class TypeORM cannot declare, so it is left
// out of synchronisation and lives in its migration only.
@Index('ix_events_tenant_type_pattern', { synchronize: false })
// (tx_id, id): the automation consumer's walk of the log; declared in its migration only (TypeORM reads a
// database-filled column's index back in another column order and would report drift).
@Index('ix_events_tx', { synchronize: false })
export class EventRecord {
  // By table name: the gateway, which owns tenants, imports events (it appends), so events do not import it.
  @ForeignKey('tenants', { name: 'fk_events_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  type: string;

  @Column('text', { nullable: true })
  subjectId: string | null;

  @Column('jsonb')
  data: { object: object; [key: string]: unknown };

  @Column('text', { nullable: true })
  requestId: string | null;

  @Column('jsonb')
  actor: Actor;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  /**
   * The writing transaction's id (pg_current_xact_id), set by the database: consumers of the log (automation) read in
   * (tx_id, id) order and only from transactions older than any still running, so none is passed over.
   */
  @Column({
    type: 'bigint',
    default: () => 'isp_current_tx_id()',
    insert: false,
  })
  txId?: string;
}
