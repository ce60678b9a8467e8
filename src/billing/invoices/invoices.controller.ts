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
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { BillingDocuments } from '../documents/billing-documents';
import { ApiPdf } from '../documents/api-pdf';
import { pdfAnswer } from '../documents/pdf-response';
import { Clock } from '../../common/clock';
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
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import {
  CreateInvoiceDto,
  ListInvoicesQueryDto,
  VoidInvoiceDto,
  WriteOffInvoiceDto,
} from './dto/invoice.dto';
import { InvoiceDto } from './dto/invoice-response.dto';
import { InvoicesService } from './invoices.service';
import { HonoursIfMatch } from '../../common/http/honours-if-match';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/invoices')
export class InvoicesController {
  constructor(
    private readonly invoices: InvoicesService,
    private readonly documents: BillingDocuments,
    private readonly clock: Clock,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      "Creates an invoice from its lines: open (payable, in the ledger; `invoice.created` and `invoice.finalized`, and `invoice.paid` when the total is 0) or, with `draft: true`, a draft you finalize later (`invoice.created` only). 422 `invalid_reference` when the subscriber does not exist, 422 `currency_mismatch` when `currency` is not the one of the subscriber's billing profile (or the tenant's default profile); take an idempotency key so a retry cannot bill twice.",
    summary: 'Create an invoice (open, or draft when asked)',
  })
  @ApiEnvelope(InvoiceDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS, 'invalid_reference', 'currency_mismatch')
  @ApiExampleBody(CreateInvoiceDto, {
    subscriber_id: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    currency: 'USD',
    due_date: '2026-12-15',
    lines: [{ description: 'Fiber 500 — November', quantity: 1, unit_amount: 4999 }],
  })
  async createInvoice(@Auth() auth: AuthContext, @Body() dto: CreateInvoiceDto): Promise<InvoiceDto> {
    return this.invoices.create(auth, dto);
  }

  @Get()
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Lists invoices, newest first, filtered by subscriber, status or `overdue` (open and past its due date today), paginated by cursor. Read-only.',
    summary: 'List invoices, newest first',
  })
  @ApiEnvelope(InvoiceDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listInvoices(
    @Auth() auth: AuthContext,
    @Query() query: ListInvoicesQueryDto,
  ): Promise<Page<InvoiceDto>> {
    const today = this.clock.today();
    return (await this.invoices.list(auth.tenantId, query)).map((invoice) => InvoiceDto.from(invoice, today));
  }

  @Get(':id')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Returns one invoice with its lines, the allocations that paid it, and its ETag. 404 `not_found` when the tenant has no invoice with this id.',
    summary: 'Get an invoice with its allocations',
  })
  @ApiEnvelope(InvoiceDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getInvoice(@Auth() auth: AuthContext, @Param('id') id: string): Promise<InvoiceDto> {
    const { invoice, allocations } = await this.invoices.getById(auth.tenantId, id);
    return InvoiceDto.from(invoice, this.clock.today(), allocations);
  }

  @Get(':id/pdf')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "The invoice as a PDF document: the issuer (GET /tenant/settings), the customer, number, dates, lines with their rates, the tax summary, totals, amount due and payment instructions, amounts written for the currency and the tenant's locale. The same invoice gives the same bytes: the strong ETag is their hash, and If-None-Match answers 304. 404 `not_found` for an unknown invoice; 409 `invalid_state_transition` for a draft (it has no number yet).",
    summary: 'Get an invoice as a PDF',
  })
  @ApiPdf()
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_state_transition')
  async getInvoicePdf(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<StreamableFile> {
    return pdfAnswer(ifNoneMatch, res, await this.documents.invoicePdf(auth.tenantId, id));
  }

  @Post(':id/finalize')
  @HttpCode(200)
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      "Issues a draft invoice: it becomes open (payable), enters the subscriber's ledger, and `invoice.finalized` is emitted (with `invoice.paid` when its total is 0). 409 `invalid_state_transition` when it is not a draft; honours If-Match.",
    summary: 'Open a draft invoice: it becomes payable and enters the ledger',
  })
  @ApiEnvelope(InvoiceDto)
  @ApiErrors(...AUTH_ERRORS, ...IDEMPOTENCY_ERRORS, 'not_found', 'invalid_state_transition')
  @HonoursIfMatch()
  async finalizeInvoice(@Auth() auth: AuthContext, @Param('id') id: string): Promise<InvoiceDto> {
    return this.invoices.finalize(auth, id);
  }

  @Post(':id/void')
  @HttpCode(200)
  @RequireScopes('billing:write')
  @ApiOperation({
    summary: 'Void a draft or open invoice that has no allocations',
    description:
      'The body is optional; its `reason` is kept on the invoice (`void_reason`) and in `invoice.voided`.',
  })
  @ApiEnvelope(InvoiceDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS, 'not_found', 'invalid_state_transition')
  @ApiBody({
    type: VoidInvoiceDto,
    required: false,
    examples: { default: { summary: 'A first call on a fresh server', value: { reason: 'wrong currency' } } },
  })
  @HonoursIfMatch()
  async voidInvoice(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: VoidInvoiceDto,
  ): Promise<InvoiceDto> {
    return this.invoices.void(auth, id, dto.reason ?? null);
  }

  @Post(':id/write-off')
  @HttpCode(200)
  @RequireScopes('billing:write')
  @ApiOperation({
    summary: 'Write off what an open or partially paid invoice still asks',
    description:
      "Closes an uncollectable debt: the invoice becomes `written_off` (no longer payable nor overdue), keeps the reason, when, and `amount_written_off` (the amount due then), a `write_off` ledger entry lowers the subscriber's balance by that amount, and `invoice.written_off` is emitted. 409 `invalid_state_transition` for a draft, paid, void or written-off invoice; honours If-Match and an idempotency key.",
  })
  @ApiEnvelope(InvoiceDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS, 'not_found', 'invalid_state_transition')
  @ApiExampleBody(WriteOffInvoiceDto, { reason: 'customer moved away; collection agency gave up' })
  @HonoursIfMatch()
  async writeOffInvoice(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: WriteOffInvoiceDto,
  ): Promise<InvoiceDto> {
    return this.invoices.writeOff(auth, id, dto.reason);
  }
}
