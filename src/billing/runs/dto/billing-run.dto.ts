import { lineDto } from '../../invoices/dto/invoice-response.dto';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import type { Actor } from '../../../common/request-context';
import { PageQueryDto } from '../../../common/pagination';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';
import { addDays, MAX_DAY } from '../../../common/dates';
import { IsDateOnly, IsNotAfterDay } from '../../../common/validation/is-date-only';
import { MAX_PAYMENT_TERMS_DAYS } from '../../profiles/dto/billing-profile.dto';
import { InvoiceLineDto } from '../../invoices/dto/invoice-response.dto';
import {
  BILLING_RUN_STATUSES,
  BillingRun,
  BillingRunItem,
  BillingRunStatus,
  BillingRunTrigger,
} from '../billing-run.entity';
import { Optional } from '../../../common/validation/optional';
import { OneOrMoreOf } from '../../../common/validation/comma-list';

/** The latest as_of: its period (a month) and its invoices' due dates (up to MAX_PAYMENT_TERMS_DAYS) end by MAX_DAY. */
export const MAX_AS_OF = addDays(MAX_DAY, -MAX_PAYMENT_TERMS_DAYS);

@ApiSchema({
  description: 'A bill run to start: the day it bills as of, and whether it only computes (dry run).',
})
export class CreateBillingRunDto {
  @ApiPropertyOptional({
    example: '2026-12-01',
    description:
      'The day billed (YYYY-MM-DD): subscribers whose billing day is this day of the month are invoiced for the period starting it. Default: today (UTC). From 1900-01-01 to 9998-12-31: the period and its due dates end by 9999-12-31.',
  })
  @Optional()
  @IsDateOnly()
  @IsNotAfterDay(
    MAX_AS_OF,
    `a run bills the month from as_of and its invoices fall due up to ${MAX_PAYMENT_TERMS_DAYS} days later, and no date may pass ${MAX_DAY}`,
  )
  as_of?: string;

  @ApiPropertyOptional({
    default: false,
    description:
      'Compute the same figures and write nothing: no invoice, ledger entry or event but the run itself.',
  })
  @Optional()
  @IsBoolean()
  dry_run?: boolean;
}

export class ListBillingRunsQueryDto extends PageQueryDto {
  @OneOrMoreOf(BILLING_RUN_STATUSES, { description: 'Only runs in one of these states.' })
  status?: BillingRunStatus[];
}

@ApiSchema({ description: "A bill run's total in one currency." })
export class RunAmountDto {
  @ApiProperty({ example: 'USD' }) currency: string;
  @ApiInteger({
    example: 1249500,
    description: "Sum of the run's invoice totals, in minor units of `currency`.",
  })
  amount: number;
}

@ApiSchema({ description: 'A subscriber a bill run could not bill, and why.' })
export class RunErrorDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber not billed.' })
  subscriber_id: string;
  @ApiProperty({
    example: 'plan plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB is priced in EUR; the subscriber is billed in USD',
  })
  reason: string;
}

@ApiSchema({
  description:
    'A recurring bill run: which subscribers it bills as of a day, its progress, totals and per-subscriber errors.',
})
export class BillingRunDto {
  @ApiProperty({ example: 'brun_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({
    example: '2026-12-01',
    description: 'The day billed (YYYY-MM-DD): subscribers with this billing day, for the period it starts.',
  })
  as_of: string;
  @ApiProperty({
    example: false,
    description: 'true: figures computed, nothing written (no invoice or event).',
  })
  dry_run: boolean;
  @ApiProperty({
    enum: Object.values(BillingRunTrigger),
    example: BillingRunTrigger.Api,
    description: 'api: started by POST /billing-runs; schedule: by the daily scheduler.',
  })
  trigger: BillingRunTrigger;
  @ApiProperty({
    enum: BILLING_RUN_STATUSES,
    example: BillingRunStatus.Completed,
    description: 'running until every due subscriber is handled, then completed (see `errors`) or failed.',
  })
  status: BillingRunStatus;
  @ApiInteger({
    example: 250,
    description:
      'Subscribers due on as_of and not yet billed for its period when the run started (less any found with nothing to bill).',
  })
  subscribers_due: number;
  @ApiInteger({ example: 248, description: 'Subscribers this run billed (an invoice or a credit).' })
  subscribers_billed: number;
  @ApiInteger({ example: 247, description: 'Invoices this run issued (computed only, on a dry run).' })
  invoices_created: number;
  @ApiInteger({ example: 1, description: 'Credits issued where the lines netted below zero.' })
  credits_created: number;
  @ApiProperty({ type: [RunAmountDto], description: "The invoices' totals by currency." })
  amount_total: RunAmountDto[];
  @ApiProperty({ type: [RunErrorDto], description: 'Subscribers the run could not bill, and why.' })
  errors: RunErrorDto[];
  @ApiProperty({ example: '2026-12-01T02:00:00.000Z' }) created_at: string;
  @ApiProperty({ example: '2026-12-01T02:00:41.000Z' }) updated_at: string;
  @ApiProperty({
    example: '2026-12-01T02:00:41.000Z',
    type: String,
    nullable: true,
    description: 'When the run ended (completed or failed); null while running.',
  })
  completed_at: string | null;

