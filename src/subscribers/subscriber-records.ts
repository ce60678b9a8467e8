import { ApiError } from '../common/errors/api-error';
import { isForeignKeyViolation, isUniqueViolation } from '../common/errors/postgres-errors';
import { newId } from '../common/ids';
import { CreateSubscriberDto } from './dto/create-subscriber.dto';
import { SubscriberStatus, SuspensionReason } from './subscriber-status';
import { Subscriber } from './subscriber.entity';

/**
 * Turns the database's verdicts into the API's answers: a duplicate is SPEC 7's 409 duplicate_subscriber naming the
 * field; a billing profile that is not the tenant's (the composite foreign key holds the reference per tenant) is
 * 422 invalid_reference.
 */
export function writeError(error: unknown, billingProfileId?: string | null): ApiError | null {
  if (isForeignKeyViolation(error, 'fk_subscribers_billing_profile')) {
    return new ApiError(
      'invalid_reference',
      `No billing profile ${billingProfileId} exists.`,
      'billing_profile_id',
    );
  }
  if (isUniqueViolation(error, 'uq_subscribers_external_id')) {
    return new ApiError(
      'duplicate_subscriber',
      'A subscriber with the supplied external_id already exists.',
      'external_id',
    );
  }
  if (isUniqueViolation(error, 'uq_subscribers_email')) {
    return new ApiError(
      'duplicate_subscriber',
      'A subscriber with the supplied email already exists.',
      'email',
    );
  }
  return null;
}

export const normalizeEmail = (email: string | null | undefined): string | null =>
  email ? email.toLowerCase() : null;

export function newSubscriber(tenantId: string, dto: CreateSubscriberDto): Subscriber {
  const now = new Date();
  return Object.assign(new Subscriber(), {
    id: newId('sub'),
    tenantId,
    externalId: dto.external_id ?? null,
    fullName: dto.full_name,
    email: dto.email ?? null,
    emailNormalized: normalizeEmail(dto.email),
    phone: dto.phone ?? null,
    status: dto.status,
    suspensionReason: dto.status === SubscriberStatus.Suspended ? SuspensionReason.Manual : null,
    billingProfileId: dto.billing_profile_id ?? null,
    address: dto.address ? { ...dto.address } : null,
    metadata: dto.metadata ?? {},
    createdAt: now,
    updatedAt: now,
  });
}
