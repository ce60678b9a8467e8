import { ApiExtraModels, ApiProperty, PartialType, ApiSchema } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsInt,
  IsObject,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { MAX_AMOUNT } from '../../../common/money';
import { IsCurrency } from '../../../common/validation/is-currency';
import { IsTrimmedText } from '../../../common/validation/text';
import { BillingProfile } from '../billing-profile.entity';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';
import { Optional, OptionalNullable } from '../../../common/validation/optional';
import { TAX_RATE_IDS_SCHEMA, TaxRateIdsProperty } from '../../../common/validation/tax-rate-ids';
import {
  FixedLateFeeDto,
  FixedLateFeeFormDto,
  LATE_FEE_FORM_SCHEMA,
  LATE_FEE_SCHEMA,
  lateFeeOf,
  LateFeeFormType,
  PercentageLateFeeDto,
  PercentageLateFeeFormDto,
  type LateFee,
  type LateFeeForm,
} from './fees.dto';

const LATE_FEE_DESCRIPTION =
  'Charged once per invoice still owed after due_date + after_days, by the `late_fee` automation rule: a pending charge issued at once on an invoice of its own (due after payment_terms_days), so it can become overdue too. A late fee invoice never earns a late fee. null: no late fee.';
const RECONNECTION_FEE_DESCRIPTION =
  'Charged by the `reconnection_fee` automation rule, once, when a subscriber suspended for non_payment is made active again (by paid_up or by hand): a pending charge the next invoice carries. In minor units; null: none.';
const TAX_RATE_IDS_DESCRIPTION =
  "The tax rates (GET /tax-rates) its subscribers' invoice lines are taxed at, unless the service plan or the charge names its own; empty: untaxed. Tax-exempt subscribers are not taxed.";
const FEES_BEFORE_RESTORATION_DESCRIPTION =
  'true: paid_up lifts a non_payment suspension only once the late fee invoices and pending fee charges are paid too (money received and not yet applied counts). Default false.';

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
@ApiExtraModels(FixedLateFeeFormDto, PercentageLateFeeFormDto)
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

  @ApiProperty({
    ...LATE_FEE_FORM_SCHEMA,
    required: false,
    nullable: true,
    description: `${LATE_FEE_DESCRIPTION} A PATCH replaces the whole late fee.`,
  })
  @OptionalNullable()
  @IsObject({ message: 'late_fee must be an object' })
  @ValidateNested()
  @LateFeeFormType()
  late_fee?: LateFeeForm | null;

  @ApiMoney({
    example: 1500,
    minimum: 1,
    required: false,
    nullable: true,
    description: RECONNECTION_FEE_DESCRIPTION,
  })
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  reconnection_fee?: number | null;

  @ApiProperty({ required: false, example: false, description: FEES_BEFORE_RESTORATION_DESCRIPTION })
  @Optional()
  @IsBoolean()
  fees_before_restoration?: boolean;

  @TaxRateIdsProperty({ nullable: false, description: `${TAX_RATE_IDS_DESCRIPTION} Default [].` })
  tax_rate_ids?: string[];
}

/** PATCH: only the fields sent change. Null is accepted only where it means none (OptionalNullable). */
@ApiSchema({ description: 'The billing profile fields to change; absent ones stay as they are.' })
export class UpdateBillingProfileDto extends PartialType(CreateBillingProfileDto, {
  skipNullProperties: false,
}) {}

@ApiSchema({ description: 'How a subscriber is billed: currency, billing day, payment terms and fees.' })
@ApiExtraModels(FixedLateFeeDto, PercentageLateFeeDto)
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
      'Whether payments and credits are applied on receipt to open invoices, oldest due first, and what is left to each invoice issued; false: they wait for an explicit allocation.',
  })
  auto_apply: boolean;
  @ApiProperty({
    ...REMINDER_OFFSETS_SCHEMA,
    description:
      'Days relative to the due date (negative: before it) on which an `invoice.reminder` is sent for an invoice still owed; empty: none.',
  })
  reminder_offsets: number[];
  @ApiProperty({
    ...LATE_FEE_SCHEMA,
    nullable: true,
    description: LATE_FEE_DESCRIPTION,
  })
  late_fee: LateFee | null;
  @ApiMoney({ example: 1500, minimum: 1, nullable: true, description: RECONNECTION_FEE_DESCRIPTION })
  reconnection_fee: number | null;
  @ApiProperty({ example: false, description: FEES_BEFORE_RESTORATION_DESCRIPTION })
  fees_before_restoration: boolean;
  @ApiProperty({ ...TAX_RATE_IDS_SCHEMA, description: TAX_RATE_IDS_DESCRIPTION })
  tax_rate_ids: string[];
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
      late_fee: lateFeeOf(profile),
      reconnection_fee: profile.reconnectionFee,
      fees_before_restoration: profile.feesBeforeRestoration,
      tax_rate_ids: profile.taxRateIds,
      created_at: profile.createdAt.toISOString(),
      updated_at: profile.updatedAt.toISOString(),
    };
  }
}
