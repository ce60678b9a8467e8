import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsInt, Max, Min } from 'class-validator';
import { MAX_AMOUNT } from '../../../common/money';
import { PageQueryDto } from '../../../common/pagination';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';
import { IsCurrency } from '../../../common/validation/is-currency';
import { Optional } from '../../../common/validation/optional';
import { IsTrimmedText } from '../../../common/validation/text';
import { TAX_RATE_IDS_SCHEMA, TaxRateIdsProperty } from '../../../common/validation/tax-rate-ids';
import { CHARGE_SOURCES, Charge, ChargeStatus } from '../charge.entity';
import { OneOrMoreOf } from '../../../common/validation/comma-list';

const CHARGE_STATUSES = Object.values(ChargeStatus);

const TAX_RATE_IDS_DESCRIPTION =
  "The tax rates (GET /tax-rates) its invoice line is taxed at; null: the billing profile's defaults; []: untaxed. Tax-exempt subscribers are not taxed.";

/** The most units one charge bills. */
export const MAX_CHARGE_QUANTITY = 10_000;

@ApiSchema({
  description:
    'A one-off charge for a subscriber (an installation, a router, a visit): it waits as a pending invoice item until the next invoice issued to the subscriber in its currency carries it, or is invoiced at once with `invoice_now`.',
})
export class CreateChargeDto {
  @ApiProperty({ example: 'Router TP-Link Archer C6', maxLength: 500, description: 'The invoice line text.' })
  @IsTrimmedText(500)
  description: string;

  @ApiMoney({
    example: 4900,
    minimum: 1,
    description: 'Price per unit, positive integer minor units of `currency`.',
  })
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  amount: number;

  @ApiProperty({
    example: 'USD',
    description:
      "ISO 4217 code; must be the currency of the subscriber's billing profile (422 currency_mismatch).",
  })
  @IsCurrency()
  currency: string;

  @ApiInteger({
    required: false,
    example: 1,
    minimum: 1,
    maximum: MAX_CHARGE_QUANTITY,
    description: 'Units; default 1.',
  })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_CHARGE_QUANTITY)
  quantity?: number;

  @ApiPropertyOptional({
    example: 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    maxLength: 64,
    description:
      "The subscriber's service the charge is for (shown on the invoice line); 422 invalid_reference when it is not one of its services.",
  })
  @Optional()
  @IsTrimmedText(64)
  service_id?: string;

  @ApiPropertyOptional({
    example: false,
    description:
      'true: issue an invoice now, carrying this charge and every other pending charge of the subscriber in this currency (due after the profile’s payment terms); default false: wait for the next invoice.',
  })
  @Optional()
  @IsBoolean()
  invoice_now?: boolean;

  @TaxRateIdsProperty({ nullable: true, description: `${TAX_RATE_IDS_DESCRIPTION} Default null.` })
  tax_rate_ids?: string[] | null;
}

export class ListChargesQueryDto extends PageQueryDto {
  @OneOrMoreOf(CHARGE_STATUSES, {
    description: 'pending (default): not invoiced yet; invoiced: carried by an invoice or a bill run credit.',
  })
  status?: ChargeStatus[];
}

@ApiSchema({ description: 'A pending invoice item, or one an invoice has carried.' })
export class ChargeDto {
  @ApiProperty({ example: 'chg_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber charged.' })
  subscriber_id: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'The service the charge is for; null when it is for the subscriber.',
  })
  service_id: string | null;
  @ApiProperty({ example: 'Router TP-Link Archer C6', description: 'The invoice line text.' })
  description: string;
  @ApiInteger({ example: 1, minimum: 1, description: 'Units billed.' }) quantity: number;
  @ApiMoney({
    example: 4900,
    signed: true,
    description:
      'Per unit, in minor units of `currency`; negative only on a termination’s credit for prepaid days.',
  })
  unit_amount: number;
  @ApiMoney({
    example: 4900,
    signed: true,
    description: 'quantity × unit_amount, in minor units of `currency`.',
  })
  amount: number;
  @ApiProperty({ example: 'EUR', description: 'ISO 4217 code of the amounts.' }) currency: string;
  @ApiProperty({
    enum: CHARGE_STATUSES,
    description:
      'pending: waits for the next invoice; invoiced: an invoice (or a bill run credit) carried it.',
  })
  status: string;
  @ApiProperty({
    enum: CHARGE_SOURCES,
    description:
      'api: POST /subscribers/{id}/charges; debit: a debit transaction; termination: a service ended, settling its prepaid or unbilled days; late_fee and reconnection_fee: the collections rules; top_up: a data cap top-up (POST /services/{id}/top-ups).',
  })
  source: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description:
      'What it came from: the debit transaction, the ended service, or the invoice or suspension a fee is for.',
  })
  source_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date',
    example: null,
    description: 'First day a termination’s line covers (YYYY-MM-DD); null otherwise.',
  })
  period_start: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date',
    example: null,
    description: 'Last day (inclusive) a termination’s line covers; null otherwise.',
  })
  period_end: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'The invoice that carried it; null while pending (or when a bill run credit carried it).',
  })
  invoice_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'The credit transaction that carried it, when the lines it went with netted below zero.',
  })
  credit_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'When an invoice or credit carried it; null while pending.',
  })
  invoiced_at: string | null;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', description: 'When the charge was recorded.' })
  created_at: string;
  @ApiProperty({ ...TAX_RATE_IDS_SCHEMA, nullable: true, description: TAX_RATE_IDS_DESCRIPTION })
  tax_rate_ids: string[] | null;

  static from(charge: Charge): ChargeDto {
    return {
      id: charge.id,
      subscriber_id: charge.subscriberId,
      service_id: charge.serviceId,
      description: charge.description,
      quantity: charge.quantity,
      unit_amount: charge.unitAmount,
      amount: charge.amount,
      currency: charge.currency,
      status: charge.status,
      source: charge.source,
      source_id: charge.sourceId,
      period_start: charge.periodStart,
      period_end: charge.periodEnd,
      invoice_id: charge.invoiceId,
      credit_id: charge.creditId,
      invoiced_at: charge.invoicedAt?.toISOString() ?? null,
      created_at: charge.createdAt.toISOString(),
      tax_rate_ids: charge.taxRateIds ?? null,
    };
  }
}
