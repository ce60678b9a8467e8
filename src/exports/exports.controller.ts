import { Controller, Get, Query, StreamableFile } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../common/request-context';
import { ApiErrors, AUTH_ERRORS } from '../common/swagger/api-envelope';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { ApiCsv } from './api-csv';
import { INVOICE_COLUMNS, LEDGER_COLUMNS, SUBSCRIBER_COLUMNS, TRANSACTION_COLUMNS } from './columns';
import {
  ExportInvoicesQueryDto,
  ExportLedgerQueryDto,
  ExportSubscribersQueryDto,
  ExportTransactionsQueryDto,
} from './dto/export-query.dto';
import { ExportsService } from './exports.service';

const headers = (columns: readonly { header: string }[]) => columns.map((column) => column.header);

/** What every export says of its cells (docs/exports.md). */
const CELLS =
  "Money is integer minor units beside its `currency` column; times ISO 8601 (UTC); null is an empty field; a text cell starting with `=`, `+`, `-`, `@`, tab or CR is prefixed with `'` (formula injection). Every row the filters match, newest first, streamed; `limit` and `starting_after` are not parameters here (400 `invalid_query`).";

@ApiTags('Exports')
@ApiBearerAuth()
@Controller('api/v1/exports')
export class ExportsController {
  constructor(private readonly exports: ExportsService) {}

  @Get('subscribers.csv')
  @RequireScopes('subscribers:read')
  @ApiOperation({
    description: `Every subscriber GET /subscribers would list with the same filters, as CSV. ${CELLS}`,
    summary: 'Export subscribers as CSV',
  })
  @ApiCsv(headers(SUBSCRIBER_COLUMNS))
  @ApiErrors(...AUTH_ERRORS, 'invalid_query')
  exportSubscribers(
    @Auth() auth: AuthContext,
    @Query() query: ExportSubscribersQueryDto,
  ): Promise<StreamableFile> {
    return this.exports.subscribersCsv(auth.tenantId, query);
  }

  @Get('invoices.csv')
  @RequireScopes('billing:read')
  @ApiOperation({
    description: `Every invoice GET /invoices would list with the same filters, as CSV (one record per invoice; its lines are not exported). ${CELLS}`,
    summary: 'Export invoices as CSV',
  })
  @ApiCsv(headers(INVOICE_COLUMNS))
  @ApiErrors(...AUTH_ERRORS, 'invalid_query')
  exportInvoices(@Auth() auth: AuthContext, @Query() query: ExportInvoicesQueryDto): Promise<StreamableFile> {
    return this.exports.invoicesCsv(auth.tenantId, query);
  }

  @Get('transactions.csv')
  @RequireScopes('billing:read')
  @ApiOperation({
    description: `Every transaction GET /transactions would list with the same filters, as CSV. ${CELLS}`,
    summary: 'Export transactions as CSV',
  })
  @ApiCsv(headers(TRANSACTION_COLUMNS))
  @ApiErrors(...AUTH_ERRORS, 'invalid_query')
  exportTransactions(
    @Auth() auth: AuthContext,
    @Query() query: ExportTransactionsQueryDto,
  ): Promise<StreamableFile> {
    return this.exports.transactionsCsv(auth.tenantId, query);
  }

  @Get('ledger.csv')
  @RequireScopes('billing:read')
  @ApiOperation({
    description: `One subscriber's ledger (GET /subscribers/{id}/ledger's entries, with their running balance), as CSV. 404 \`not_found\` for an unknown subscriber. ${CELLS}`,
    summary: "Export a subscriber's ledger as CSV",
  })
  @ApiCsv(headers(LEDGER_COLUMNS))
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'not_found')
  exportLedger(@Auth() auth: AuthContext, @Query() query: ExportLedgerQueryDto): Promise<StreamableFile> {
    return this.exports.ledgerCsv(auth.tenantId, query);
  }
}
