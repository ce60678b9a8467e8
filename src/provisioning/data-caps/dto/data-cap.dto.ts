import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { MAX_AMOUNT } from '../../../common/money';
import { ApiByteCount, ApiMoney } from '../../../common/swagger/api-types';
import { Optional } from '../../../common/validation/optional';
import { IsTrimmedText } from '../../../common/validation/text';
import { CAP_ACTIONS, CAP_STATES, CapState, type CapAction } from '../../service-status';
import type { ServiceTopUp } from '../data-cap.entity';

/** The most bytes one top-up adds: a petabyte. */
export const MAX_TOP_UP_BYTES = 1_000_000_000_000_000;

@ApiSchema({
  description:
    "A service's data cap this billing period: what it used, what it may use (the plan's cap and the period's top-ups) and what the cap does to it now.",
})
export class DataCapDto {
  @ApiProperty({ example: 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  service_id: string;

  @ApiProperty({
    enum: CAP_STATES,
    example: CapState.Normal,
    description: 'normal, throttled (the throttle rates) or blocked (logins rejected).',
  })
  cap_state: CapState;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    nullable: true,
    example: 500_000_000_000,
    description: "The plan's cap in bytes; null: the plan has none.",
  })
  cap_bytes: number | null;

  @ApiProperty({
    enum: CAP_ACTIONS,
    nullable: true,
    example: 'throttle',
    description: 'What reaching it does.',
  })
  cap_action: CapAction | null;

  @ApiProperty({
    format: 'date',
    example: '2026-12-01',
    description: "The period's first day (UTC), on the subscriber's billing-day grid.",
  })
  period_start: string;

  @ApiProperty({ format: 'date', example: '2027-01-01', description: 'The day the next period starts.' })
  period_end: string;

  @ApiByteCount({ example: 123_456_789_012, description: 'Bytes down and up counted this period (radacct).' })
  used_bytes: number;

  @ApiByteCount({ example: 0, description: "Bytes the period's top-ups add." })
  top_up_bytes: number;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    nullable: true,
    example: 500_000_000_000,
    description: 'cap_bytes + top_up_bytes; null without a cap.',
  })
  allowance_bytes: number | null;

  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'When service.cap_warning (80 % of the allowance) was emitted this period.',
  })
  warned_at: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'When service.cap_reached was emitted this period (cleared by a top-up that restores it).',
  })
  reached_at: string | null;
}

@ApiSchema({ description: 'Bytes to add to a capped service for the current billing period, charged once.' })
export class CreateTopUpDto {
  @ApiByteCount({
    minimum: 1,
    maximum: MAX_TOP_UP_BYTES,
    example: 10_000_000_000,
    description: "Bytes added to this period's allowance.",
  })
  @IsInt()
  @Min(1)
  @Max(MAX_TOP_UP_BYTES)
  bytes: number;

  @ApiMoney({
    example: 500,
    description:
      "What it costs, in minor units of the plan's currency: a pending charge the subscriber's next invoice carries (0: free, no charge).",
  })
  @IsInt()
  @Min(0)
  @Max(MAX_AMOUNT)
  price: number;

  @ApiPropertyOptional({
    example: 'Data top-up 10 GB',
    maxLength: 500,
    description: 'The invoice line text; default "Data top-up <n> bytes".',
  })
  @Optional()
  @IsTrimmedText(500)
  description?: string;
}

@ApiSchema({ description: "Bytes added to a service's data cap for one billing period." })
export class TopUpDto {
  @ApiProperty({ example: 'tup_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  service_id: string;

  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  subscriber_id: string;

  @ApiByteCount({ example: 10_000_000_000 })
  bytes: number;

  @ApiMoney({ example: 500, description: 'In minor units of `currency`.' })
  price: number;

  @ApiProperty({ example: 'USD' })
  currency: string;

  @ApiProperty({ example: 'Data top-up 10 GB' })
  description: string;

  @ApiProperty({ format: 'date', example: '2026-12-01', description: 'The period the bytes are for.' })
  period_start: string;

  @ApiProperty({ format: 'date', example: '2027-01-01' })
  period_end: string;

  @ApiProperty({
    nullable: true,
    type: String,
    example: 'chg_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description:
      'The pending charge billing recorded for the price (GET /subscribers/{id}/charges); null when free.',
  })
  charge_id: string | null;

  @ApiProperty({ example: '2026-12-03T10:00:00.000Z' })
  created_at: string;

  static from(topUp: ServiceTopUp): TopUpDto {
    return {
      id: topUp.id,
      service_id: topUp.serviceId,
      subscriber_id: topUp.subscriberId,
      bytes: topUp.bytes,
      price: topUp.price,
      currency: topUp.currency,
      description: topUp.description,
      period_start: topUp.periodStart,
      period_end: topUp.periodEnd,
      charge_id: topUp.chargeId,
      created_at: topUp.createdAt.toISOString(),
    };
  }
}
