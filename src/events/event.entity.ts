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
}
