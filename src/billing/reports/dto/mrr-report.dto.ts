import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';

/** A calendar month, YYYY-MM. */
const MONTH_PATTERN = '^\\d{4}-\\d{2}$';
/** A ratio to 4 decimals, possibly negative. */
const RATE_PATTERN = '^-?\\d+\\.\\d{4}$';

/** A YYYY-MM property of a report (nullable where a row stands for a whole period or a plan). */
export function ApiMonth(options: { example?: string; description?: string; nullable?: boolean } = {}) {
  const { example = '2026-03', description, nullable = false } = options;
  return ApiProperty({
    example,
    ...(nullable ? { nullable: true, type: String } : {}),
    maxLength: 7,
    pattern: MONTH_PATTERN,
    ...(description === undefined ? {} : { description }),
  });
}

@ApiSchema({
  description:
    'One calendar month (UTC) of MRR in one currency: opening + new + expansion + reactivation − contraction − churned = closing.',
})
export class MrrMonthDto {
  @ApiMonth({ description: 'The calendar month (UTC), YYYY-MM.' })
  month: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiMoney({ example: 1240000, description: 'MRR at the end of the month before.' }) opening_mrr: number;
  @ApiMoney({ example: 31000, description: 'MRR of subscribers who never had MRR before.' }) new_mrr: number;
  @ApiMoney({ example: 4500, description: 'Increases of subscribers who had MRR and still have more.' })
  expansion_mrr: number;
  @ApiMoney({ example: 6200, description: 'MRR of subscribers back from 0 who had MRR before.' })
  reactivation_mrr: number;
  @ApiMoney({ example: 2000, description: 'Decreases of subscribers whose MRR stays above 0.' })
  contraction_mrr: number;
  @ApiMoney({ example: 12400, description: 'MRR of subscribers whose MRR fell to 0 (their MRR before).' })
  churned_mrr: number;
  @ApiMoney({ example: 1267300, description: 'MRR at the end of the month.' }) closing_mrr: number;
  @ApiMoney({ example: 27300, signed: true, description: 'closing_mrr − opening_mrr.' }) net_new_mrr: number;
  @ApiInteger({ example: 200, description: 'Subscribers with MRR at the end of the month before.' })
  opening_subscribers: number;
  @ApiInteger({ example: 5 }) new_subscribers: number;
  @ApiInteger({ example: 2 }) expansion_subscribers: number;
  @ApiInteger({ example: 1 }) reactivated_subscribers: number;
  @ApiInteger({ example: 1 }) contraction_subscribers: number;
  @ApiInteger({ example: 2 }) churned_subscribers: number;
  @ApiInteger({ example: 204, description: 'Subscribers with MRR at the end of the month.' })
  closing_subscribers: number;
}

@ApiSchema({
  description:
    "One month of one plan's MRR: the movements are each subscriber's MRR on that plan (a plan change moves MRR out of one plan and into another).",
})
export class MrrPlanMonthDto extends MrrMonthDto {
  @ApiProperty({ example: 'pln_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) plan_id: string;
  @ApiProperty({ example: 'Fiber 500', maxLength: 200 }) plan_name: string;
}

@ApiSchema({ description: 'Monthly recurring revenue per month, currency and plan, with its movements.' })
export class MrrReportDto {
  @ApiMonth({ example: '2026-01', description: 'The first month reported.' })
  from: string;
  @ApiMonth({ example: '2026-12', description: 'The last month reported.' })
  to: string;
  @ApiProperty({ type: [MrrMonthDto], description: 'Per currency, every month from `from` to `to`.' })
  months: MrrMonthDto[];
  @ApiProperty({
    type: [MrrPlanMonthDto],
    description: 'Per currency and plan (plans with MRR in the window).',
  })
  plans: MrrPlanMonthDto[];
}

@ApiSchema({ description: 'Churn over the period in one currency (or one month of it).' })
export class ChurnRowDto {
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiMonth({ nullable: true, description: 'The month; null for the whole period.' })
  month: string | null;
  @ApiInteger({ example: 200, description: 'Subscribers with MRR at the start.' })
  opening_subscribers: number;
  @ApiInteger({ example: 6, description: 'Times a subscriber’s MRR fell to 0.' }) churned_subscribers: number;
  @ApiProperty({
    example: '0.0300',
    maxLength: 12,
    pattern: RATE_PATTERN,
    description: 'churned_subscribers / opening_subscribers, 4 decimals; "0.0000" without any.',
  })
  subscriber_churn_rate: string;
  @ApiMoney({ example: 1240000 }) opening_mrr: number;
  @ApiMoney({ example: 37200, description: 'MRR lost to churn.' }) churned_mrr: number;
  @ApiMoney({ example: 2000, description: 'MRR lost to contraction.' }) contraction_mrr: number;
  @ApiMoney({ example: 4500 }) expansion_mrr: number;
  @ApiMoney({ example: 6200 }) reactivation_mrr: number;
  @ApiProperty({
    example: '0.0316',
    maxLength: 12,
    pattern: RATE_PATTERN,
    description: '(churned_mrr + contraction_mrr) / opening_mrr, 4 decimals.',
  })
  gross_mrr_churn_rate: string;
  @ApiProperty({
    example: '0.0229',
    maxLength: 12,
    pattern: RATE_PATTERN,
    description:
      '(churned + contraction − expansion − reactivation) / opening_mrr, 4 decimals; negative when expansion wins.',
  })
  net_mrr_churn_rate: string;
  @ApiInteger({ example: 204 }) closing_subscribers: number;
  @ApiMoney({ example: 1267300 }) closing_mrr: number;
}

@ApiSchema({ description: 'Subscribers and MRR churned, per currency over the period and per month.' })
export class ChurnReportDto {
  @ApiMonth({ example: '2026-01' }) from: string;
  @ApiMonth({ example: '2026-12' }) to: string;
  @ApiProperty({ type: [ChurnRowDto], description: 'Per currency, the whole period (month null).' })
  totals: ChurnRowDto[];
  @ApiProperty({ type: [ChurnRowDto], description: 'Per currency and month.' }) months: ChurnRowDto[];
}
