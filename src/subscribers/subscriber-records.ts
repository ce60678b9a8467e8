import { ApiError } from '../common/errors/api-error';
import { isForeignKeyViolation, isUniqueViolation } from '../common/errors/postgres-errors';
import { newId } from '../common/ids';
import { mergeMetadata } from '../common/metadata';
import { CreateSubscriberDto } from './dto/create-subscriber.dto';
import { UpdateSubscriberDto } from './dto/update-subscriber.dto';
import { SubscriberStatus, SuspensionReason } from './subscriber-status';
import { Subscriber } from './subscriber.entity';

/**
 * Turns the database's verdicts into the API's answers: a duplicate is 409 duplicate_subscriber naming the field
 * (external_id when both repeat: migration CheckExternalIdBeforeEmail); a billing profile that is not the tenant's
 * (the composite foreign key holds the reference per tenant) is 422 invalid_reference.
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

/**
 * A subscriber's tax exemption as it will be stored, or the error: an exemption says why (400 missing_field
 * `tax_exempt_reason`), and only an exemption has a reason (422 validation_failed); chk_subscribers_tax_exempt agrees.
 */
export function assertTaxExemption(exempt: boolean, reason: string | null): void {
  if (exempt && reason === null) {
    throw new ApiError(
      'missing_field',
      'tax_exempt_reason is required when tax_exempt is true: say why the subscriber is not taxed.',
      'tax_exempt_reason',
    );
  }
  if (!exempt && reason !== null) {
    throw new ApiError(
      'validation_failed',
      'tax_exempt_reason is kept only for a tax-exempt subscriber: send tax_exempt: true with it.',
      'tax_exempt_reason',
    );
  }
}

export const normalizeEmail = (email: string | null | undefined): string | null =>
  email ? email.toLowerCase() : null;

/** The subscriber as it will be stored, created at `now` (the caller's Clock). */
export function newSubscriber(tenantId: string, dto: CreateSubscriberDto, now: Date): Subscriber {
  assertTaxExemption(dto.tax_exempt ?? false, dto.tax_exempt_reason ?? null);
  return Object.assign(new Subscriber(), {
    id: newId('sub', now),
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
    taxExempt: dto.tax_exempt ?? false,
    taxExemptReason: dto.tax_exempt_reason ?? null,
    taxId: dto.tax_id ?? null,
  });
}

/** Applies a PATCH (or an imported row) to the entity and returns the names of the fields that really changed. */
export function applyChanges(subscriber: Subscriber, dto: UpdateSubscriberDto): string[] {
  const changed: string[] = [];
  const set = <K extends keyof Subscriber>(field: string, key: K, value: Subscriber[K]) => {
    if (JSON.stringify(subscriber[key]) === JSON.stringify(value)) {
      return;
    }
    subscriber[key] = value;
    changed.push(field);
  };
  if (dto.full_name !== undefined) {
    set('full_name', 'fullName', dto.full_name);
  }
  if (dto.email !== undefined) {
    set('email', 'email', dto.email);
    subscriber.emailNormalized = normalizeEmail(dto.email);
  }
  if (dto.phone !== undefined) {
    set('phone', 'phone', dto.phone);
  }
  // A profile that is not the tenant's fails the write on fk_subscribers_billing_profile (writeError).
  if (dto.billing_profile_id !== undefined) {
    set('billing_profile_id', 'billingProfileId', dto.billing_profile_id);
  }
  if (dto.address !== undefined) {
    // Only the parts sent change: the DTO instance carries the absent ones as undefined own properties.
    const sent =
      dto.address && Object.fromEntries(Object.entries(dto.address).filter(([, v]) => v !== undefined));
    set('address', 'address', sent === null ? null : { ...subscriber.address, ...sent });
  }
  if (dto.metadata !== undefined) {
    set('metadata', 'metadata', mergeMetadata(subscriber.metadata, dto.metadata));
  }
  if (dto.tax_exempt !== undefined || dto.tax_exempt_reason !== undefined) {
    const exempt = dto.tax_exempt ?? subscriber.taxExempt;
    // Ending an exemption drops its reason; a reason sent on its own replaces the current one.
    const reason =
      dto.tax_exempt_reason !== undefined
        ? dto.tax_exempt_reason
        : exempt
          ? subscriber.taxExemptReason
          : null;
    assertTaxExemption(exempt, reason);
    set('tax_exempt', 'taxExempt', exempt);
    set('tax_exempt_reason', 'taxExemptReason', reason);
  }
  if (dto.tax_id !== undefined) {
    set('tax_id', 'taxId', dto.tax_id);
  }
  return changed;
}
