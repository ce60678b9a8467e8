import { ApiProperty, PartialType, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsInt, Max, Min } from 'class-validator';
import { IsCurrency } from '../../../common/validation/is-currency';
import { IsTrimmedText } from '../../../common/validation/text';
import { BillingProfile } from '../billing-profile.entity';
import { ApiInteger } from '../../../common/swagger/api-types';
import { Optional, OptionalNullable } from '../../../common/validation/optional';

/** The longest payment term: a bill run's latest as_of leaves this many days before 9999-12-31 for its due dates. */
export const MAX_PAYMENT_TERMS_DAYS = 365;

/** Reminders: at most this many offsets, each within these days of the due date (negative: before it). */
export const REMINDER_OFFSETS = { maxItems: 10, minimum: -60, maximum: 365 } as const;

const REMINDER_OFFSETS_SCHEMA = {
  type: 'array',
  items: {
    type: 'integer',
    format: 'int32',
    minimum: REMINDER_OFFSETS.minimum,
    maximum: REMINDER_OFFSETS.maximum,
  },
  maxItems: REMINDER_OFFSETS.maxItems,
  uniqueItems: true,
  example: [-3, 1, 7],
} as const;

@ApiSchema({ description: 'A new billing profile.' })
export class CreateBillingProfileDto {
  @ApiProperty({ example: 'Residential monthly' })
  @IsTrimmedText(200)
  name: string;

  @ApiProperty({ example: 'USD', description: 'ISO 4217.' })
  @IsCurrency()
  currency: string;

  @ApiInteger({
    example: 1,
    minimum: 1,
    maximum: 28,
    description: 'Day of the month a bill run invoices its subscribers for the period starting that day.',
  })
  @IsInt()
  @Min(1)
  @Max(28)
  billing_day: number;

  @ApiInteger({
    example: 14,
    minimum: 0,
    maximum: 365,
    default: 14,
    required: false,
    description: "Days from an invoice's issue to its due date.",
  })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_PAYMENT_TERMS_DAYS)
  payment_terms_days?: number;

  @ApiInteger({
    required: false,
    example: 30,
    minimum: 1,
    maximum: 365,
    nullable: true,
    description: 'Suspend for non-payment this many days after the due date; null: never.',
  })
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(365)
  auto_suspend_after_days?: number | null;

  @ApiProperty({
    required: false,
    default: false,
    description:
      "The tenant's default profile: subscribers without a billing profile are billed through it. Setting it on one profile clears it on the previous default.",
  })
  @Optional()
  @IsBoolean()
  is_default?: boolean;

  @ApiProperty({
    required: false,
    example: true,
    description:
      "Default true: a payment or credit is applied on receipt to its subscriber's open invoices in its currency, oldest due first, and what is left to each invoice issued later. false: money waits for POST /transactions/{id}/allocate (one payment can still opt out or in with its own `auto_apply`).",
  })
  @Optional()
  @IsBoolean()
  auto_apply?: boolean;

  @ApiProperty({
    ...REMINDER_OFFSETS_SCHEMA,
    required: false,
    description:
      'Days relative to the due date (negative: before it) on which an `invoice.reminder` is sent for an invoice still owed, once per invoice and offset; at most 10 distinct values from -60 to 365. Default []: no reminders.',
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(REMINDER_OFFSETS.maxItems)
  @ArrayUnique()
  @IsInt({ each: true })
  @Min(REMINDER_OFFSETS.minimum, { each: true })
  @Max(REMINDER_OFFSETS.maximum, { each: true })
  reminder_offsets?: number[];
}

/** PATCH: only the fields sent change. Null is accepted only for auto_suspend_after_days (OptionalNullable). */
@ApiSchema({ description: 'The billing profile fields to change; absent ones stay as they are.' })
export class UpdateBillingProfileDto extends PartialType(CreateBillingProfileDto, {
  skipNullProperties: false,
}) {}

@ApiSchema({ description: 'How a subscriber is billed: currency, billing day and payment terms.' })
export class BillingProfileDto {
  @ApiProperty({ example: 'bp_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'Residential monthly' }) name: string;
  @ApiProperty({ example: 'USD', description: 'ISO 4217: the currency its subscribers are invoiced in.' })
  currency: string;
  @ApiInteger({ example: 1, description: 'Day of the month (1–28) its subscribers are billed.' })
  billing_day: number;
  @ApiInteger({ example: 14, description: "Days from an invoice's issue to its due date." })
  payment_terms_days: number;
  @ApiInteger({
    example: 30,
    nullable: true,
    description: 'Suspend for non-payment this many days after the due date; null: never.',
  })
  auto_suspend_after_days: number | null;
  @ApiProperty({
    example: false,
    description: "The tenant's default: subscribers without a billing profile are billed through it.",
  })
  is_default: boolean;
  @ApiProperty({
    example: true,
    description:
      "Whether payments and credits are applied on receipt to open invoices, oldest due first, and what is left to each invoice issued; false: they wait for an explicit allocation.",
  })
  auto_apply: boolean;
  @ApiProperty({
    ...REMINDER_OFFSETS_SCHEMA,
    description:
      'Days relative to the due date (negative: before it) on which an `invoice.reminder` is sent for an invoice still owed; empty: none.',
  })
  reminder_offsets: number[];
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) updated_at: string;

  static from(profile: BillingProfile): BillingProfileDto {
    return {
      id: profile.id,
      name: profile.name,
      currency: profile.currency,
      billing_day: profile.billingDay,
      payment_terms_days: profile.paymentTermsDays,
      auto_suspend_after_days: profile.autoSuspendAfterDays,
      is_default: profile.isDefault,
      auto_apply: profile.autoApply,
      reminder_offsets: profile.reminderOffsets,
      created_at: profile.createdAt.toISOString(),
      updated_at: profile.updatedAt.toISOString(),
    };
  }
}
