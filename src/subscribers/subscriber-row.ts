import type { SubscriberStatus, SuspensionReason } from './subscriber-status';
import { type Metadata, type PostalAddress, Subscriber } from './subscriber.entity';

/** A `subscribers` row as `pg` returns it. */
export interface SubscriberRow {
  tenant_id: string;
  id: string;
  external_id: string | null;
  full_name: string;
  email: string | null;
  email_normalized: string | null;
  phone: string | null;
  status: SubscriberStatus;
  suspension_reason: SuspensionReason | null;
  billing_profile_id: string | null;
  address: PostalAddress | null;
  metadata: Metadata;
  created_at: Date;
  updated_at: Date;
}

export const SELECT_SUBSCRIBER_BY_ID = 'SELECT * FROM subscribers WHERE tenant_id = $1 AND id = $2';

export function subscriberFromRow(row: SubscriberRow): Subscriber {
  return Object.assign(new Subscriber(), {
    tenantId: row.tenant_id,
    id: row.id,
    externalId: row.external_id,
    fullName: row.full_name,
    email: row.email,
    emailNormalized: row.email_normalized,
    phone: row.phone,
    status: row.status,
    suspensionReason: row.suspension_reason,
    billingProfileId: row.billing_profile_id,
    address: row.address,
    metadata: row.metadata,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
}
