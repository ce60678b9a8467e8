import type { Metadata } from '../common/metadata';
import type { PreparedStatement } from '../database/prepared-query';
import type { SubscriberStatus, SuspensionReason } from './subscriber-status';
import { type PostalAddress, Subscriber } from './subscriber.entity';

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

/** The columns SubscriberRow reads, named: a prepared `SELECT *` fails once a migration adds a column. */
export const SUBSCRIBER_COLUMNS =
  'tenant_id, id, external_id, full_name, email, email_normalized, phone, status, suspension_reason, ' +
  'billing_profile_id, address, metadata, created_at, updated_at';

export const SUBSCRIBER_BY_ID: PreparedStatement = {
  name: 'subscriber_by_id',
  text: `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers WHERE tenant_id = $1 AND id = $2`,
};

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

/** A new subscriber's INSERT, parameters `$1`–`$14` in the order of subscriberParams. */
export const SUBSCRIBER_PARAMS = 14;
export const INSERT_SUBSCRIBER =
  'INSERT INTO subscribers (tenant_id, id, external_id, full_name, email, email_normalized, phone, status, ' +
  'suspension_reason, billing_profile_id, address, metadata, created_at, updated_at) ' +
  'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)';

export function subscriberParams(subscriber: Subscriber): unknown[] {
  return [
    subscriber.tenantId,
    subscriber.id,
    subscriber.externalId,
    subscriber.fullName,
    subscriber.email,
    subscriber.emailNormalized,
    subscriber.phone,
    subscriber.status,
    subscriber.suspensionReason,
    subscriber.billingProfileId,
    subscriber.address,
    subscriber.metadata,
    subscriber.createdAt,
    subscriber.updatedAt,
  ];
}
