import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../../common/swagger/api-envelope';
import { AgingReportDto } from './dto/aging-report.dto';
import { ChurnReportDto, MrrReportDto } from './dto/mrr-report.dto';
import { AgingQueryDto, ReportPeriodQueryDto, RevenueQueryDto } from './dto/report-query.dto';
import { RevenueReportDto } from './dto/revenue-report.dto';
import { ReportsService } from './reports.service';

/** MRR, churn, revenue and receivables aging (docs/reports.md). */
@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/reports')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  @Get('mrr')
  @RequireScopes('billing:read')
  @ApiOperation({
    summary: 'Monthly recurring revenue and its movements',
    description:
      "Per currency and calendar month (UTC) from `from`'s month to `to`'s (at most 36): the MRR at the month's end (the monthly price of the plans of the services active then, tax as the plans are priced) and the month's movements per subscriber (new, expansion, reactivation, contraction, churned), also per plan. Opening + new + expansion + reactivation − contraction − churned = closing.",
  })
  @ApiEnvelope(MrrReportDto)
  @ApiErrors(...AUTH_ERRORS, 'invalid_query')
  getMrrReport(@Auth() auth: AuthContext, @Query() query: ReportPeriodQueryDto): Promise<MrrReportDto> {
    return this.reports.mrr(auth.tenantId, query);
  }

  @Get('churn')
  @RequireScopes('billing:read')
  @ApiOperation({
    summary: 'Subscriber and MRR churn',
    description:
      "Per currency, over the months from `from`'s to `to`'s (at most 36) and per month: the subscribers whose MRR fell to 0 against those with MRR at the start, and the MRR lost to churn and contraction (gross and net MRR churn rates).",
  })
  @ApiEnvelope(ChurnReportDto)
  @ApiErrors(...AUTH_ERRORS, 'invalid_query')
  getChurnReport(@Auth() auth: AuthContext, @Query() query: ReportPeriodQueryDto): Promise<ChurnReportDto> {
    return this.reports.churn(auth.tenantId, query);
  }

  @Get('revenue')
  @RequireScopes('billing:read')
  @ApiOperation({
    summary: 'Invoiced revenue by month or plan',
    description:
      'Invoiced (accrual) revenue from `from` to `to` (UTC days, inclusive; at most 36 calendar months): the invoices issued then (voided ones left out) less the credit notes issued then, without tax, the tax apart; per currency and month of issue, or per currency and plan of the lines.',
  })
  @ApiEnvelope(RevenueReportDto)
  @ApiErrors(...AUTH_ERRORS, 'invalid_query')
  getRevenueReport(@Auth() auth: AuthContext, @Query() query: RevenueQueryDto): Promise<RevenueReportDto> {
    return this.reports.revenue(auth.tenantId, query);
  }

  @Get('receivables-aging')
  @RequireScopes('billing:read')
  @ApiOperation({
    summary: 'Receivables aging',
    description:
      'What the invoices still asked at the end of `as_of` (UTC), by days past due (current, 1–30, 31–60, 61–90, over 90), and the payments and credits not applied then, per currency in total and per subscriber (by id, `limit` subscribers after `starting_after`).',
  })
  @ApiEnvelope(AgingReportDto)
  @ApiErrors(...AUTH_ERRORS, 'invalid_query')
  getReceivablesAging(@Auth() auth: AuthContext, @Query() query: AgingQueryDto): Promise<AgingReportDto> {
    return this.reports.aging(auth.tenantId, query);
  }
}
