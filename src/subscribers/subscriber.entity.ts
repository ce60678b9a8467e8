import type { Metadata } from '../common/metadata';
import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Tenant } from '../gateway';
import { SubscriberStatus, SuspensionReason } from './subscriber-status';

export interface PostalAddress {
  line1?: string | null;
  city?: string | null;
  state?: string | null;
  postal_code?: string | null;
}

@Entity('subscribers')
@Index('ix_subscribers_tenant_created', ['tenantId', 'createdAt', 'id'])
@Index('ix_subscribers_tenant_status_created', ['tenantId', 'status', 'createdAt', 'id'])
// GET /subscribers?email= compares email_normalized (lower(email)), which the partial unique index cannot serve.
@Index('ix_subscribers_tenant_email_created', ['tenantId', 'emailNormalized', 'createdAt', 'id'])
// GET /subscribers?phone= (the stored phone is E.164, as the filter's value is made).
@Index('ix_subscribers_tenant_phone_created', ['tenantId', 'phone', 'createdAt', 'id'])
// q= (trigram GIN over the search text, src/subscribers/subscriber-search.ts): an operator class TypeORM cannot
// declare, so it lives in its migration only.
@Index('ix_subscribers_search_trgm', { synchronize: false })
// The key of other domains' composite foreign keys (tickets): a reference holds to the tenant's own subscribers.
@Index('uq_subscribers_tenant_id', ['tenantId', 'id'], { unique: true })
@Index('uq_subscribers_external_id', ['tenantId', 'externalId'], { unique: true })
// The duplicate rule of email: one live (non-archived) subscriber per email, case-insensitively.
@Index('uq_subscribers_email', ['tenantId', 'emailNormalized'], {
  unique: true,
  where: `"status" <> 'archived' AND "email_normalized" IS NOT NULL`,
})
// The profile must be the subscriber's tenant's: the database holds the reference per tenant (a write naming another
// tenant's profile fails on this constraint, answered 422 invalid_reference). Named by table, so subscribers does not
// import billing.
@ForeignKey('billing_profiles', ['tenantId', 'billingProfileId'], ['tenantId', 'id'], {
  name: 'fk_subscribers_billing_profile',
})
// An exemption always says why, and only an exemption has a reason.
@Check('chk_subscribers_tax_exempt', `"tax_exempt" = ("tax_exempt_reason" IS NOT NULL)`)
export class Subscriber {
  @ForeignKey(() => Tenant, { name: 'fk_subscribers_tenant' })
  @Column('text')
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text', { nullable: true })
  externalId: string | null;

  @Column('text')
  fullName: string;

  @Column('text', { nullable: true })
  email: string | null;

  /** lower(email), the key of the duplicate rule. */
  @Column('text', { nullable: true })
  emailNormalized: string | null;

  @Column('text', { nullable: true })
  phone: string | null;

  @Column('text')
  status: SubscriberStatus;

  @Column('text', { nullable: true })
  suspensionReason: SuspensionReason | null;

  @Column('text', { nullable: true })
  billingProfileId: string | null;

  @Column('jsonb', { nullable: true })
  address: PostalAddress | null;

  @Column('jsonb')
  metadata: Metadata;

  @Column({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;

  // Last, so the INSERT's parameters before them keep their places (bench/baseline-insert.ts lists them in order).
  /** Not taxed: invoices show the reason and the tax id instead of taxes. */
  @Column('boolean', { default: false })
  taxExempt: boolean;

  /** Why it is exempt (a certificate, a status); set exactly when taxExempt. */
  @Column('text', { nullable: true })
  taxExemptReason: string | null;

  /** Its VAT or tax number, printed on its invoices. */
  @Column('text', { nullable: true })
  taxId: string | null;
}
