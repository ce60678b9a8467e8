import type { Metadata } from '../../common/metadata';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { SUBSCRIBER_STATUSES, SubscriberStatus, SUSPENSION_REASONS } from '../subscriber-status';
import type { PostalAddress, Subscriber } from '../subscriber.entity';
import {
  AddressDto,
  TAX_EXEMPT_DESCRIPTION,
  TAX_EXEMPT_REASON_DESCRIPTION,
  TAX_ID_DESCRIPTION,
} from './subscriber-fields';
import { ApiMetadata } from '../../common/swagger/api-types';

/** The create answer: exactly the six fields the README's "Subscribers" shows (no contact, address or metadata). */
@ApiSchema({ description: 'The subscriber just created, as the create answers it.' })
export class CreatedSubscriberDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({
    example: 'crm-000123',
    nullable: true,
    type: String,
    description: 'Your own id for this subscriber (unique per tenant); null when none was given.',
  })
  external_id: string | null;

  @ApiProperty({ example: 'Ada Lovelace' })
  full_name: string;

  @ApiProperty({
    enum: SUBSCRIBER_STATUSES,
    example: SubscriberStatus.Prospect,
    description:
      'Lifecycle state; changed only by POST /subscribers/{id}/status (transitions in the README, "Lifecycle").',
  })
  status: SubscriberStatus;

  @ApiProperty({
    example: 'bp_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description:
      'The billing profile (currency, billing day, terms) this subscriber is billed under; null: none.',
  })
  billing_profile_id: string | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  static from(subscriber: Subscriber): CreatedSubscriberDto {
    return {
      id: subscriber.id,
      external_id: subscriber.externalId,
      full_name: subscriber.fullName,
      status: subscriber.status,
      billing_profile_id: subscriber.billingProfileId,
      created_at: subscriber.createdAt.toISOString(),
    };
  }
}

/** The full record, as reads return it. */
@ApiSchema({ description: 'A person or business the ISP serves: contact fields, status and metadata.' })
export class SubscriberDto extends CreatedSubscriberDto {
  @ApiProperty({ example: 'ada@example.net', nullable: true, type: String })
  email: string | null;

  @ApiProperty({ example: '+14155550123', nullable: true, type: String })
  phone: string | null;

  @ApiProperty({ enum: SUSPENSION_REASONS, nullable: true, description: 'Set while suspended.' })
  suspension_reason: string | null;

  @ApiProperty({ type: AddressDto, nullable: true })
  address: PostalAddress | null;

  @ApiMetadata({ example: { plan: 'fiber-500' } })
  metadata: Metadata;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;

  @ApiProperty({ example: false, description: TAX_EXEMPT_DESCRIPTION })
  tax_exempt: boolean;

  @ApiProperty({ example: null, nullable: true, type: String, description: TAX_EXEMPT_REASON_DESCRIPTION })
  tax_exempt_reason: string | null;

  @ApiProperty({ example: 'NL123456789B01', nullable: true, type: String, description: TAX_ID_DESCRIPTION })
  tax_id: string | null;

  static override from(subscriber: Subscriber): SubscriberDto {
    return {
      ...CreatedSubscriberDto.from(subscriber),
      email: subscriber.email,
      phone: subscriber.phone,
      suspension_reason: subscriber.suspensionReason,
      address: subscriber.address,
      metadata: subscriber.metadata,
      updated_at: subscriber.updatedAt.toISOString(),
      tax_exempt: subscriber.taxExempt,
      tax_exempt_reason: subscriber.taxExemptReason,
      tax_id: subscriber.taxId,
    };
  }
}
