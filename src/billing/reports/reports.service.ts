import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { endOfDay } from '../../common/dates';
import { ApiError } from '../../common/errors/api-error';
import type { AgingReportDto, AgingSubscriberDto, AgingTotalDto } from './dto/aging-report.dto';
import type { ChurnReportDto, MrrReportDto } from './dto/mrr-report.dto';
import {
  type AgingQueryDto,
  MAX_REPORT_MONTHS,
  type ReportPeriodQueryDto,
  type RevenueQueryDto,
} from './dto/report-query.dto';
import type { RevenueReportDto } from './dto/revenue-report.dto';
import { type AgingSumRow, AgingRepository } from './aging.repository';
import { churnOf, monthIndex, monthLabel, mrrSeries } from './mrr-series';
import { MrrRepository } from './mrr.repository';
import { RevenueRepository } from './revenue.repository';

/**
 * The reports (docs/reports.md): MRR and its movements, churn, invoiced revenue and receivables aging, each one
 * set-based statement over billing's tables and provisioning's services, plans and plan history.
 */
@Injectable()
export class ReportsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly mrrRows: MrrRepository,
    private readonly revenueRows: RevenueRepository,
    private readonly agingRows: AgingRepository,
  ) {}

  async mrr(tenantId: string, query: ReportPeriodQueryDto): Promise<MrrReportDto> {
    const [first, last] = months(query);
    const rows = await this.mrrRows.movements(this.dataSource.manager, tenantId, first, last);
    return { from: monthLabel(first), to: monthLabel(last), ...mrrSeries(rows, first, last) };
  }

  async churn(tenantId: string, query: ReportPeriodQueryDto): Promise<ChurnReportDto> {
    const report = await this.mrr(tenantId, query);
    const byCurrency = new Map<string, typeof report.months>();
    for (const month of report.months) {
      byCurrency.set(month.currency, [...(byCurrency.get(month.currency) ?? []), month]);
    }
    return {
      from: report.from,
      to: report.to,
      totals: [...byCurrency].map(([currency, run]) => churnOf(currency, null, run)),
      months: report.months.map((month) => churnOf(month.currency, month.month, [month])),
    };
  }

  async revenue(tenantId: string, query: RevenueQueryDto): Promise<RevenueReportDto> {
    months(query);
    const start = new Date(`${query.from}T00:00:00.000Z`);
    const rows = await this.revenueRows.sums(
      this.dataSource.manager,
      tenantId,
      start,
      endOfDay(query.to),
      query.group_by,
    );
    return {
      from: query.from,
      to: query.to,
      group_by: query.group_by,
      basis: 'invoiced',
      rows: rows.map((row) => {
        const invoicedNet = Number(row.invoiced_net ?? 0);
        const creditedNet = Number(row.credited_net ?? 0);
        const invoicedTax = Number(row.invoiced_tax ?? 0);
        const creditedTax = Number(row.credited_tax ?? 0);
        return {
          currency: row.currency,
          month: row.month,
          plan_id: row.plan_id,
          plan_name: row.plan_name,
          invoiced_net: invoicedNet,
          credited_net: creditedNet,
          net_revenue: invoicedNet - creditedNet,
          invoiced_tax: invoicedTax,
          credited_tax: creditedTax,
          net_tax: invoicedTax - creditedTax,
          invoices: row.invoices,
          credit_notes: row.credit_notes,
        };
      }),
    };
  }

  async aging(tenantId: string, query: AgingQueryDto): Promise<AgingReportDto> {
    const limit = query.limit;
    const rows = await this.agingRows.sums(
      this.dataSource.manager,
      tenantId,
      endOfDay(query.as_of),
      query.as_of,
      query.starting_after ?? '',
      limit + 1,
    );
    const totals: AgingTotalDto[] = rows
      .filter((row) => row.kind === 'total')
      .map((row) => ({ ...buckets(row), subscribers: row.subscribers }));
    const subscriberRows = rows.filter((row) => row.kind === 'subscriber');
    const ids = [...new Set(subscriberRows.map((row) => row.subscriber_id as string))];
    const page = new Set(ids.slice(0, limit));
    const subscribers: AgingSubscriberDto[] = subscriberRows
      .filter((row) => page.has(row.subscriber_id as string))
      .map((row) => ({ subscriber_id: row.subscriber_id as string, ...buckets(row) }));
    const hasMore = ids.length > limit;
    return {
      as_of: query.as_of,
      totals,
      subscribers,
      has_more: hasMore,
      next_cursor: hasMore ? ids[limit - 1] : null,
    };
  }
}

/** The window's first and last month indexes; refuses to before from and windows past MAX_REPORT_MONTHS. */
function months(query: ReportPeriodQueryDto): [number, number] {
  if (query.from > query.to) {
    throw new ApiError('invalid_query', `to (${query.to}) is before from (${query.from}).`, 'to');
  }
  const first = monthIndex(query.from);
  const last = monthIndex(query.to);
  if (last - first + 1 > MAX_REPORT_MONTHS) {
    throw new ApiError(
      'invalid_query',
      `A report covers at most ${MAX_REPORT_MONTHS} calendar months.`,
      'to',
    );
  }
  return [first, last];
}

function buckets(row: AgingSumRow) {
  const totalOpen = Number(row.total_open ?? 0);
  const unapplied = Number(row.unapplied_credit ?? 0);
  return {
    currency: row.currency,
    current: Number(row.current),
    days_1_30: Number(row.days_1_30),
    days_31_60: Number(row.days_31_60),
    days_61_90: Number(row.days_61_90),
    days_over_90: Number(row.days_over_90),
    total_open: totalOpen,
    unapplied_credit: unapplied,
    net_receivable: totalOpen - unapplied,
    invoices: row.invoices,
  };
}
