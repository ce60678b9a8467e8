import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { MAX_AMOUNT } from '../../common/money';
import { PageQueryDto } from '../../common/pagination';
import { ApiInteger, ApiMoney } from '../../common/swagger/api-types';
import { IsCurrency } from '../../common/validation/is-currency';
import { IsTrimmedText } from '../../common/validation/text';
import type { ServicePlan } from '../provisioning.entity';
import { Optional, OptionalNullable } from '../../common/validation/optional';
import { CAP_ACTIONS, type CapAction } from '../service-status';
import { TAX_RATE_IDS_SCHEMA, TaxRateIdsProperty } from '../../common/validation/tax-rate-ids';

/**
 * Billing periods a plan may have. Bill runs invoice monthly: a quarterly or yearly plan is billed each month its share
 * of the price by days (docs/billing.md).
 */
export const BILLING_PERIODS = ['monthly', 'quarterly', 'yearly'] as const;
const MAX_KBPS = 100_000_000; // 100 Gbit/s

const present = (_object: object, value: unknown) => value !== undefined;

const TAX_RATE_IDS_DESCRIPTION =
  "The tax rates (GET /tax-rates) its services' invoice lines are taxed at; null: the billing profile's defaults; []: untaxed. Tax-exempt subscribers are not taxed.";

const speed = (direction: string, example: number) =>
  ApiInteger({ example, minimum: 1, maximum: MAX_KBPS, description: `${direction} rate in kbit/s.` });

/** The largest data cap: a petabyte. */
export const MAX_CAP_BYTES = 1_000_000_000_000_000;
/** The longest MikroTik burst time, in seconds. */
const MAX_BURST_TIME_S = 3600;

const nullableKbps = (description: string) =>
  ApiInteger({
    required: false,
    nullable: true,
    minimum: 1,
    maximum: MAX_KBPS,
    description: `${description} In kbit/s.`,
  });

const CAP_DESCRIPTION =
  "Bytes (download + upload, from RADIUS accounting) a service may use per billing period (the subscriber's " +
  'billing-day month) before `cap_action` applies; top-ups add to it for their period. null: no cap.';
const CAP_ACTION_DESCRIPTION =
  'At the cap: `throttle` (the session is moved to the throttle rates by a CoA-Request and logins get them) or ' +
  '`block` (the session is disconnected and logins rejected), until the next period or a top-up. Required with ' +
  '`data_cap_bytes`.';
const BURST_DESCRIPTION =
  "MikroTik burst (written in Mikrotik-Rate-Limit): all five burst fields or none; a burst rate above the plan's " +
  'rate, a threshold at most the rate.';

/**
 * The data cap and burst fields a plan takes on create and PATCH (null clears one on PATCH). Checked together by
 * ServicePlansService (checkNetworkFields): a cap with its action, throttle rates with `throttle`, burst all or none.
 */
export class PlanNetworkFieldsDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    required: false,
    nullable: true,
    minimum: 1,
    maximum: MAX_CAP_BYTES,
    example: 500_000_000_000,
    description: CAP_DESCRIPTION,
  })
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(MAX_CAP_BYTES)
  data_cap_bytes?: number | null;

  @ApiPropertyOptional({
    enum: CAP_ACTIONS,
    nullable: true,
    example: 'throttle',
    description: CAP_ACTION_DESCRIPTION,
  })
  @OptionalNullable()
  @IsIn(CAP_ACTIONS, { message: `cap_action must be one of ${CAP_ACTIONS.join(', ')}` })
  cap_action?: CapAction | null;

  @nullableKbps('Download rate while throttled (cap_action throttle, required with it).')
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  throttle_download_kbps?: number | null;

  @nullableKbps('Upload rate while throttled (cap_action throttle, required with it).')
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  throttle_upload_kbps?: number | null;

  @nullableKbps(`Download burst rate, above download_kbps. ${BURST_DESCRIPTION}`)
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  burst_download_kbps?: number | null;

  @nullableKbps(`Upload burst rate, above upload_kbps. ${BURST_DESCRIPTION}`)
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  burst_upload_kbps?: number | null;

  @nullableKbps(
    'Download burst threshold, at most download_kbps: bursting is allowed while the average rate over the burst time is below it.',
  )
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  burst_threshold_download_kbps?: number | null;

  @nullableKbps('Upload burst threshold, at most upload_kbps.')
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  burst_threshold_upload_kbps?: number | null;

  @ApiInteger({
    required: false,
    nullable: true,
    minimum: 1,
    maximum: MAX_BURST_TIME_S,
    example: 16,
    description: 'Seconds over which the average rate is measured against the thresholds (both directions).',
  })
  @OptionalNullable()
  @IsInt()
  @Min(1)
  @Max(MAX_BURST_TIME_S)
  burst_time_s?: number | null;
}

@ApiSchema({ description: 'A new service plan: speeds, price and currency.' })
export class CreateServicePlanDto extends PlanNetworkFieldsDto {
  @ApiProperty({ example: 'Fiber 500', maxLength: 100, description: 'Unique per tenant.' })
  @IsTrimmedText(100)
  name: string;

  @speed('Download', 500_000)
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  download_kbps: number;

  @speed('Upload', 100_000)
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  upload_kbps: number;

  @ApiMoney({ example: 4999, description: 'Per billing period, in integer minor units (4999 = 49.99).' })
  @IsInt()
  @Min(0)
  @Max(MAX_AMOUNT)
  price: number;

  @ApiProperty({ example: 'USD', description: 'ISO 4217.' })
  @IsCurrency()
  currency: string;

