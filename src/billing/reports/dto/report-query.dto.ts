import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { ApiInteger } from '../../../common/swagger/api-types';
import { IsDateOnly } from '../../../common/validation/is-date-only';
import { Optional } from '../../../common/validation/optional';

/** The longest window a report covers, in calendar months (from's month to to's month, both counted). */
export const MAX_REPORT_MONTHS = 36;

/** A window of UTC days; the month reports (MRR, churn) cover the calendar months the days fall in. */
export class ReportPeriodQueryDto {
  @ApiProperty({
    example: '2026-01-01',
    description: 'First day (UTC, YYYY-MM-DD); MRR and churn start at its month.',
  })
  @IsDateOnly()
  from: string;

  @ApiProperty({
    example: '2026-12-31',
    description: `Last day, inclusive (UTC, YYYY-MM-DD), not before \`from\`; at most ${MAX_REPORT_MONTHS} calendar months from \`from\`'s month.`,
  })
  @IsDateOnly()
  to: string;
}

export const REVENUE_GROUPS = ['month', 'plan'] as const;
export type RevenueGroup = (typeof REVENUE_GROUPS)[number];

export class RevenueQueryDto extends ReportPeriodQueryDto {
  @ApiProperty({
    enum: REVENUE_GROUPS,
    example: 'month',
    description: 'One row per currency and calendar month (UTC) of issue, or per currency and plan.',
  })
  @IsIn(REVENUE_GROUPS)
  group_by: RevenueGroup;
}

export class AgingQueryDto {
  @ApiProperty({
    example: '2026-12-31',
    description: 'The day (UTC, YYYY-MM-DD) the receivables are aged at: what was open at its end.',
  })
  @IsDateOnly()
  as_of: string;

  @ApiInteger({
    required: false,
    minimum: 1,
    maximum: 1000,
    default: 100,
    description: 'How many subscriber rows to answer (the totals always cover every subscriber).',
  })
  @Optional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit: number = 100;

  @ApiPropertyOptional({
    example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The `next_cursor` of the previous answer: subscribers after this id.',
  })
  @Optional()
  @IsString()
  @MaxLength(64)
  starting_after?: string;
}
