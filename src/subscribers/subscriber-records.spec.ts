import { QueryFailedError } from 'typeorm';
import { ApiError } from '../common/errors/api-error';
import { isId } from '../common/ids';
import type { CreateSubscriberDto } from './dto/create-subscriber.dto';
import { assertTaxExemption, newSubscriber, normalizeEmail, writeError } from './subscriber-records';
import { SubscriberStatus, SuspensionReason } from './subscriber-status';

const NOW = new Date('2026-03-01T09:00:00.000Z');

const violation = (code: string, constraint: string) =>
  new QueryFailedError('INSERT …', [], Object.assign(new Error('violation'), { code, constraint }));

const thrown = (work: () => void): ApiError | null => {
  try {
    work();
    return null;
  } catch (error) {
    return error as ApiError;
  }
};

describe('writeError', () => {
  it("should answer a billing profile that is not the tenant's as an invalid reference", () => {
    expect(writeError(violation('23503', 'fk_subscribers_billing_profile'), 'bp_x')).toMatchObject({
      code: 'invalid_reference',
      field: 'billing_profile_id',
      message: 'No billing profile bp_x exists.',
    });
  });

  it('should answer a duplicate by the field it repeats', () => {
    expect(writeError(violation('23505', 'uq_subscribers_external_id'))).toMatchObject({
      code: 'duplicate_subscriber',
      field: 'external_id',
    });
    expect(writeError(violation('23505', 'uq_subscribers_email'))).toMatchObject({
      code: 'duplicate_subscriber',
      field: 'email',
    });
  });

  it('should leave any other failure to the caller', () => {
    expect(writeError(violation('23505', 'uq_something_else'))).toBeNull();
    expect(writeError(violation('23503', 'fk_subscribers_tenant'))).toBeNull();
    expect(writeError(violation('23514', 'uq_subscribers_email'))).toBeNull();
    expect(writeError(new Error('uq_subscribers_email'))).toBeNull();
  });
});

describe('assertTaxExemption', () => {
  it('should take an exemption with its reason, and no exemption without one', () => {
    expect(() => assertTaxExemption(true, 'diplomatic mission')).not.toThrow();
    expect(() => assertTaxExemption(false, null)).not.toThrow();
  });

  it('should ask why for an exemption without a reason', () => {
    expect(thrown(() => assertTaxExemption(true, null))).toMatchObject({
      code: 'missing_field',
      field: 'tax_exempt_reason',
    });
  });

  it('should refuse a reason without an exemption', () => {
    expect(thrown(() => assertTaxExemption(false, 'because'))).toMatchObject({
      code: 'validation_failed',
      field: 'tax_exempt_reason',
    });
  });
});

describe('normalizeEmail', () => {
  it('should compare addresses without case, and keep no address as none', () => {
    expect(normalizeEmail('Alice.Smith@Example.COM')).toBe('alice.smith@example.com');
    expect(normalizeEmail('')).toBeNull();
    expect(normalizeEmail(null)).toBeNull();
    expect(normalizeEmail(undefined)).toBeNull();
  });
});

describe('newSubscriber', () => {
  const dto = (fields: Partial<CreateSubscriberDto>) => ({
    full_name: 'Alice Smith',
    status: SubscriberStatus.Active,
    ...fields,
  });

  it('should fill what was not sent with its empty value', () => {
    const subscriber = newSubscriber('ten_1', dto({}), NOW);
    expect(subscriber).toMatchObject({
      tenantId: 'ten_1',
      fullName: 'Alice Smith',
      externalId: null,
      email: null,
      emailNormalized: null,
      phone: null,
      status: SubscriberStatus.Active,
      suspensionReason: null,
      billingProfileId: null,
      address: null,
      metadata: {},
      taxExempt: false,
      taxExemptReason: null,
      taxId: null,
      createdAt: NOW,
      updatedAt: NOW,
    });
    expect(isId('sub', subscriber.id)).toBe(true);
  });

  it('should keep the email as sent and its normalized form beside it', () => {
    const subscriber = newSubscriber('ten_1', dto({ email: 'Alice@Example.com' }), NOW);
    expect([subscriber.email, subscriber.emailNormalized]).toEqual([
      'Alice@Example.com',
      'alice@example.com',
    ]);
  });

  it('should record a subscriber created suspended as suspended by hand', () => {
    expect(newSubscriber('ten_1', dto({ status: SubscriberStatus.Suspended }), NOW).suspensionReason).toBe(
      SuspensionReason.Manual,
    );
  });

  it('should copy the address, so a later change to the request does not reach the record', () => {
    const address = { line1: '1 Main St', city: 'Ghent' };
    const subscriber = newSubscriber('ten_1', dto({ address }), NOW);
    address.city = 'Bruges';
    expect(subscriber.address).toMatchObject({ city: 'Ghent' });
  });

  it('should refuse an exemption without a reason before making anything', () => {
    expect(thrown(() => newSubscriber('ten_1', dto({ tax_exempt: true }), NOW))).toMatchObject({
      code: 'missing_field',
    });
  });
});
