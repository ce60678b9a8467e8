import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';
import { ApiMonth } from './mrr-report.dto';
import { REVENUE_GROUPS, type RevenueGroup } from './report-query.dto';

@ApiSchema({
  description: 'Invoiced revenue of one currency and month or plan, net of credit notes, tax apart.',
})
export class RevenueRowDto {
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiMonth({ nullable: true, description: 'group_by=month: the month of issue.' })
  month: string | null;
  @ApiProperty({
    example: 'pln_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description:
      'group_by=plan: the plan the lines price; null for lines of no plan (one-off charges, fees).',
  })
  plan_id: string | null;
  @ApiProperty({ example: 'Fiber 500', nullable: true, type: String, maxLength: 200 }) plan_name:
    string | null;
  @ApiMoney({ example: 620000, signed: true, description: 'Σ of the invoices’ lines without tax.' })
  invoiced_net: number;
  @ApiMoney({ example: 6200, signed: true, description: 'Σ of the credit notes’ lines without tax.' })
  credited_net: number;
  @ApiMoney({ example: 613800, signed: true, description: 'invoiced_net − credited_net: the revenue.' })
  net_revenue: number;
  @ApiMoney({ example: 130200, signed: true }) invoiced_tax: number;
  @ApiMoney({ example: 1302, signed: true }) credited_tax: number;
  @ApiMoney({ example: 128898, signed: true, description: 'invoiced_tax − credited_tax (not revenue).' })
  net_tax: number;
  @ApiInteger({ example: 100 }) invoices: number;
  @ApiInteger({ example: 1 }) credit_notes: number;
}

@ApiSchema({ description: 'Revenue on the invoiced (accrual) basis, per currency and month or plan.' })
export class RevenueReportDto {
  @ApiProperty({ example: '2026-01-01' }) from: string;
  @ApiProperty({ example: '2026-12-31' }) to: string;
  @ApiProperty({
    enum: REVENUE_GROUPS,
    example: 'month',
    description: 'What each row sums: the month of issue (month) or the plan the lines price (plan).',
  })
  group_by: RevenueGroup;
  @ApiProperty({
    enum: ['invoiced'],
    example: 'invoiced',
    description:
      'Invoices by the day they were issued and credit notes by theirs (accrual), not cash received.',
  })
  basis: 'invoiced';
  @ApiProperty({ type: [RevenueRowDto] }) rows: RevenueRowDto[];
}