  @ApiPropertyOptional({
    enum: BILLING_PERIODS,
    default: 'monthly',
    description: 'How often `price` is billed.',
  })
  @ValidateIf(present)
  @IsIn(BILLING_PERIODS, { message: `billing_period must be one of ${BILLING_PERIODS.join(', ')}` })
  billing_period: string = 'monthly';

  @ApiPropertyOptional({
    example: true,
    default: true,
    description: 'An inactive plan takes no new services.',
  })
  @ValidateIf(present)
  @IsBoolean()
  active: boolean = true;

  @TaxRateIdsProperty({ nullable: true, description: `${TAX_RATE_IDS_DESCRIPTION} Default null.` })
  tax_rate_ids?: string[] | null;
}

/** PATCH: name and active always; speeds and price only while no live service uses the plan (409 plan_in_use). */
@ApiSchema({ description: 'The plan fields to change; absent ones stay as they are.' })
export class UpdateServicePlanDto extends PlanNetworkFieldsDto {
  @ApiPropertyOptional({ example: 'Fiber 500 (legacy)' })
  @ValidateIf(present)
  @IsTrimmedText(100)
  name?: string;

  @ApiInteger({ required: false, minimum: 1, maximum: MAX_KBPS, description: 'Download rate in kbit/s.' })
  @ValidateIf(present)
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  download_kbps?: number;

  @ApiInteger({ required: false, minimum: 1, maximum: MAX_KBPS, description: 'Upload rate in kbit/s.' })
  @ValidateIf(present)
  @IsInt()
  @Min(1)
  @Max(MAX_KBPS)
  upload_kbps?: number;

  @ApiMoney({ required: false, description: 'Per billing period, in minor units of `currency`.' })
  @ValidateIf(present)
  @IsInt()
  @Min(0)
  @Max(MAX_AMOUNT)
  price?: number;

  @ApiPropertyOptional({ example: false, description: 'false: the plan takes no new services.' })
  @ValidateIf(present)
  @IsBoolean()
  active?: boolean;

  @TaxRateIdsProperty({
    nullable: true,
    description: `${TAX_RATE_IDS_DESCRIPTION} Changes the invoices issued from now on, even while services use the plan.`,
  })
  tax_rate_ids?: string[] | null;
}

export class ListServicePlansQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'Only active (true) or inactive (false) plans.',
  })
  @Optional()
  @IsIn(['true', 'false'], { message: 'active must be true or false' })
  active?: 'true' | 'false';
}

@ApiSchema({ description: 'A product a service is sold on: speeds, price and currency.' })
export class ServicePlanDto {
  @ApiProperty({ example: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'Fiber 500' })
  name: string;

  @ApiInteger({ example: 500_000, description: 'Download rate in kbit/s.' })
  download_kbps: number;

  @ApiInteger({ example: 100_000, description: 'Upload rate in kbit/s.' })
  upload_kbps: number;

  @ApiMoney({ example: 4999, description: 'Per billing period, in minor units of `currency`.' })
  price: number;

  @ApiProperty({ example: 'USD', description: 'ISO 4217 code of `price`.' })
  currency: string;

  @ApiProperty({ enum: BILLING_PERIODS, example: 'monthly', description: 'How often `price` is billed.' })
  billing_period: string;

  @ApiProperty({
    example: true,
    description: 'false: the plan takes no new services (existing ones keep it).',
  })
  active: boolean;

  @ApiProperty({ ...TAX_RATE_IDS_SCHEMA, nullable: true, description: TAX_RATE_IDS_DESCRIPTION })
  tax_rate_ids: string[] | null;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    nullable: true,
    example: 500_000_000_000,
    description: CAP_DESCRIPTION,
  })
  data_cap_bytes: number | null;

  @ApiProperty({
    enum: CAP_ACTIONS,
    nullable: true,
    example: 'throttle',
    description: CAP_ACTION_DESCRIPTION,
  })
  cap_action: CapAction | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 2_000,
    description: 'Download kbit/s while throttled.',
  })
  throttle_download_kbps: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 1_000,
    description: 'Upload kbit/s while throttled.',
  })
  throttle_upload_kbps: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 800_000,
    description: `Download burst kbit/s. ${BURST_DESCRIPTION}`,
  })
  burst_download_kbps: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 150_000, description: 'Upload burst kbit/s.' })
  burst_upload_kbps: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 400_000,
    description: 'Download burst threshold kbit/s.',
  })
  burst_threshold_download_kbps: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 80_000,
    description: 'Upload burst threshold kbit/s.',
  })
  burst_threshold_upload_kbps: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 16, description: 'Burst time in seconds.' })
  burst_time_s: number | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;

  static from(plan: ServicePlan): ServicePlanDto {
    return {
      id: plan.id,
      name: plan.name,
      download_kbps: plan.downloadKbps,
      upload_kbps: plan.uploadKbps,
      price: plan.price,
      currency: plan.currency,
      billing_period: plan.billingPeriod,
      active: plan.active,
      tax_rate_ids: plan.taxRateIds,
      data_cap_bytes: plan.dataCapBytes,
      cap_action: plan.capAction,
      throttle_download_kbps: plan.throttleDownloadKbps,
      throttle_upload_kbps: plan.throttleUploadKbps,
      burst_download_kbps: plan.burstDownloadKbps,
      burst_upload_kbps: plan.burstUploadKbps,
      burst_threshold_download_kbps: plan.burstThresholdDownloadKbps,
      burst_threshold_upload_kbps: plan.burstThresholdUploadKbps,
      burst_time_s: plan.burstTimeS,
      created_at: plan.createdAt.toISOString(),
      updated_at: plan.updatedAt.toISOString(),
    };
  }
}
