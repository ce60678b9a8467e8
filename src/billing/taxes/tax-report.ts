import { Controller, Get, Injectable, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProperty, ApiSchema, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { daysBetween, endOfDay } from '../../common/dates';
import { ApiError } from '../../common/errors/api-error';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../../common/swagger/api-envelope';
import { ApiInteger, ApiMoney } from '../../common/swagger/api-types';
import { IsDateOnly } from '../../common/validation/is-date-only';
import { TaxReportRepository } from './tax-report.repository';

/** The longest period one tax report covers (a tax year and a bit). */
export const MAX_TAX_REPORT_DAYS = 400;

export class TaxReportQueryDto {
  @ApiProperty({ example: '2026-10-01', description: 'First day (UTC, YYYY-MM-DD) of the period.' })
  @IsDateOnly()
  from: string;

  @ApiProperty({
    example: '2026-12-31',
    description: 'Last day of the period, inclusive (at most 400 days).',
  })
  @IsDateOnly()
  to: string;
}

@ApiSchema({
  description: 'One rate over the period: what it taxed and the tax, invoices less credit notes.',
})
export class TaxReportRowDto {
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ example: 'txr_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) tax_rate_id: string;
  @ApiProperty({ example: 'VAT' }) name: string;
  @ApiProperty({ example: '21.0000' }) percentage: string;
  @ApiMoney({ example: 100000, signed: true, description: 'Taxable amount on invoices less credit notes.' })
  taxable_amount: number;
  @ApiMoney({ example: 21000, signed: true, description: 'Tax on invoices less credit notes.' })
  tax_amount: number;
  @ApiMoney({ example: 21630, description: 'Tax on the invoices of the period.' }) invoiced_tax: number;
  @ApiMoney({ example: 630, description: 'Tax the credit notes of the period took back.' })
  credited_tax: number;
  @ApiInteger({ example: 12, description: 'Invoices of the period taxed at it.' }) invoices: number;
  @ApiInteger({ example: 1, description: 'Credit notes of the period taxed at it.' }) credit_notes: number;
}

@ApiSchema({ description: 'The sums a tax return asks for, per currency and rate, over a period.' })
export class TaxReportDto {
  @ApiProperty({ example: '2026-10-01' }) from: string;
  @ApiProperty({ example: '2026-12-31' }) to: string;
  @ApiProperty({ type: [TaxReportRowDto] }) rows: TaxReportRowDto[];
}

/**
 * The tax report (docs/billing.md, "Taxes"): per currency and rate, what the invoices issued in the period (by the
 * day they were finalised, UTC; voided ones left out) taxed, less what the credit notes issued in it took back. The
 * rows are sums of the documents' own tax summaries, so they agree with the documents to the minor unit.
 */
@Injectable()
export class TaxReportService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly rows: TaxReportRepository,
  ) {}

  async report(tenantId: string, query: TaxReportQueryDto): Promise<TaxReportDto> {
    if (query.from > query.to) {
      throw new ApiError('invalid_query', `from (${query.from}) is after to (${query.to}).`, 'from');
    }
    if (daysBetween(query.from, query.to) + 1 > MAX_TAX_REPORT_DAYS) {
      throw new ApiError('invalid_query', `A report covers at most ${MAX_TAX_REPORT_DAYS} days.`, 'to');
    }
    const start = new Date(`${query.from}T00:00:00.000Z`);
    const end = endOfDay(query.to);
    const rows = await this.rows.sums(this.dataSource.manager, tenantId, start, end);
    return {
      from: query.from,
      to: query.to,
      rows: rows.map((row) => ({
        currency: row.currency,
        tax_rate_id: row.tax_rate_id,
        name: row.name,
        percentage: row.percentage,
        taxable_amount: Number(row.taxable),
        tax_amount: Number(row.tax),
        invoiced_tax: Number(row.invoiced_tax),
        credited_tax: Number(row.credited_tax),
        invoices: row.invoices,
        credit_notes: row.credit_notes,
      })),
    };
  }
}

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/reports')
export class TaxReportController {
  constructor(private readonly reports: TaxReportService) {}

  @Get('tax')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Sums, per currency and tax rate, the taxable amounts and tax of the invoices issued from `from` to `to` (UTC days, inclusive; voided invoices left out) less those of the credit notes issued then: the figures of a tax return. At most 400 days.',
    summary: 'Tax report for filing',
  })
  @ApiEnvelope(TaxReportDto)
  @ApiErrors(...AUTH_ERRORS, 'invalid_query')
  async getTaxReport(@Auth() auth: AuthContext, @Query() query: TaxReportQueryDto): Promise<TaxReportDto> {
    return this.reports.report(auth.tenantId, query);
  }
}
