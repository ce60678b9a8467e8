import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Query,
  Res,
  StreamableFile,
} from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { BillingDocuments } from '../documents/billing-documents';
import { ApiPdf } from '../documents/api-pdf';
import { pdfAnswer } from '../documents/pdf-response';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { Page } from '../../common/envelope/envelope';
import type { AuthContext } from '../../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { CreditNotesService } from './credit-notes.service';
import { CreateCreditNoteDto, CreditNoteDto, ListCreditNotesQueryDto } from './dto/credit-note.dto';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1')
export class CreditNotesController {
  constructor(
    private readonly notes: CreditNotesService,
    private readonly documents: BillingDocuments,
  ) {}

  @Post('invoices/:id/credit-notes')
  @HttpCode(201)
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      "Issues a credit note against a finalised invoice (open, partially paid or paid), numbered in the tenant's credit note series: some of its lines (`lines`, each whole or an amount of it) or an `amount` spread over its lines, tax included and taxed like the lines it reverses, at most what was invoiced less earlier credit notes (422 `credit_exceeds_invoice`). Its value is a credit transaction: it pays what the invoice still owes, and the rest is the subscriber's credit (auto-apply spends it on other invoices when the billing profile's auto_apply is on); with `refund: true` it replaces that much of `payment_id`'s payment of the invoice, which is refunded. Emits `credit_note.created` with the transactions' events. 404 `not_found` for an unknown invoice; 409 `invalid_state_transition` for a draft, void or written-off invoice. Take an idempotency key so a retry cannot credit twice.",
    summary: 'Credit an invoice (a credit note)',
  })
  @ApiEnvelope(CreditNoteDto, { status: 201 })
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'not_found',
    'invalid_reference',
    'invalid_state_transition',
    'credit_exceeds_invoice',
    'refund_exceeds_refundable',
  )
  @ApiExampleBody(CreateCreditNoteDto, { reason: 'Outage 3-5 December', amount: 1210 })
  async createCreditNote(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: CreateCreditNoteDto,
  ): Promise<CreditNoteDto> {
    return this.notes.create(auth, id, dto);
  }

  @Get('credit-notes')
  @RequireScopes('billing:read')
  @ApiOperation({
    description: 'Lists credit notes, newest first, filtered by invoice or subscriber, paginated by cursor.',
    summary: 'List credit notes',
  })
  @ApiEnvelope(CreditNoteDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listCreditNotes(
    @Auth() auth: AuthContext,
    @Query() query: ListCreditNotesQueryDto,
  ): Promise<Page<CreditNoteDto>> {
    return (await this.notes.list(auth.tenantId, query)).map((note) => CreditNoteDto.from(note));
  }

  @Get('credit-notes/:id')
  @RequireScopes('billing:read')
  @ApiOperation({
    description: 'Returns one credit note. 404 `not_found` when the tenant has none with this id.',
    summary: 'Get a credit note',
  })
  @ApiEnvelope(CreditNoteDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getCreditNote(@Auth() auth: AuthContext, @Param('id') id: string): Promise<CreditNoteDto> {
    return CreditNoteDto.from(await this.notes.getById(auth.tenantId, id));
  }

  @Get('credit-notes/:id/pdf')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'The credit note as a PDF document, with the invoice it corrects and its reason; the same credit note gives the same bytes (strong ETag; If-None-Match answers 304). 404 `not_found` for an unknown credit note.',
    summary: 'Get a credit note as a PDF',
  })
  @ApiPdf()
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getCreditNotePdf(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<StreamableFile> {
    return pdfAnswer(ifNoneMatch, res, await this.documents.creditNotePdf(auth.tenantId, id));
  }
}
