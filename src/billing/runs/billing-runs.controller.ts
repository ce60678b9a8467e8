import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import { BillingRunsService } from './billing-runs.service';
import { BillingRunDto, CreateBillingRunDto, ListBillingRunsQueryDto } from './dto/billing-run.dto';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/billing-runs')
export class BillingRunsController {
  constructor(private readonly runs: BillingRunsService) {}

  @Post()
  @HttpCode(202)
  @RequireScopes('billing:write')
  @ApiOperation({
    summary: 'Start a bill run',
    description:
      'Invoices every subscriber whose billing day is as_of for the period starting that day, with proration of the previous period; carried out in the background (poll the run). A (subscriber, period) is billed once, whatever runs repeat or overlap.',
  })
  @ApiEnvelope(BillingRunDto, { status: 202 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS)
  @ApiExampleBody(CreateBillingRunDto, { as_of: '2026-12-01', dry_run: true })
  async createBillingRun(
    @Auth() auth: AuthContext,
    @Body() dto: CreateBillingRunDto,
  ): Promise<BillingRunDto> {
    return this.runs.start(auth, dto);
  }

  @Get()
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "Lists the tenant's bill runs, newest first, with their status and totals, paginated by cursor. Read-only.",
    summary: 'List bill runs, newest first',
  })
  @ApiEnvelope(BillingRunDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listBillingRuns(
    @Auth() auth: AuthContext,
    @Query() query: ListBillingRunsQueryDto,
  ): Promise<Page<BillingRunDto>> {
    return (await this.runs.list(auth.tenantId, query)).map((run) => BillingRunDto.from(run));
  }

  @Get(':id')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Returns one bill run: its status while the worker bills (queued, running, completed, failed), the subscribers billed, the invoices and credits created, and per-subscriber errors. Poll it after `POST /billing-runs`, or listen for `billing_run.completed`.',
    summary: 'Get a bill run with its progress and totals',
  })
  @ApiEnvelope(BillingRunDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getBillingRun(@Auth() auth: AuthContext, @Param('id') id: string): Promise<BillingRunDto> {
    return BillingRunDto.from(await this.runs.get(auth.tenantId, id));
  }
}
