import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity('tenants')
export class Tenant {
  @PrimaryColumn('text')
  id: string;

  @Index('uq_tenants_slug', { unique: true })
  @Column('text')
  slug: string;

  @Column('text')
  name: string;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
