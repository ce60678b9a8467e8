import { Controller, Get, Headers, Param, Query, Res, StreamableFile } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../../common/swagger/api-envelope';
import { ApiPdf } from '../documents/api-pdf';
import { pdfAnswer } from '../documents/pdf-response';
import { StatementDto, StatementQueryDto } from './statement.dto';
import { StatementsService } from './statements.service';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/subscribers/:id')
export class StatementsController {
  constructor(private readonly statements: StatementsService) {}

  @Get('statement')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "A subscriber's statement of account in one currency: the balance before `from`, every ledger entry from `from` to `to` (UTC days, inclusive) in order — invoices, payments, credits, credit notes, debits, refunds, write-offs and voids, each named by its document number or reference — with the running balance, and the closing balance (the ledger's balance at the end of `to`). At most 5,000 entries (422 on `from` beyond). 404 `not_found` for an unknown subscriber.",
    summary: "A subscriber's statement of account",
  })
  @ApiEnvelope(StatementDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_query')
  async getSubscriberStatement(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: StatementQueryDto,
  ): Promise<StatementDto> {
    return this.statements.statement(auth.tenantId, id, query);
  }

  @Get('statement/pdf')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'The statement as a PDF document (the same figures as GET /subscribers/{id}/statement with the same query), with a strong ETag of its bytes; If-None-Match answers 304.',
    summary: "A subscriber's statement as a PDF",
  })
  @ApiPdf()
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_query')
  async getSubscriberStatementPdf(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: StatementQueryDto,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<StreamableFile> {
    return pdfAnswer(ifNoneMatch, res, await this.statements.statementPdf(auth.tenantId, id, query));
  }
}