  static from(run: BillingRun): BillingRunDto {
    return {
      id: run.id,
      as_of: run.asOf,
      dry_run: run.dryRun,
      trigger: run.trigger,
      status: run.status,
      subscribers_due: run.subscribersDue,
      subscribers_billed: run.subscribersBilled,
      invoices_created: run.invoicesCreated,
      credits_created: run.creditsCreated,
      amount_total: run.amountTotal,
      errors: run.errors,
      created_at: run.createdAt.toISOString(),
      updated_at: run.updatedAt.toISOString(),
      completed_at: run.completedAt?.toISOString() ?? null,
    };
  }
}

/** A new run row, running, with no figures yet. */
export function newRun(fields: {
  id: string;
  tenantId: string;
  asOf: string;
  dryRun: boolean;
  trigger: BillingRunTrigger;
  actor: Actor;
  requestId: string | null;
  at: Date;
}): BillingRun {
  return Object.assign(new BillingRun(), {
    tenantId: fields.tenantId,
    id: fields.id,
    asOf: fields.asOf,
    dryRun: fields.dryRun,
    trigger: fields.trigger,
    status: BillingRunStatus.Running,
    subscribersDue: 0,
    subscribersBilled: 0,
    invoicesCreated: 0,
    creditsCreated: 0,
    amountTotal: [],
    errors: [],
    actor: fields.actor,
    requestId: fields.requestId,
    leaseId: null,
    leaseUntil: null,
    completedAt: null,
    createdAt: fields.at,
    updatedAt: fields.at,
  });
}

@ApiSchema({
  description:
    'What a bill run issued to one subscriber (a dry run: what it would issue): the lines, their total, and the invoice or credit created, or why it could not be billed.',
})
export class BillingRunItemDto {
  @ApiProperty({ example: 'bri_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({ example: 'brun_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The run.' })
  billing_run_id: string;
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber billed.' })
  subscriber_id: string;
  @ApiProperty({ example: 'EUR', description: "ISO 4217 code: the subscriber's billing profile's." })
  currency: string;
  @ApiProperty({ type: [InvoiceLineDto], description: 'The lines, as the invoice carries them.' })
  lines: InvoiceLineDto[];
  @ApiMoney({
    example: 4999,
    signed: true,
    description: 'The sum of the lines, in minor units; below zero a credit is issued instead of an invoice.',
  })
  total: number;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description:
      'The invoice issued; null in a dry run, for a credit, or when the subscriber could not be billed.',
  })
  invoice_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'The credit transaction issued when the lines netted below zero; null otherwise.',
  })
  credit_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'Why the subscriber could not be billed (also in the run’s errors); null when it was.',
  })
  error: string | null;
  @ApiProperty({ example: '2026-12-01T06:00:00.000Z', description: 'When the run wrote it.' })
  created_at: string;

  static from(item: BillingRunItem): BillingRunItemDto {
    return {
      id: item.id,
      billing_run_id: item.runId,
      subscriber_id: item.subscriberId,
      currency: item.currency,
      lines: item.lines.map(lineDto),
      total: item.total,
      invoice_id: item.invoiceId,
      credit_id: item.creditId,
      error: item.error,
      created_at: item.createdAt.toISOString(),
    };
  }
}
